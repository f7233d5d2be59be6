// The cost of the guard: one policy decision with 1,000 user rules (median and 99th percentile), and a tool call's round trip through the
// ToolRunner (guard + audit) against calling the same tool's handler directly, in one process, call by call
// alternated; medians.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../src/audit/auditLog.ts';
import { BrowserSession } from '../src/browser/session.ts';
import { noApprover } from '../src/core/approvals.ts';
import { decide } from '../src/core/guard.ts';
import { Secrets } from '../src/core/secrets.ts';
import { defaultRules, parseRulesText, RuleSet } from '../src/core/sensitiveRules.ts';
import { browserTools } from '../src/tools/catalogue.ts';
import { ToolRunner } from '../src/tools/runner.ts';

export interface GuardFigures {
  readonly decisionUs: number;
  readonly decisionP99Us: number;
  readonly decisionDefaultsUs: number;
  readonly guardedMs: number;
  readonly directMs: number;
  /** Guarded over bare, the median of call-by-call ratios. */
  readonly ratio: number;
}

export async function measureGuard(chrome: string, url: string): Promise<GuardFigures> {
  const userRules = Array.from({ length: 1000 }, (_, i) => `*://*.corp${i}.example/admin${i}/*`).join('\n');
  const many = new RuleSet([...defaultRules(), ...parseRulesText(userRules, 'bench').rules]);
  const few = new RuleSet(defaultRules());
  const facts = {
    tool: 'click',
    kind: 'write' as const,
    mode: 'shared' as const,
    tab: { id: 'p1', ownedByAgent: true },
    frames: [{ url: 'https://intranet.example/wiki/page' }, { url: 'https://intranet.example/' }],
    carriesData: true,
    taintedOrigins: ['https://github.com'],
    policy: 'default' as const,
    approveAll: true,
  };
  const time = (rules: RuleSet, n: number) => {
    const each: number[] = [];
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      decide(facts, rules);
      each.push((performance.now() - start) * 1000);
    }
    each.sort((a, b) => a - b);
    return { median: each[Math.floor(n / 2)] ?? 0, p99: each[Math.floor(n * 0.99)] ?? 0 };
  };
  time(many, 500);
  const decision = time(many, 5000);
  const decisionDefaults = time(few, 5000);

  const session = new BrowserSession({
    mode: 'isolated',
    headless: true,
    executablePath: chrome,
    chromeArgs: [],
    attach: {},
    attachTimeoutMs: 10_000,
    notify: () => undefined,
  });
  const context = { session, secrets: new Secrets(new Map()), timeoutMs: 15_000 };
  const runner = new ToolRunner({
    tools: browserTools,
    context,
    rules: many,
    approver: noApprover,
    audit: new AuditLog(join(mkdtempSync(join(tmpdir(), 'bench-audit-')), 'audit.jsonl')),
    policy: 'default',
    autoSwitch: false,
  });
  await runner.call('new_page', { url }, { frontEnd: 'bench' });
  const snapshotTool = browserTools.find((tool) => tool.name === 'take_snapshot');
  if (!snapshotTool) throw new Error('no take_snapshot');
  // Alternated, call by call, so that warming up and the machine's noise fall on both alike.
  const rounds = 60;
  const guarded: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < rounds + 5; i++) {
    let start = performance.now();
    await runner.call('take_snapshot', {}, { frontEnd: 'bench' });
    if (i >= 5) guarded.push(performance.now() - start);
    start = performance.now();
    await snapshotTool.handle({}, context, await snapshotTool.target({}, context));
    if (i >= 5) direct.push(performance.now() - start);
  }
  const guardedMs = medianOf(guarded);
  const directMs = medianOf(direct);
  // The median of the pairs' ratios: a slow moment of the machine falls on both calls of a pair.
  const ratio = medianOf(guarded.map((ms, i) => ms / (direct[i] ?? ms)));
  await session.close();
  return {
    decisionUs: decision.median,
    decisionP99Us: decision.p99,
    decisionDefaultsUs: decisionDefaults.median,
    guardedMs,
    directMs,
    ratio,
  };
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
