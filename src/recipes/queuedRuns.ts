// What `serve` needs of a queue of runs kept outside the process (src/queue/runQueue.ts, on Redis): add a run (or
// find the one an Idempotency-Key named), read it, wait for it, cancel it. The HTTP side (server.ts) knows only this.

import type { Recipe } from './recipeSchema.ts';
import type { RecipeResult, StepLog } from './runRecipe.ts';

export interface QueuedRequest {
  readonly confirm: boolean;
  readonly screenshot: boolean;
}

export type RunState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled' | 'unknown';

/** What `GET /runs/:id` tells of one run. */
export interface RunRecord {
  readonly id: string;
  readonly state: RunState;
  readonly confirm: boolean;
  /** How many times a worker started it (a read-only run may be started again). */
  readonly attempts: number;
  readonly steps: readonly StepLog[];
  readonly result?: RecipeResult;
  /** Why it ended outside the run itself (its worker died mid-run, it was cancelled while queued). */
  readonly reason?: string;
}

export interface QueuedRuns {
  submit(
    recipe: Recipe,
    request: QueuedRequest,
    idempotencyKey: string | undefined,
  ): Promise<{ id: string; existing: boolean }>;
  get(id: string): Promise<RunRecord | undefined>;
  /** Resolves once the run ended or the wait ran out, with what is known of it then. */
  wait(id: string, timeoutMs: number): Promise<RunRecord | undefined>;
  cancel(id: string): Promise<RunRecord | undefined>;
  counts(): Promise<{ queued: number; running: number }>;
}
