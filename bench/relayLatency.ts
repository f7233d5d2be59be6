// The relay's own cost: a read-only site tool called by an MCP agent through `tabward relay`, the extension and
// the page, against the same tool run in the page over CDP. Real relay process, real Chromium with the built
// extension, real MCP client over Streamable HTTP on loopback (the rig the e2e tests use). The relay reports
// where each call's time went (`_meta["tabward/timing"]`, each figure measured on one clock), so the hops
// subtract cleanly: MCP HTTP (client + SDK + HTTP), the relay itself, the WebSocket legs, the service worker,
// chrome.tabs messaging to the content script, the bridge, and the page.

import { cpus, loadavg } from 'node:os';
import type { CallTimes } from '../src/relay/siteToolCalls.ts';
import { startWebmcpSite } from '../test/fixtures/webmcpSite.ts';
import { openAndShare, startRig, waitForTools } from '../test/helpers/webmcpRig.ts';
import { writeResultsSection } from './resultsFile.ts';

/** The relay's `_meta["tabward/timing"]`: where the call's time went, plus the relay's own total. */
type Timing = CallTimes & { relayMs: number };

export interface RelayFigures {
  readonly calls: number;
  /** Medians, ms. */
  readonly callMs: number;
  readonly p10CallMs: number;
  readonly p90CallMs: number;
  readonly inPageMs: number;
  readonly cdpMs: number;
  readonly hops: Record<string, number>;
  /** The machine's 1-minute load average when measured (2 cores here: anything above 2 queues). */
  readonly load: number;
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
};
const median = (values: number[]): number => percentile(values, 0.5);

/** The hops of one call, from the agent's wall time and the relay's timing. */
function hopsOf(totalMs: number, t: Timing): Record<string, number> {
  return {
    'MCP HTTP (client, SDK, HTTP)': totalMs - t.relayMs,
    'relay (guard, store, audit)': t.relayMs - t.locateMs - t.callMs,
    'WebSocket relay ⇄ worker (locate, when not reused, and call)':
      t.locateMs - t.locateWorkerMs + (t.callMs - t.workerMs),
    'service worker (locate + call)': t.locateWorkerMs + t.workerMs - t.tabMs,
    'worker ⇄ content script (extension messaging)': t.tabMs - t.bridgeMs,
    'bridge (content script)': t.bridgeMs - t.pageMs,
    'page (executeTool)': t.pageMs,
  };
}

export async function measureRelay(calls = 100): Promise<RelayFigures> {
  const site = await startWebmcpSite();
  const rig = await startRig({ webmcp: true });
  try {
    const origin = site.url('127.0.0.1', '').replace(/\/$/, '');
    const { page } = await openAndShare(rig, site.url('127.0.0.1', '/shop'), true);
    await waitForTools(rig.agent, (text) => text.includes('searchProducts'));
    const request = {
      name: 'callSiteTool',
      arguments: { site: origin, tool: 'searchProducts', arguments: { query: 'bench' } },
    };
    const totals: number[] = [];
    const hops: Record<string, number[]> = {};
    for (let i = 0; i < calls + 10; i++) {
      const started = performance.now();
      const result = await rig.agent.callTool(request);
      const totalMs = performance.now() - started;
      if (result.isError) throw new Error(JSON.stringify(result.content));
      const timing = result._meta?.['tabward/timing'] as Timing | undefined;
      if (i < 10) continue;
      totals.push(totalMs);
      // A relay without the timing (an older one, measured for comparison) gives the total only.
      if (!timing) continue;
      for (const [hop, ms] of Object.entries(hopsOf(totalMs, timing))) hops[hop] = [...(hops[hop] ?? []), ms];
    }
    const inPage: number[] = [];
    const cdp: number[] = [];
    for (let i = 0; i < calls + 10; i++) {
      const started = performance.now();
      const ms = (await page.evaluate(`(async () => {
        const tool = (await document.modelContext.getTools()).find((t) => t.name === 'searchProducts');
        const start = performance.now();
        await document.modelContext.executeTool(tool, { query: 'bench' });
        return performance.now() - start;
      })()`)) as number;
      if (i < 10) continue;
      cdp.push(performance.now() - started);
      inPage.push(ms);
    }
    return {
      calls,
      callMs: median(totals),
      p10CallMs: percentile(totals, 0.1),
      p90CallMs: percentile(totals, 0.9),
      inPageMs: median(inPage),
      cdpMs: median(cdp),
      load: loadavg()[0] ?? 0,
      hops: Object.fromEntries(Object.entries(hops).map(([hop, values]) => [hop, median(values)])),
    };
  } finally {
    await rig.close();
    await site.close();
  }
}

/** The figures as the lines of bench/results.md's relay section. */
export function relayReport(figures: RelayFigures): string {
  const ms = (value: number) => `${value.toFixed(2)} ms`;
  const rows = Object.entries(figures.hops).map(([hop, value]) => `| ${hop} | ${ms(value)} |`);
  return [
    `WebMCP relay, a read-only site tool, ${figures.calls} calls after 10 warm-up, medians on loopback (${cpus().length} cores, load average ${figures.load.toFixed(1)} while measured):`,
    `call through the relay ${ms(figures.callMs)} (p10 ${ms(figures.p10CallMs)}, p90 ${ms(figures.p90CallMs)}); the same tool over CDP ${ms(figures.cdpMs)}, its execution in the page ${ms(figures.inPageMs)};`,
    `relay overhead (call minus in-page execution) ${ms(figures.callMs - figures.inPageMs)} (target ≤ 5 ms).`,
    '',
    '| hop (median of each) | time |',
    '| --- | --- |',
    ...rows,
  ].join('\n');
}

// `node --import tsx bench/relayLatency.ts`: measures the relay alone (no peers needed) and updates its section.
if (import.meta.url === `file://${process.argv[1]}`) {
  const report = relayReport(await measureRelay(Number(process.env.BENCH_CALLS ?? 200)));
  if (process.env.BENCH_WRITE !== '0') writeResultsSection('relay-latency', report);
  process.stdout.write(`${report}\n`);
}
