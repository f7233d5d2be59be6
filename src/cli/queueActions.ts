// `serve --redis` and `tabward worker --redis`: runs as jobs on a Redis queue (src/queue/runQueue.ts). serve adds
// them and answers for them; each worker runs them in its own browsers (tabward's own, the user's Chrome with
// --shared, or --ws-endpoint grids), as many at once as its --concurrency, its audit records also in the Redis stream.
// BullMQ and ioredis are loaded only here, on use.

import { swallow } from '../core/debug.ts';
import { visibleLines } from '../core/displayText.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import { redactEndpoint } from '../recipes/endpointSpec.ts';
import { refusePrivateTargets } from '../recipes/privateAddress.ts';
import type { QueuedRuns } from '../recipes/queuedRuns.ts';
import { isRefusal } from '../recipes/runGate.ts';
import type { RecipeResult } from '../recipes/runRecipe.ts';
import { runRecipe } from '../recipes/runRecipe.ts';
import { recipeRuntime } from './recipeActions.ts';
import type { WorkerFlags } from './recipeCommands.ts';
import { boundedStep } from './shutdown.ts';

export async function openRunQueue(
  url: string,
  flags: { resultTtl: number },
  log: (line: string) => void,
): Promise<QueuedRuns & { close(): Promise<void> }> {
  const { RunQueue } = await import('../queue/runQueue.ts');
  const queue = await RunQueue.open(url, { resultTtlS: flags.resultTtl });
  log(`tabward: results are kept ${flags.resultTtl} s (GET /runs/:id).`);
  return queue;
}

/** A run that never reached a browser, as a result the client reads like any failed run. */
function failedBeforeStart(error: unknown): RecipeResult {
  const failure = asTabwardError(error);
  return {
    ok: false,
    mode: 'live',
    data: null,
    screenshot: null,
    steps: [],
    warnings: [],
    error: { code: failure.code, message: failure.describe(), step: 'start' },
  };
}

export async function runWorker(flags: WorkerFlags): Promise<void> {
  const log = (line: string) => process.stderr.write(`${visibleLines(line)}\n`);
  const [{ startRunWorker }, { AuditStream }] = await Promise.all([
    import('../queue/runQueue.ts'),
    import('../queue/auditStream.ts'),
  ]);
  const stream = AuditStream.open(flags.redis, log);
  // The worker's share of the browsers it is given: --concurrency runs at once, none waiting in it (the queue holds
  // them, where another worker can take them).
  const runtime = recipeRuntime(
    flags,
    log,
    { concurrency: flags.concurrency, queue: 0, queueWaitMs: flags.deadline },
    stream,
  );
  const worker = await startRunWorker(
    flags.redis,
    async ({ recipe, request }, { cancel, onStep }) => {
      try {
        if (!flags.allowPrivate) await refusePrivateTargets(recipe);
      } catch (error) {
        return failedBeforeStart(error);
      }
      const outcome = await runtime.inSlot('worker', async (options, onGrid) => {
        const done = await runRecipe(recipe, { ...request, dryRun: false, ...options, cancel, onStep });
        return onGrid ? onGrid.finish(done) : done;
      });
      if (!isRefusal(outcome)) return outcome;
      return failedBeforeStart(new TabwardError('browser_unavailable', runtime.gate.answer(outcome).message));
    },
    { concurrency: flags.concurrency, lockMs: flags.lockDuration, log },
  ).catch(async (error: unknown) => {
    stream.close();
    await runtime.close();
    throw error;
  });
  log(
    `tabward: worker taking runs from the Redis queue at ${redactEndpoint(flags.redis)}, ${flags.concurrency} at a time.`,
  );
  if (!runtime.endpoints) void runtime.warm().catch(swallow('cli', 'queueActions.log: runtime.warm()'));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log(`tabward: stopping: no new runs; the running ones get up to ${flags.grace} ms.`);
    await boundedStep('finishing the running runs', worker.close(flags.grace), log, flags.grace + 5_000);
    await runtime.close();
    stream.close();
    log('tabward: stopped.');
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop());
}
