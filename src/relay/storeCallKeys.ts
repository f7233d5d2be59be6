// The calls' idempotency keys in the relay store (relay/relayStore.ts; docs/architecture.md "Site tools: what a
// page supplies"): a key claimed for a new task, settled by what became of it, forgotten after a day.

import type Database from 'better-sqlite3';
import { type KeyRecord, type KeyRow, keyRecordOf } from './storeRecords.ts';

/** How long the relay remembers an idempotency key. */
const keyLifetimeMs = 24 * 3_600_000;

export class CallKeyTable {
  constructor(
    private readonly db: Database.Database,
    /** The store's prepared statements, shared. */
    private readonly sql: (text: string) => Database.Statement,
  ) {}

  /**
   * Claims an agent's idempotency key for a new task; returns the record of the earlier call instead when the
   * key is taken (running, done or unknown). Keys are forgotten after a day.
   */
  claim(agentId: string, key: string, taskId: string, callHash: string): KeyRecord | undefined {
    const claim = this.db.transaction(() => {
      this.sql('delete from call_keys where updated_at < ?').run(Date.now() - keyLifetimeMs);
      const row = this.sql(
        'select task_id, state, outcome_json, call_hash from call_keys where agent_id = ? and key = ?',
      ).get(agentId, key) as KeyRow | undefined;
      if (row) return keyRecordOf(row);
      this.sql(
        "insert into call_keys (agent_id, key, task_id, state, outcome_json, updated_at, call_hash) values (?, ?, ?, 'running', '', ?, ?)",
      ).run(agentId, key, taskId, Date.now(), callHash);
      return undefined;
    });
    // Immediate, as every transaction of the store (relay/relayStore.ts revokeExtension says why).
    return claim.immediate();
  }

  /** What became of a keyed task: `free` forgets the key (nothing ran, or the page said it failed). */
  settle(taskId: string, state: 'done' | 'unknown' | 'free', detail: string): void {
    if (state === 'free') {
      this.sql('delete from call_keys where task_id = ?').run(taskId);
      return;
    }
    this.sql('update call_keys set state = ?, outcome_json = ?, updated_at = ? where task_id = ?').run(
      state,
      detail,
      Date.now(),
      taskId,
    );
  }

  /** The key record of a task, if the agent gave one. */
  ofTask(taskId: string): KeyRecord | undefined {
    const row = this.sql(
      'select task_id, state, outcome_json, call_hash from call_keys where task_id = ?',
    ).get(taskId) as KeyRow | undefined;
    return row ? keyRecordOf(row) : undefined;
  }
}
