// The cost of the network backstop (issue 16): every request of the agent's pages is paused twice, once by
// Playwright's route and once by CDP Fetch (for redirect hops). Measured in one process on the same Chromium,
// with the backstop and without it, alternated: requests per second a page gets through (a burst of small
// fetches), and navigate + snapshot through the ToolRunner. Medians.

import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../src/audit/auditLog.ts';
import { NetworkGuard } from '../src/browser/networkGuard.ts';
import { BrowserSession } from '../src/browser/session.ts';
import { ActionPasses } from '../src/core/actionPasses.ts';
import { noApprover } from '../src/core/approvals.ts';
import { Secrets } from '../src/core/secrets.ts';
import { defaultRules, RuleSet } from '../src/core/sensitiveRules.ts';
import { browserTools } from '../src/tools/catalogue.ts';
import { ToolRunner } from '../src/tools/runner.ts';
import type { BenchPage } from './pages.ts';

export interface BackstopFigures {
  readonly requestsPerSecond: { readonly guarded: number; readonly bare: number };
  readonly navigateSnapshotMs: { readonly guarded: number; readonly bare: number };
}

const burst = 200;

export async function measureBackstop(chrome: string, page: BenchPage): Promise<BackstopFigures> {
  const site = createServer((req, res) => {
    if (req.url?.startsWith('/ping')) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page.html);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const guarded = rig(chrome, true);
  const bare = rig(chrome, false);
  const rates = { guarded: [] as number[], bare: [] as number[] };
  const pages = { guarded: [] as number[], bare: [] as number[] };
  try {
    for (const one of [guarded, bare]) await one.runner.call('new_page', { url: `${origin}/` }, caller);
    for (let round = 0; round < 12; round++) {
      for (const [name, one] of [
        ['guarded', guarded],
        ['bare', bare],
      ] as const) {
        const tab = await one.session.target();
        const started = performance.now();
        await tab.page.evaluate(
          `Promise.all(Array.from({ length: ${burst} }, (_, i) => fetch('/ping?' + i).then((r) => r.text())))`,
        );
        if (round > 1) rates[name].push((burst * 1000) / (performance.now() - started));
        const before = performance.now();
        await one.runner.call('navigate_page', { url: `${origin}/?round=${round}` }, caller);
        await one.runner.call('take_snapshot', {}, caller);
        if (round > 1) pages[name].push(performance.now() - before);
      }
    }
  } finally {
    await Promise.all([guarded.session.close(), bare.session.close()]);
    site.close();
  }
  return {
    requestsPerSecond: { guarded: median(rates.guarded), bare: median(rates.bare) },
    navigateSnapshotMs: { guarded: median(pages.guarded), bare: median(pages.bare) },
  };
}

const caller = { frontEnd: 'bench' };

export function rig(
  chrome: string,
  withBackstop: boolean,
  extra: { readonly egressProxy?: false } = {},
): { session: BrowserSession; runner: ToolRunner } {
  const rules = new RuleSet(defaultRules());
  const network = withBackstop ? new NetworkGuard(rules, new ActionPasses(), new Set()) : undefined;
  const session = new BrowserSession({
    mode: 'isolated',
    headless: true,
    executablePath: chrome,
    chromeArgs: [],
    attach: {},
    attachTimeoutMs: 10_000,
    notify: () => undefined,
    ...(network ? { network } : {}),
    ...extra,
  });
  const runner = new ToolRunner({
    tools: browserTools,
    context: { session, secrets: new Secrets(new Map()), timeoutMs: 15_000 },
    rules,
    approver: noApprover,
    audit: new AuditLog(join(mkdtempSync(join(tmpdir(), 'bench-audit-')), 'audit.jsonl')),
    policy: 'default',
    autoSwitch: false,
    ...(network ? { network } : {}),
  });
  return { session, runner };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
