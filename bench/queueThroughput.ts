// Runs on the Redis queue (issue 34): `serve --redis` and N `tabward worker --redis` processes over a real Redis
// (Debian's redis-server, started as the tests start it), each worker M runs at a time in its own Chromium.
// 1. Throughput: RUNS runs posted at once (waiting clients) of a slow-site recipe (3 pages at 1 s each: mostly
//    waiting, as on a slow portal), with 1, 2 and 4 workers; runs/s, the ratio to 1 worker, and p50/p95 of each
//    run's wall time as its client saw it (queueing included).
// 2. The queue's own cost per job: the same fast one-page recipe, one run at a time, through `serve` in process
//    (the default) and through `serve --redis` + one worker, alternated run by run so that the machine's noise
//    falls on both; p50 and p95 of each and their difference (target ≤ 5 ms at p50).
// Everything shares this machine's CPUs (serve, the workers, their Chromiums, Redis), so throughput grows with
// workers only while the CPUs are not the limit. Run alone: `node --import tsx bench/queueThroughput.ts`
// (QUEUE_RUNS for the throughput runs per row, QUEUE_SERIAL for the serial runs of each kind).

import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { startRedis } from '../test/helpers/redisServer.ts';
import { tokenFile } from '../test/helpers/tokenFile.ts';
import { writeResultsSection } from './resultsFile.ts';

const token = 'bench-queue-token-0123456789';
const root = new URL('..', import.meta.url).pathname;

export interface QueueRow {
  /** 0: the control, `serve` alone in process with as many runs at a time as 4 workers have. */
  readonly workers: number;
  readonly eachAtATime: number;
  readonly runsPerSecond: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly wallMs: number;
}

export interface QueueFigures {
  readonly runs: number;
  readonly rows: QueueRow[];
  readonly serial: {
    readonly runs: number;
    inProcess: Percentiles;
    queued: Percentiles;
    /** The wall time less the run's own steps (its step log's ms): HTTP, the queue, the worker, the answer. */
    outsideInProcess: Percentiles;
    outsideQueued: Percentiles;
    /** A queued job by BullMQ's timestamps: added → taken by the worker → finished → the client has its answer. */
    pickup: Percentiles;
    inWorker: Percentiles;
    answer: Percentiles;
  };
  /** BullMQ alone on the same Redis: add a job, a worker returns at once, the producer hears it finished. */
  readonly bare: Percentiles & { readonly jobs: number };
  readonly loadBefore: string;
  readonly loadAfter: string;
}

interface Percentiles {
  readonly p50Ms: number;
  readonly p95Ms: number;
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

export async function measureQueue(runs = 16, serialRuns = 30, eachAtATime = 2): Promise<QueueFigures> {
  const loadBefore = load();
  const slow = await startSite(1000);
  const fast = await startSite(0);
  const redis = await startRedis();
  const started: ChildProcess[] = [];
  const slowRecipe = {
    url: `${siteUrl(slow)}/?page=1`,
    extract: {
      fields: { orders: { rows: 'tr.order', fields: { id: '.id' } } },
      paginate: { next: 'a.next', maxPages: 3 },
    },
  };
  const fastRecipe = { url: `${siteUrl(fast)}/?page=3`, extract: { fields: { title: 'h1' } } };
  try {
    const queued = await startTabward(
      [
        'serve',
        '--redis',
        redis.url,
        '--deadline',
        '600000',
        '--port',
        '0',
        '--token-file',
        tokenFile(token),
      ],
      /serving recipes at (\S+)/,
      started,
    );
    const workers: ChildProcess[] = [];
    const addWorker = async (concurrency: number) =>
      workers.push(
        (
          await startTabward(
            ['worker', '--redis', redis.url, '--concurrency', String(concurrency), '--deadline', '600000'],
            /worker taking runs/,
            started,
          )
        ).child,
      );
    const rows: QueueRow[] = [];
    for (const count of process.env.QUEUE_COST_ONLY === '1' ? [] : [1, 2, 4]) {
      while (workers.length < count) await addWorker(eachAtATime);
      process.stderr.write(`queue: ${count} worker(s) × ${eachAtATime} at a time, ${runs} runs\n`);
      // Each worker's first run starts its Chromium: not what is measured.
      await Promise.all(
        Array.from({ length: count * eachAtATime }, () => runOnce(queued.base, fastRecipe, 1)),
      );
      const began = performance.now();
      const times = await Promise.all(
        Array.from({ length: runs }, () => runOnce(queued.base, slowRecipe, 12)),
      );
      const wallMs = performance.now() - began;
      rows.push({
        workers: count,
        eachAtATime,
        runsPerSecond: runs / (wallMs / 1000),
        p50Ms: percentile(times, 50),
        p95Ms: percentile(times, 95),
        wallMs,
      });
    }
    for (const worker of workers.splice(1)) await stop(worker);
    if (workers.length === 0) await addWorker(eachAtATime);
    // The control: as many runs at a time in one process, without the queue (one Chromium): what this machine gives.
    const control = await startTabward(
      [
        'serve',
        '--concurrency',
        String(4 * eachAtATime),
        '--queue',
        String(runs),
        '--port',
        '0',
        '--token-file',
        tokenFile(token),
      ],
      /serving recipes at (\S+)/,
      started,
    );
    process.stderr.write(`queue: control, serve in process ${4 * eachAtATime} at a time, ${runs} runs\n`);
    await Promise.all(Array.from({ length: 4 * eachAtATime }, () => runOnce(control.base, fastRecipe, 1)));
    {
      const began = performance.now();
      const times = await Promise.all(
        Array.from({ length: runs }, () => runOnce(control.base, slowRecipe, 12)),
      );
      const wallMs = performance.now() - began;
      rows.push({
        workers: 0,
        eachAtATime: 4 * eachAtATime,
        runsPerSecond: runs / (wallMs / 1000),
        p50Ms: percentile(times, 50),
        p95Ms: percentile(times, 95),
        wallMs,
      });
    }
    await stop(control.child);
    // The queue's own cost: one worker, one run at a time, against serve's in-process default.
    const inProcess = await startTabward(
      ['serve', '--concurrency', '1', '--port', '0', '--token-file', tokenFile(token)],
      /serving recipes at (\S+)/,
      started,
    );
    process.stderr.write(`queue: ${serialRuns} serial runs in process and on the queue, alternated\n`);
    await runOnce(inProcess.base, fastRecipe, 1);
    await runOnce(queued.base, fastRecipe, 1);
    const timesIn: number[] = [];
    const timesQueued: number[] = [];
    const outsideIn: number[] = [];
    const outsideQueued: number[] = [];
    const phases: { pickupMs: number[]; inWorkerMs: number[]; answerMs: number[] } = {
      pickupMs: [],
      inWorkerMs: [],
      answerMs: [],
    };
    const jobs = new Redis(redis.url);
    for (let i = 0; i < serialRuns; i++) {
      const inProcessRun = await timedRun(inProcess.base, fastRecipe);
      const queuedRun = await timedRun(queued.base, fastRecipe);
      // BullMQ's own timestamps of the job (ms, this machine's clock): added, taken by the worker, finished.
      const [added, taken, finished] = await jobs.hmget(
        `bull:tabward-runs:${queuedRun.runId}`,
        'timestamp',
        'processedOn',
        'finishedOn',
      );
      phases.pickupMs.push(Number(taken) - Number(added));
      phases.inWorkerMs.push(Number(finished) - Number(taken));
      phases.answerMs.push(queuedRun.endedAt - Number(finished));
      timesIn.push(inProcessRun.wallMs);
      timesQueued.push(queuedRun.wallMs);
      outsideIn.push(inProcessRun.wallMs - inProcessRun.stepsMs);
      outsideQueued.push(queuedRun.wallMs - queuedRun.stepsMs);
    }
    jobs.disconnect();
    const of = (times: number[]) => ({ p50Ms: percentile(times, 50), p95Ms: percentile(times, 95) });
    for (const child of started.splice(0)) await stop(child);
    process.stderr.write('queue: BullMQ alone, a job that does nothing\n');
    const bare = await measureBareBullmq(redis.url, 200);
    return {
      runs,
      rows,
      serial: {
        runs: serialRuns,
        inProcess: of(timesIn),
        queued: of(timesQueued),
        outsideInProcess: of(outsideIn),
        outsideQueued: of(outsideQueued),
        pickup: of(phases.pickupMs),
        inWorker: of(phases.inWorkerMs),
        answer: of(phases.answerMs),
      },
      bare: { ...of(bare), jobs: bare.length },
      loadBefore,
      loadAfter: load(),
    };
  } finally {
    await Promise.all(started.map(stop));
    await redis.stop();
    slow.close();
    fast.close();
  }
}

/** A job's round trip through BullMQ on this Redis, nothing else: add, a worker that returns, the finished event. */
async function measureBareBullmq(url: string, jobs: number): Promise<number[]> {
  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port), maxRetriesPerRequest: null };
  const queue = new Queue('bench-bare', { connection });
  const events = new QueueEvents('bench-bare', { connection });
  const worker = new Worker('bench-bare', async () => 'done', { connection });
  await Promise.all([events.waitUntilReady(), worker.waitUntilReady()]);
  const times: number[] = [];
  try {
    for (let i = 0; i < jobs + 10; i++) {
      const started = performance.now();
      const job = await queue.add('job', { i });
      await job.waitUntilFinished(events, 10_000);
      if (i >= 10) times.push(performance.now() - started);
    }
  } finally {
    await Promise.all([worker.close(), events.close(), queue.close()]);
  }
  return times;
}

function siteUrl(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A portal that takes `delayMs` to answer each page: 3 pages of 4 orders, linked by a.next. */
async function startSite(delayMs: number): Promise<Server> {
  const server = createServer((req, res) => {
    const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
    const rows = [1, 2, 3, 4]
      .map((row) => `<tr class="order"><td class="id">P${page}-${row}</td></tr>`)
      .join('');
    const next = page < 3 ? `<a class="next" href="/?page=${page + 1}">Next</a>` : '';
    setTimeout(
      () =>
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(`<title>Orders ${page}</title><h1>Orders</h1><table>${rows}</table>${next}`),
      delayMs,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return server;
}

/** One run through POST /run: its wall time, and the time its steps took by its own step log. */
async function timedRun(
  base: string,
  recipe: unknown,
): Promise<{ wallMs: number; stepsMs: number; runId: string; endedAt: number }> {
  const started = performance.now();
  const response = await fetch(`${base}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ recipe }),
  });
  const result = (await response.json()) as {
    ok?: boolean;
    error?: string;
    stepLog?: { ms: number }[];
    runId?: string;
  };
  const wallMs = performance.now() - started;
  if (!result.ok) throw new Error(`a run failed (${response.status}): ${result.error}`);
  return {
    wallMs,
    stepsMs: (result.stepLog ?? []).reduce((sum, step) => sum + step.ms, 0),
    runId: result.runId ?? '',
    endedAt: Date.now(),
  };
}

/** One run through POST /run (a waiting client); its wall time. Fails the bench if the run did not succeed. */
async function runOnce(base: string, recipe: unknown, rows: number): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${base}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ recipe }),
  });
  const result = (await response.json()) as { ok?: boolean; error?: string; data?: { orders?: unknown[] } };
  const got = result.data?.orders?.length ?? (result.ok ? 1 : 0);
  if (!result.ok || got !== rows)
    throw new Error(`a run failed (${response.status}): ${result.error ?? JSON.stringify(result.data)}`);
  return performance.now() - started;
}

async function startTabward(
  args: readonly string[],
  ready: RegExp,
  started: ChildProcess[],
): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(
    process.execPath,
    [`${root}scripts/tabward-dev.mjs`, ...args, '--allow-private', '--audit-log', '/dev/null'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  started.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const match = ready.exec(stderr);
    if (match) return { child, base: match[1] ?? '' };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`tabward ${args[0]} did not start:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export function queueSection(figures: QueueFigures): string {
  const baseline = figures.rows[0]?.runsPerSecond ?? 1;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const lines = figures.rows.map(
    (row) =>
      `| ${row.workers === 0 ? 'none: `serve` in process (control)' : row.workers} | ${row.eachAtATime} | ${row.runsPerSecond.toFixed(2)} | ${(row.runsPerSecond / baseline).toFixed(2)} | ${s(row.wallMs)} | ${s(row.p50Ms)} | ${s(row.p95Ms)} |`,
  );
  const { inProcess, queued, runs, outsideInProcess, outsideQueued, pickup, inWorker, answer } =
    figures.serial;
  const overhead = queued.p50Ms - inProcess.p50Ms;
  return [
    `Runs on the Redis queue: \`serve --redis\` + N \`worker\`s, each 2 runs at a time in its own Chromium, over Debian's redis-server; ${figures.runs} runs of a slow-site recipe (3 pages at 1 s each) posted at once per row by waiting clients; ${cpus().length} CPUs, load average ${figures.loadBefore} before and ${figures.loadAfter} after:`,
    '',
    '| workers | runs at a time on each | runs/s | vs 1 worker | wall time | p50 run (queueing included) | p95 run |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...lines,
    '',
    `The queue's own cost per job: a one-page recipe, one run at a time, ${runs} runs of each alternated: in process (\`serve\`, the default) p50 ${inProcess.p50Ms.toFixed(1)} ms, p95 ${inProcess.p95Ms.toFixed(1)} ms; on the queue (\`serve --redis\` + 1 worker) p50 ${queued.p50Ms.toFixed(1)} ms, p95 ${queued.p95Ms.toFixed(1)} ms: ${overhead.toFixed(1)} ms more at p50 (target ≤ 5 ms ${overhead <= 5 ? '✓' : '✗'}), ratio ${(queued.p50Ms / inProcess.p50Ms).toFixed(2)}. Outside the run's own steps (wall time less its step log: HTTP, queueing, the answer): in process p50 ${outsideInProcess.p50Ms.toFixed(1)} ms, on the queue p50 ${outsideQueued.p50Ms.toFixed(1)} ms. A queued job by BullMQ's own timestamps (ms resolution), p50: added → taken by the worker ${pickup.p50Ms.toFixed(0)} ms, taken → finished ${inWorker.p50Ms.toFixed(0)} ms, finished → the client has its answer ${answer.p50Ms.toFixed(0)} ms. BullMQ alone on the same Redis (add a job, a worker that returns at once, the producer told it finished; ${figures.bare.jobs} jobs one at a time): p50 ${figures.bare.p50Ms.toFixed(1)} ms, p95 ${figures.bare.p95Ms.toFixed(1)} ms.`,
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureQueue(
    Number(process.env.QUEUE_RUNS ?? 16),
    Number(process.env.QUEUE_SERIAL ?? 30),
  );
  const section = queueSection(figures);
  if (process.env.BENCH_WRITE !== '0') writeResultsSection('queue-throughput', section);
  process.stdout.write(`${section}\n`);
}
