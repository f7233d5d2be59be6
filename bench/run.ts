// `npm run bench`: tabward, chrome-devtools-mcp and Playwright MCP on the same pages, the same Chromium, in the
// same run, through the real MCP SDK client. Prints one table of medians (spread in brackets) and the ratio of
// tabward to the better peer, then the guard's cost and the WebMCP relay's latency by hop, and writes it all to
// bench/results.md.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, totalmem } from 'node:os';
import { findChrome } from '../src/browser/findChrome.ts';
import { redisMissing } from '../test/helpers/redisServer.ts';
import { measureBackstop } from './backstopOverhead.ts';
import { measureBreakdown } from './breakdown.ts';
import { measureChokePoint } from './chokePointOverhead.ts';
import { measureGuard } from './guardOverhead.ts';
import { measureFirstReadAfterPause, measureServer, type RunFigures } from './measure.ts';
import { benchPages } from './pages.ts';
import { measureQueue, queueSection } from './queueThroughput.ts';
import { measureRecipeRun } from './recipeRun.ts';
import { measureRelay, relayReport } from './relayLatency.ts';
import { writeResultsSection } from './resultsFile.ts';
import { servers } from './servers.ts';
import { measureStartAndActions } from './startAndActions.ts';

const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const chrome = findChrome(process.env.TABWARD_CHROME);

const site = createServer((req, res) => {
  const page = benchPages[Number(new URL(req.url ?? '/', 'http://x').pathname.slice(1))];
  res
    .writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' })
    .end(page?.html ?? 'not found');
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
const port = (site.address() as AddressInfo).port;
const urlOf = (page: (typeof benchPages)[number]) => `http://127.0.0.1:${port}/${benchPages.indexOf(page)}`;

const runs = new Map<string, RunFigures[]>();
for (let round = 0; round < repeats; round++) {
  // Interleaved, so the machine's noise falls on every server alike.
  for (const server of servers(chrome)) {
    process.stderr.write(`round ${round + 1}/${repeats}: ${server.name}\n`);
    const figures = await measureServer(server, benchPages, urlOf);
    const firstPage = benchPages[0];
    const firstReadAfterPauseMs = firstPage
      ? await measureFirstReadAfterPause(server, urlOf(firstPage), 1_000)
      : undefined;
    runs.set(server.name, [
      ...(runs.get(server.name) ?? []),
      { ...figures, ...(firstReadAfterPauseMs ? { firstReadAfterPauseMs } : {}) },
    ]);
  }
}
const firstPage = benchPages[0];
if (!firstPage) throw new Error('no bench pages');
const guard = await measureGuard(chrome, urlOf(firstPage));
process.stderr.write('backstop overhead and breakdown\n');
const backstop = await measureBackstop(chrome, firstPage);
process.stderr.write('choke point overhead\n');
const chokePoint = await measureChokePoint(chrome, benchPages);
const breakdown = await measureBreakdown(chrome, benchPages);
process.stderr.write('launch and input tools\n');
const startAndActions = await measureStartAndActions(chrome);
site.close();
process.stderr.write('a recipe run against a hand-written Playwright script\n');
const recipeRun = await measureRecipeRun(chrome, repeats + 2);
const relay = relayReport(await measureRelay());
// Runs on the Redis queue: needs redis-server (node scripts/setup.mjs installs it).
const noRedis = redisMissing();
if (noRedis) process.stderr.write(`queue throughput not measured: ${noRedis}\n`);
else process.stderr.write('runs on the Redis queue: 1, 2, 4 workers, and the queue cost per job\n');
const queue = noRedis ? undefined : queueSection(await measureQueue());

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};
const names = [...runs.keys()];
const rows: string[][] = [];
type Metric = {
  label: string;
  pick: (run: RunFigures) => number;
  unit: string;
  lowerIsBetter: boolean;
  target?: number;
  ratio?: boolean;
};
const metrics: Metric[] = [
  { label: 'tools/list tokens', pick: (r) => r.toolsTokens, unit: '', lowerIsBetter: true, target: 0.5 },
  { label: 'tools', pick: (r) => r.toolsCount, unit: '', lowerIsBetter: true, ratio: false },
  {
    label: 'cold start → tools/list',
    pick: (r) => r.coldToolsMs,
    unit: ' ms',
    lowerIsBetter: true,
    target: 0.5,
  },
  {
    label: 'cold start → first page read',
    pick: (r) => r.coldFirstReadMs,
    unit: ' ms',
    lowerIsBetter: true,
    target: 0.8,
  },
  {
    label: 'first page read, 1 s after tools/list (navigate+snapshot)',
    pick: (r) => r.firstReadAfterPauseMs ?? 0,
    unit: ' ms',
    lowerIsBetter: true,
    target: 0.8,
  },
  { label: 'server memory (RSS)', pick: (r) => r.rssMb, unit: ' MB', lowerIsBetter: true },
  {
    label: 'calls (model turns) to go to a page and see it',
    pick: (r) => r.lookCalls,
    unit: '',
    lowerIsBetter: true,
    ratio: false,
  },
  {
    label: 'go to a page and see it, in those calls (median over pages)',
    pick: (r) => r.lookMs,
    unit: ' ms',
    lowerIsBetter: true,
  },
  ...benchPages.flatMap((page): Metric[] => [
    {
      label: `snapshot tokens: ${page.name}`,
      pick: (r) => r.pages[page.name]?.tokens ?? 0,
      unit: '',
      lowerIsBetter: true,
      target: 0.6,
    },
    {
      label: `navigate+snapshot: ${page.name}`,
      pick: (r) => r.pages[page.name]?.latencyMs ?? 0,
      unit: ' ms',
      lowerIsBetter: true,
      target: 0.8,
    },
    {
      label: `text coverage: ${page.name}`,
      pick: (r) => (r.pages[page.name]?.textCoverage ?? 0) * 100,
      unit: '%',
      lowerIsBetter: false,
      ratio: false,
    },
    {
      label: `controls addressable: ${page.name}`,
      pick: (r) => (r.pages[page.name]?.controlCoverage ?? 0) * 100,
      unit: '%',
      lowerIsBetter: false,
      ratio: false,
    },
  ]),
];
for (const metric of metrics) {
  const cells = names.map((name) => {
    const values = (runs.get(name) ?? []).map(metric.pick);
    return { value: median(values), min: Math.min(...values), max: Math.max(...values) };
  });
  const show = (cell: { value: number; min: number; max: number }) =>
    `${Math.round(cell.value)}${metric.unit}${cell.max - cell.min > 0.05 * cell.value && repeats > 1 ? ` [${Math.round(cell.min)}–${Math.round(cell.max)}]` : ''}`;
  const ours = cells[0]?.value ?? 0;
  const bestPeer = Math.min(...cells.slice(1).map((cell) => cell.value));
  const ratio = metric.ratio === false ? '' : (ours / bestPeer).toFixed(2);
  const verdict =
    metric.target === undefined || metric.ratio === false
      ? ''
      : ours / bestPeer <= metric.target
        ? `≤ ${metric.target} ✓`
        : `≤ ${metric.target} ✗`;
  rows.push([metric.label, ...cells.map(show), ratio, verdict]);
}
const header = ['', ...names, 'tabward / best peer', 'target'];
const table = [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
const guardLines = [
  `Guard: one decision with 1,000 user rules ${guard.decisionUs.toFixed(1)} µs median, ${guard.decisionP99Us.toFixed(1)} µs p99 (target ≤ 50 µs p99 ${guard.decisionP99Us <= 50 ? '✓' : '✗'}; defaults only ${guard.decisionDefaultsUs.toFixed(1)} µs);`,
  `take_snapshot through guard + audit ${guard.guardedMs.toFixed(1)} ms vs the bare handler ${guard.directMs.toFixed(1)} ms (ratio ${guard.ratio.toFixed(2)}, target ≤ 1.1 ${guard.ratio <= 1.1 ? '✓' : '✗'}).`,
];
const { requestsPerSecond: rps, navigateSnapshotMs: nav } = backstop;
const backstopLines = [
  `Network backstop (every request paused by Playwright's route and by CDP Fetch): a burst of small fetches gets ${Math.round(rps.guarded)} requests/s through with it, ${Math.round(rps.bare)} without (${(rps.bare / rps.guarded).toFixed(2)}× slower);`,
  `navigate+snapshot (login form, in process) ${nav.guarded.toFixed(0)} ms with it, ${nav.bare.toFixed(0)} ms without (ratio ${(nav.guarded / nav.bare).toFixed(2)}).`,
  `Choke point (everything the browser sends through tabward's egress proxy, backstop on in both), navigate+snapshot in process, target ≤ 1.15: ${chokePoint
    .map((row) => {
      const ratio = row.withProxyMs / row.withoutProxyMs;
      return `${row.page} ${row.withProxyMs.toFixed(0)} vs ${row.withoutProxyMs.toFixed(0)} ms (${ratio.toFixed(2)} ${ratio <= 1.15 ? '✓' : '✗'})`;
    })
    .join('; ')}.`,
];
const ms = (value: number) => value.toFixed(0);
const breakdownTable = [
  '| page | browser navigation (goto → DOMContentLoaded) | navigate_page adds | first take_snapshot | second take_snapshot |',
  '| --- | --- | --- | --- | --- |',
  ...breakdown.map(
    (row) =>
      `| ${row.page} | ${ms(row.browserNavigationMs)} ms | ${ms(row.navigateOverheadMs)} ms | ${ms(row.firstSnapshotMs)} ms | ${ms(row.warmSnapshotMs)} ms |`,
  ),
].join('\n');
const sa = startAndActions;
const startLines = [
  `Isolated browser, launch to first tab (in process, alternated, load average ${sa.load}): piped ${ms(sa.pipedFirstTabMs)} ms, spawned with a port and attached over CDP ${ms(sa.portFirstTabMs)} ms (ratio ${(sa.pipedFirstTabMs / sa.portFirstTabMs).toFixed(2)}).`,
  `Input tools through the ToolRunner (backstop on) vs Playwright's bare locator call: click ${ms(sa.clickMs)} ms vs ${ms(sa.bareClickMs)} ms (${(sa.clickMs / sa.bareClickMs).toFixed(2)}), fill ${ms(sa.fillMs)} ms vs ${ms(sa.bareFillMs)} ms (${(sa.fillMs / sa.bareFillMs).toFixed(2)}).`,
];
const recipeRatio = recipeRun.tabwardMs / recipeRun.playwrightMs;
const recipeLines = [
  `Recipe run (the demo's acme-orders: sign in, 12 orders over 3 pages; whole processes, alternated, ${recipeRun.rounds} rounds, load average ${recipeRun.load}): \`tabward run\` ${ms(recipeRun.tabwardMs)} ms, the same steps written against playwright-core ${ms(recipeRun.playwrightMs)} ms (ratio ${recipeRatio.toFixed(2)}, target ≤ 1.2 ${recipeRatio <= 1.2 ? '✓' : '✗'}).`,
];
const machine = `${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${repeats} rounds, medians [spread]`;
const report = `${machine}\n\n${table}\n\n${guardLines.join('\n')}\n\n${backstopLines.join('\n')}\n\n${startLines.join('\n')}\n\n${recipeLines.join('\n')}\n\nWhere the milliseconds go (in process, backstop on, medians):\n\n${breakdownTable}`;
// The notes written by hand between the sections (what a run showed, before and after a change) are kept.
writeResultsSection('bench-run', report, true);
writeResultsSection('relay-latency', relay);
if (queue) writeResultsSection('queue-throughput', queue);
process.stdout.write(`${report}\n\n${relay}\n${queue ? `\n${queue}\n` : ''}`);
