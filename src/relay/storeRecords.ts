// What the relay store hands out (relay/relayStore.ts): agents, paired browsers, and the record of a call an
// idempotency key names. Types and their row mapping only.

/**
 * What the relay knows about the call an idempotency key names: still running, done (its outcome kept, as
 * the agent was told it), or unknown (it reached the page and no answer came back).
 */
export interface KeyRecord {
  readonly taskId: string;
  /** What call the key was first given for (a hash of its site, tool and arguments; '' in older stores). */
  readonly callHash: string;
  readonly state: 'running' | 'done' | 'unknown';
  /** For `done`: what the agent got (a JSON CallOutcome); for `unknown`: why. */
  readonly detail: string;
}

/** A row of call_keys as SQLite returns it. */
export interface KeyRow {
  readonly task_id: string;
  readonly state: KeyRecord['state'];
  readonly outcome_json: string | null;
  readonly call_hash: string;
}

export function keyRecordOf(row: KeyRow): KeyRecord {
  return { taskId: row.task_id, state: row.state, detail: row.outcome_json ?? '', callHash: row.call_hash };
}

export interface AgentRecord {
  readonly id: string;
  readonly workspace: string;
  readonly name: string;
}

export interface ExtensionRecord {
  readonly id: string;
  readonly workspace: string;
}

/** A paired browser as `tabward relay browsers list` shows it. */
export interface BrowserListing extends ExtensionRecord {
  readonly createdAt: string;
  readonly revoked: boolean;
  readonly sharedSites: number;
}
