// What decides when a recipe run may start: Slots (one browser of tabward's own) or an EndpointPool (a browser
// grid). Either admits a bounded number of runs, keeps a bounded queue, and turns a run away with a reason the
// HTTP API answers in one line.

/**
 * Why a run was turned away: `full` (the queue is full: 429), `waited` (no slot within the queue's wait: 503),
 * `down` (every browser endpoint is down: 503), `closed` (shutting down: 503).
 */
export type Refusal = 'full' | 'waited' | 'down' | 'closed';

export interface RefusalAnswer {
  readonly status: 429 | 503;
  readonly message: string;
  /** Seconds after which a retry may succeed (the Retry-After header). */
  readonly retryAfterS?: number;
}

export interface RunGate<Lease> {
  /** Runs `work` once a slot is free (holding it throughout), or says why not. */
  run<T>(work: (lease: Lease) => Promise<T>): Promise<T | Refusal>;
  readonly running: number;
  readonly queued: number;
  /** Takes no more runs and turns the queued ones away; returns how many were queued. */
  close(): number;
  /** Resolves once no run is running. */
  idle(): Promise<void>;
  /** What GET /health shows besides `ok`, `running` and `queued`. */
  health(): Record<string, unknown>;
  /** The answer to a run turned away, as the gate sees things now. */
  answer(refusal: Refusal): RefusalAnswer;
}

export function isRefusal(value: unknown): value is Refusal {
  return value === 'full' || value === 'waited' || value === 'down' || value === 'closed';
}
