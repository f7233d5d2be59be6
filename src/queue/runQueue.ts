// Recipe runs as jobs on a Redis queue (BullMQ): `tabward serve --redis` adds them, `tabward worker --redis` runs
// them (docs/recipes.md "Serving at scale"). One queue, `tabward-runs`; a job's id names it to the client
// (`GET /runs/:id`). Contracts (docs/architecture.md, "Runs on a queue"):
// - an Idempotency-Key names one job: the same key gives the same job, never a second run; the key used with another
//   request is refused;
// - a read-only run is retried with backoff when its infrastructure failed (no browser, a tab crashed) and once
//   more when the worker running it died (BullMQ's stalled-job check);
// - a run with `confirm: true` is started at most once: a worker marks it started before its browser does anything,
//   and a job found already marked (its worker died mid-run, the stalled check gave it back) is failed, never run
//   again: "outcome unknown";
// - results are kept for a TTL; a cancel removes a queued job, or aborts a running one wherever it runs.

import { createHash, randomBytes } from 'node:crypto';
import { type Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { TabwardError } from '../core/errors.ts';
import { redactEndpoint } from '../recipes/endpointSpec.ts';
import type { QueuedRequest, QueuedRuns, RunRecord } from '../recipes/queuedRuns.ts';
import type { Recipe } from '../recipes/recipeSchema.ts';
import type { RecipeResult, StepLog } from '../recipes/runRecipe.ts';

export const runQueueName = 'tabward-runs';
const cancelChannel = 'tabward:cancel';
const keyPrefix = 'tabward:run';

export interface RunJobData {
  readonly recipe: Recipe;
  readonly request: QueuedRequest;
  /** A hash of what was asked: a key used again with another request is refused. */
  readonly asked: string;
}

export interface QueueSettings {
  /** How long results are kept, in seconds. */
  readonly resultTtlS: number;
}

/** Infrastructure failures: the run met no page of the site's, so a read-only run may be tried again. */
const retryableCodes = new Set(['browser_unavailable', 'attach_failed', 'page_crashed']);
const readAttempts = 3;

/** A Redis connection for BullMQ, saying which URL when it cannot be made. */
export function redisConnection(url: string, forWorker = false): Redis {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TabwardError('bad_input', `--redis ${url} is not a URL.`, 'Give it as redis://HOST:PORT.');
  }
  if (!/^rediss?:$/.test(parsed.protocol))
    throw new TabwardError(
      'bad_input',
      `--redis ${url} is not a redis:// URL.`,
      'Give it as redis://HOST:PORT.',
    );
  // A worker's blocking commands must wait as long as they need (BullMQ's requirement); a producer's command fails
  // after a few tries while Redis is away, so that a client is answered (503) rather than held.
  const connection = new Redis(url, { maxRetriesPerRequest: forWorker ? null : 3 });
  // ioredis reconnects by itself and reports each failure as an event; unheard, each would be printed. What a
  // caller must know reaches it as a failed command (and `reachable` at start).
  connection.on('error', () => undefined);
  return connection;
}

/** Waits until the connection answers, or fails naming the URL. */
async function reachable(connection: Redis, url: string, timeoutMs = 10_000): Promise<void> {
  const timer = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs).unref(),
  );
  // A refused connection says so at once: no need to wait for the timer.
  const refused = new Promise<never>((_, reject) => connection.once('error', reject));
  try {
    await Promise.race([connection.ping(), timer, refused]);
  } catch (error) {
    connection.disconnect();
    throw new TabwardError(
      'browser_unavailable',
      `Redis at ${redactEndpoint(url)} cannot be reached (${error instanceof Error ? error.message : String(error)}).`,
      'Start redis-server, or check --redis.',
    );
  }
}

/** How long a producer's call to Redis may take before the client is told Redis cannot be reached. */
const redisCallMs = 5_000;

/**
 * A call to Redis from the HTTP side, bounded: BullMQ waits for a connection that is away rather than failing, and a
 * client must get an answer (503) rather than a hang.
 */
function bounded<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new TabwardError('browser_unavailable', `Redis did not answer within ${redisCallMs} ms (${what}).`),
        ),
      redisCallMs,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function askedHash(recipe: Recipe, request: QueuedRequest): string {
  return createHash('sha256')
    .update(JSON.stringify({ recipe, confirm: request.confirm, screenshot: request.screenshot }))
    .digest('hex');
}

/** The producer side: what `serve --redis` holds. */
export class RunQueue implements QueuedRuns {
  private constructor(
    private readonly connection: Redis,
    private readonly queue: Queue<RunJobData, RecipeResult>,
    private readonly events: QueueEvents,
    private readonly settings: QueueSettings,
  ) {}

  static async open(url: string, settings: QueueSettings): Promise<RunQueue> {
    const connection = redisConnection(url);
    await reachable(connection, url);
    const queue = new Queue<RunJobData, RecipeResult>(runQueueName, { connection });
    const events = new QueueEvents(runQueueName, { connection: redisConnection(url, true) });
    await events.waitUntilReady();
    return new RunQueue(connection, queue, events, settings);
  }

  /**
   * Adds a run, or finds the one its Idempotency-Key already named. A key given with another request (another
   * recipe, confirm or screenshot) is refused: the first request's outcome is never handed to a second one.
   */
  submit(
    recipe: Recipe,
    request: QueuedRequest,
    idempotencyKey: string | undefined,
  ): Promise<{ id: string; existing: boolean }> {
    return bounded(this.add(recipe, request, idempotencyKey), 'queuing a run');
  }

  private async add(
    recipe: Recipe,
    request: QueuedRequest,
    idempotencyKey: string | undefined,
  ): Promise<{ id: string; existing: boolean }> {
    const data: RunJobData = { recipe, request, asked: askedHash(recipe, request) };
    const id = idempotencyKey
      ? `k${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 32)}`
      : `r${randomBytes(12).toString('hex')}`;
    if (idempotencyKey) {
      const existing = await this.queue.getJob(id);
      if (existing) {
        if (existing.data.asked !== data.asked)
          throw new TabwardError(
            'bad_input',
            'This Idempotency-Key was already used for another request (another recipe, confirm or screenshot).',
            'Use a new key for a new request.',
          );
        return { id, existing: true };
      }
    }
    const ttl = { age: this.settings.resultTtlS };
    await this.queue.add('run', data, {
      jobId: id,
      // A confirmed run is started once; a read-only one may be tried again when its infrastructure failed.
      attempts: data.request.confirm ? 1 : readAttempts,
      backoff: { type: 'exponential', delay: 1_000 },
      removeOnComplete: ttl,
      removeOnFail: ttl,
    });
    return { id, existing: false };
  }

  get(id: string): Promise<RunRecord | undefined> {
    return bounded(this.read(id), 'reading a run');
  }

  private async read(id: string): Promise<RunRecord | undefined> {
    // The state first, then the job: read the other way round, a job that finished in between would be a finished
    // job with the data of a running one (no result: measured under load, it read as failed).
    const state = await this.queue.getJobState(id);
    const job = await this.queue.getJob(id);
    if (!job || state === 'unknown') {
      const cancelled = await this.connection.get(`${keyPrefix}:cancelled:${id}`);
      return cancelled ? JSON.parse(cancelled) : undefined;
    }
    return recordOf(job, state);
  }

  /** Resolves once the run ended (or the wait ran out), with what is known of it then. */
  async wait(id: string, timeoutMs: number): Promise<RunRecord | undefined> {
    const job = await bounded(this.queue.getJob(id), 'reading a run');
    if (!job) return this.get(id);
    const result = await job.waitUntilFinished(this.events, timeoutMs).catch(() => undefined);
    // The completed event carries the result: answered from it, without reading the job again (two round trips
    // that were most of the queue's own cost per run, bench/results.md). A failure, a cancel or a wait that ran
    // out is read as it stands.
    if (result?.ok) return { ...recordOf(job, 'completed'), result, steps: result.steps, state: 'done' };
    return this.get(id);
  }

  /** Removes a queued run, or asks the worker running it to stop; resolves with the record as it stands. */
  cancel(id: string): Promise<RunRecord | undefined> {
    return bounded(this.stop(id), 'cancelling a run');
  }

  private async stop(id: string): Promise<RunRecord | undefined> {
    const job = await this.queue.getJob(id);
    if (!job) return this.get(id);
    const state = await job.getState();
    if (state === 'waiting' || state === 'delayed' || state === 'prioritized') {
      const removed = await job.remove().then(
        () => true,
        () => false,
      );
      if (removed) {
        const record: RunRecord = {
          id,
          state: 'cancelled',
          confirm: job.data.request.confirm,
          attempts: 0,
          steps: [],
          reason: 'cancelled while queued: it never started',
        };
        await this.connection.set(
          `${keyPrefix}:cancelled:${id}`,
          JSON.stringify(record),
          'EX',
          this.settings.resultTtlS,
        );
        return record;
      }
    }
    // Picked up meanwhile, or running: its worker stops it (told now, or when it starts it).
    await this.connection.set(`${keyPrefix}:cancel:${id}`, '1', 'EX', this.settings.resultTtlS);
    await this.connection.publish(cancelChannel, id);
    return this.get(id);
  }

  async counts(): Promise<{ queued: number; running: number }> {
    const counts = await bounded(
      this.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active'),
      'counting runs',
    );
    return {
      queued: (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0),
      running: counts.active ?? 0,
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.events.close(), this.queue.close()]);
    this.connection.disconnect();
  }
}

function recordOf(job: Job<RunJobData, RecipeResult>, state: string): RunRecord {
  const progress = job.progress as { steps?: StepLog[] } | number;
  const steps = typeof progress === 'object' && progress?.steps ? progress.steps : [];
  const base = {
    id: job.id ?? '',
    confirm: job.data.request.confirm,
    attempts: job.attemptsStarted ?? job.attemptsMade,
  };
  if (state === 'completed') {
    const result = job.returnvalue;
    const cancelled = result?.error?.code === 'cancelled';
    return {
      ...base,
      state: result?.ok ? 'done' : cancelled ? 'cancelled' : 'failed',
      steps: result?.steps ?? steps,
      result,
    };
  }
  if (state === 'failed') {
    const reason = job.failedReason || 'failed';
    // A confirmed run that stalled twice (its lock lost twice) was started and may have written: unknown too.
    const unknown = /outcome unknown/.test(reason) || (job.data.request.confirm && /stalled/.test(reason));
    return { ...base, state: unknown ? 'unknown' : 'failed', steps, reason };
  }
  if (state === 'active') return { ...base, state: 'running', steps };
  return { ...base, state: 'queued', steps };
}

export interface WorkerSettings {
  readonly concurrency: number;
  /** How long a run's lock lasts without renewal: a worker that died is noticed after about this long. */
  readonly lockMs: number;
  readonly log: (line: string) => void;
}

/** Runs one job's recipe: the worker's browser, its gate and its audit; aborted by `cancel`. */
export type RunJob = (
  data: RunJobData,
  run: { cancel: AbortSignal; onStep: (entry: StepLog) => void },
) => Promise<RecipeResult>;

/** The worker side: what `tabward worker --redis` runs until it is closed. */
export async function startRunWorker(
  url: string,
  runJob: RunJob,
  settings: WorkerSettings,
): Promise<{ close(graceMs: number): Promise<void> }> {
  const connection = redisConnection(url, true);
  await reachable(connection, url);
  const running = new Map<string, AbortController>();
  const subscriber = redisConnection(url, true);
  await subscriber.subscribe(cancelChannel);
  subscriber.on('message', (_channel: string, id: string) =>
    running.get(id)?.abort('cancelled by its client'),
  );
  const processJob = async (job: Job<RunJobData, RecipeResult>): Promise<RecipeResult> => {
    const id = job.id ?? '';
    const { confirm } = job.data.request;
    // A confirmed run is started once: marked before its browser does anything. Found marked, it was started by a
    // worker that died (or lost its lock) mid-run: what it wrote is unknown, and it is not run again.
    if (confirm) {
      const first = await connection.set(
        `${keyPrefix}:started:${id}`,
        String(Date.now()),
        'EX',
        7 * 86_400,
        'NX',
      );
      if (first !== 'OK')
        throw new UnrecoverableError(
          'outcome unknown: a worker started this confirmed run and stopped before it finished; it is not run again, so whatever it wrote was written at most once. Check the site.',
        );
    }
    const abort = new AbortController();
    running.set(id, abort);
    if (await connection.get(`${keyPrefix}:cancel:${id}`)) abort.abort('cancelled by its client');
    const steps: StepLog[] = [];
    try {
      const result = await runJob(job.data, {
        cancel: abort.signal,
        onStep: (entry) => {
          steps.push(entry);
          void job.updateProgress({ steps: [...steps] }).catch(() => undefined);
        },
      });
      const code = result.error?.code;
      const attemptsLeft = (job.opts.attempts ?? 1) - job.attemptsMade - 1;
      if (!confirm && code && retryableCodes.has(code) && attemptsLeft > 0) {
        settings.log(`tabward: run ${id} failed (${result.error?.message}); tried again after a backoff.`);
        throw new Error(result.error?.message ?? code);
      }
      return result;
    } finally {
      running.delete(id);
    }
  };
  const worker = new Worker<RunJobData, RecipeResult>(runQueueName, processJob, {
    connection,
    concurrency: settings.concurrency,
    lockDuration: settings.lockMs,
    stalledInterval: Math.max(1_000, Math.round(settings.lockMs / 2)),
    // A read-only run whose worker died is started once more; a confirmed one is caught by its mark above.
    maxStalledCount: 1,
  });
  worker.on('error', (error) => settings.log(`tabward: worker: ${error.message}`));
  await worker.waitUntilReady();
  return {
    // Takes no more jobs; the running ones get the grace, then are cancelled (their jobs end as cancelled).
    close: async (graceMs) => {
      const closing = worker.close();
      const timer = setTimeout(() => {
        for (const abort of running.values()) abort.abort('the worker is stopping');
      }, graceMs);
      await closing;
      clearTimeout(timer);
      subscriber.disconnect();
      connection.disconnect();
    },
  };
}
