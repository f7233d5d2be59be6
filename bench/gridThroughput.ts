// Throughput of `tabward serve` over a browser grid (issue 13): 24 recipe runs posted at once to a serve process
// whose --ws-endpoint list names 1, 2 or 3 local Chromium endpoints (each started with --remote-debugging-port), one
// run at a time on each; and, as a control, 1 endpoint taking 3 at a time. Two workloads: the demo's `acme-orders`
// (sign in, wait for the orders, extract 12 rows over 3 pages: mostly CPU, the browser's and serve's), and a site
// whose pages take 1 s to answer (3 pages: mostly waiting, as on a slow portal). Every endpoint here shares this
// machine's CPUs with the others and with serve itself, so the first grows with endpoints only until the CPUs run
// out; the second shows the spreading itself. Prints runs/s, the ratio to 1 endpoint, the median run's wall time
// (queueing included) and the load average, as markdown. Run alone: `node --import tsx bench/gridThroughput.ts`
// (GRID_RUNS to change the 24).

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { findChrome } from '../src/browser/findChrome.ts';
import { type LaunchedChrome, launchChrome } from '../src/browser/launch.ts';
import { startDemoSite } from '../src/demo/demoSite.ts';
import { tokenFile } from '../test/helpers/tokenFile.ts';
import { writeResultsSection } from './resultsFile.ts';

const token = 'bench-grid-token-0123456789';
const root = new URL('..', import.meta.url).pathname;

export interface GridRow {
  readonly workload: string;
  readonly endpoints: number;
  readonly concurrencyEach: number;
  readonly runsPerSecond: number;
  readonly medianRunMs: number;
  readonly wallMs: number;
}

export interface GridFigures {
  readonly runs: number;
  readonly rows: GridRow[];
  readonly loadBefore: string;
  readonly loadAfter: string;
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

interface Workload {
  readonly name: string;
  readonly recipe: Record<string, unknown>;
  /** The rows a successful run extracts. */
  readonly rows: number;
}

export async function measureGrid(chrome: string, runs = 24): Promise<GridFigures> {
  const loadBefore = load();
  const demo = await startDemoSite();
  const slow = await startSlowSite(1000);
  const workloads: Workload[] = [
    {
      name: 'acme-orders',
      recipe: JSON.parse(
        readFileSync(new URL('../examples/recipes/acme-orders.json', import.meta.url), 'utf8').replaceAll(
          'http://127.0.0.1:8765',
          `http://127.0.0.1:${demo.port}`,
        ),
      ),
      rows: 12,
    },
    {
      name: '3 pages at 1 s each',
      recipe: {
        url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/?page=1`,
        extract: {
          fields: { orders: { rows: 'tr.order', fields: { id: '.id' } } },
          paginate: { next: 'a.next', maxPages: 3 },
        },
      },
      rows: 12,
    },
  ];
  const browsers = await Promise.all(
    [0, 1, 2].map(() => launchChrome({ executablePath: chrome, headless: true })),
  );
  const rows: GridRow[] = [];
  try {
    for (const workload of workloads)
      for (const [endpoints, concurrencyEach] of [
        [1, 1],
        [2, 1],
        [3, 1],
        [1, 3],
      ] as const) {
        process.stderr.write(
          `grid: ${workload.name}, ${endpoints} endpoint(s), ${concurrencyEach} at a time each\n`,
        );
        rows.push(await measureOne(browsers.slice(0, endpoints), concurrencyEach, workload, runs));
      }
  } finally {
    await Promise.all(browsers.map((browser) => browser.close()));
    await demo.close();
    slow.close();
  }
  return { runs, rows, loadBefore, loadAfter: load() };
}

/** A portal that takes `delayMs` to answer each page: 3 pages of 4 orders, linked by a.next. */
async function startSlowSite(delayMs: number): Promise<Server> {
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

async function measureOne(
  endpoints: readonly LaunchedChrome[],
  concurrencyEach: number,
  workload: Workload,
  runs: number,
): Promise<GridRow> {
  const { server, base } = await startServe([
    '--concurrency',
    String(concurrencyEach),
    '--queue',
    String(runs),
    '--queue-wait',
    '600000',
    '--deadline',
    '600000',
    ...endpoints.flatMap((endpoint) => ['--ws-endpoint', endpoint.wsEndpoint]),
  ]);
  try {
    // A first connection to each Chromium (and serve's own first run) is not what is measured.
    await Promise.all(endpoints.map(() => runOnce(base, workload)));
    const started = performance.now();
    const times = await Promise.all(Array.from({ length: runs }, () => runOnce(base, workload)));
    const wallMs = performance.now() - started;
    const sorted = [...times].sort((a, b) => a - b);
    return {
      workload: workload.name,
      endpoints: endpoints.length,
      concurrencyEach,
      runsPerSecond: runs / (wallMs / 1000),
      medianRunMs: sorted[Math.floor(sorted.length / 2)] ?? 0,
      wallMs,
    };
  } finally {
    server.kill('SIGTERM');
  }
}

/** One run through POST /run; its wall time, queueing included. Fails the bench if the run did not succeed. */
async function runOnce(base: string, workload: Workload): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${base}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ recipe: workload.recipe }),
  });
  const result = (await response.json()) as { ok?: boolean; error?: string; data?: { orders?: unknown[] } };
  if (!result.ok || result.data?.orders?.length !== workload.rows)
    throw new Error(`a run failed (${response.status}): ${result.error ?? JSON.stringify(result.data)}`);
  return performance.now() - started;
}

async function startServe(args: readonly string[]): Promise<{ server: ChildProcess; base: string }> {
  const server = spawn(
    process.execPath,
    [
      `${root}scripts/tabward-dev.mjs`,
      'serve',
      '--port',
      '0',
      '--token-file',
      tokenFile(token),
      '--allow-private',
      '--secrets',
      `${root}examples/recipes/demo.env`,
      '--audit-log',
      '/dev/null',
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  server.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const base = /serving recipes at (\S+)/.exec(stderr)?.[1];
    if (base) return { server, base };
    if (server.exitCode !== null || Date.now() > deadline) {
      server.kill('SIGKILL');
      throw new Error(`tabward serve did not start:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function gridSection(figures: GridFigures): string {
  const lines = figures.rows.map((row) => {
    const baseline =
      figures.rows.find((each) => each.workload === row.workload && each.endpoints === 1)?.runsPerSecond ?? 1;
    return `| ${row.workload} | ${row.endpoints} | ${row.concurrencyEach} | ${row.runsPerSecond.toFixed(2)} | ${(row.runsPerSecond / baseline).toFixed(2)} | ${(row.wallMs / 1000).toFixed(1)} s | ${(row.medianRunMs / 1000).toFixed(1)} s |`;
  });
  return [
    `${figures.runs} runs posted at once per row, ${cpus().length} CPUs, load average ${figures.loadBefore} before and ${figures.loadAfter} after:`,
    '',
    '| workload | endpoints | runs at a time on each | runs/s | vs 1 endpoint | wall time | median run (queueing included) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...lines,
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureGrid(
    findChrome(process.env.TABWARD_CHROME),
    Number(process.env.GRID_RUNS ?? 24),
  );
  const section = gridSection(figures);
  if (process.env.BENCH_WRITE !== '0') writeResultsSection('grid-throughput', section);
  process.stdout.write(`${section}\n`);
}
