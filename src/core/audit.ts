// The shape of one audit-log record (DESIGN.md 3.6) and the sink every front end writes to.

export interface AuditEntry {
  readonly time: string;
  /** Pairs this record with the call's start record (absent on events recorded outside a call). */
  readonly call?: string;
  readonly frontEnd: string;
  readonly tool: string;
  readonly kind: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly mode: string;
  readonly tab?: string;
  readonly owner?: 'agent' | 'user';
  readonly url?: string;
  /** The element acted on, by role and the name the page showed at action time. */
  readonly element?: string;
  /** What else names the action: a recipe step, a site tool, the agent token that called. */
  readonly subject?: Readonly<Record<string, string | number>>;
  readonly rule?: string;
  readonly decision: 'allow' | 'ask' | 'block';
  readonly reason?: string;
  readonly approver?: string;
  readonly choice?: string;
  readonly outcome: 'ok' | 'error' | 'rejected' | 'skipped' | 'blocked';
  readonly error?: string;
  /** Requests the network backstop stopped while the call ran. */
  readonly blocked?: readonly string[];
  /** Requests the backstop held for a human while the call ran, and what they answered. */
  readonly held?: readonly string[];
  readonly durationMs: number;
}

/**
 * Written when a call starts, before anything can fail or hang, so that a call cut short (tabward shut down or
 * killed mid-call) is still on record. Its completion record (an AuditEntry) carries the same `call` id.
 */
export interface AuditStart {
  readonly time: string;
  readonly call: string;
  readonly frontEnd: string;
  readonly tool: string;
  readonly mode: string;
  readonly subject?: Readonly<Record<string, string | number>>;
  readonly outcome: 'started';
}

export interface AuditSink {
  record(entry: AuditEntry | AuditStart): void;
}
