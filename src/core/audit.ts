// The shape of one audit-log record (docs/architecture.md "Audit records") and the sink every front end writes to.

export interface AuditEntry {
  readonly time: string;
  /** The tabward process that wrote the record: one agent session, whose steps can be saved as a recipe. */
  readonly session?: string;
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
  /** Where the page's document was loaded from, when it showed another address (history.replaceState). */
  readonly loadedFrom?: string;
  /** The element acted on, by role and the name the page showed at action time. */
  readonly element?: string;
  /** The elements acted on, by the ref the call gave, as selectors that find them again after a reload. */
  readonly targets?: Readonly<Record<string, AuditTarget>>;
  /** What else names the action: a recipe step, a site tool, the agent token that called. */
  readonly subject?: Readonly<Record<string, string | number>>;
  readonly rule?: string;
  readonly decision: 'allow' | 'ask' | 'block';
  readonly reason?: string;
  readonly approver?: string;
  readonly choice?: string;
  /** pending: the call ended while its question waits for the human (the same call made again joins it). */
  readonly outcome: 'ok' | 'error' | 'rejected' | 'skipped' | 'blocked' | 'pending';
  readonly error?: string;
  /** Requests the network backstop stopped while the call ran. */
  readonly blocked?: readonly string[];
  /** Requests the backstop held for a human while the call ran, and what they answered. */
  readonly held?: readonly string[];
  /**
   * What the choke point let out while the call ran that the audit names (writes into sensitive pages, requests to
   * other hosts after a sensitive read), with the answer each got: what left, not what was meant to.
   */
  readonly sent?: readonly string[];
  /**
   * Reads the call made after it acted, as part of the same call (the `snapshot` option): "take_snapshot of p2: ok",
   * or the error code and why it could not be read.
   */
  readonly followUps?: readonly string[];
  readonly durationMs: number;
}

/**
 * An element an action reached, as a recipe can find it again: a test id, an id that does not look generated, a
 * form field's name, or role and accessible name; each checked to match that element alone when it was acted on.
 */
export interface AuditTarget {
  /** Absent when no such selector exists (then `unreplayable` says why). */
  readonly selector?: string;
  readonly unreplayable?: string;
  /** The element's tag name (SELECT: a fill chose an option). */
  readonly tag?: string;
  /** A typed literal value that is a declared secret's: by the secret's name (the value never reaches the log). */
  readonly secret?: string;
  /** Why the action on it reads as destructive (its label, or where it sends), when it does. */
  readonly destructive?: string;
  /**
   * A request that may change state (not GET, HEAD, OPTIONS) the page issued while the action ran: "POST
   * origin/path". Issued, not sent: the choke point may have stopped it (the record's `blocked` and `sent` say what
   * became of it).
   */
  readonly issued?: string;
  /** What records written before 2026-12-07 called `issued`. */
  readonly sent?: string;
}

/** The key under which a key press without a ref records the element it reached. */
export const focusedTargetKey = '(focused)';

/**
 * Written when a call starts, before anything can fail or hang, so that a call cut short (tabward shut down or
 * killed mid-call) is still on record. Its completion record (an AuditEntry) carries the same `call` id.
 */
export interface AuditStart {
  readonly time: string;
  readonly session?: string;
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
