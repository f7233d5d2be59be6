// The cost of the guard: one policy decision with 1,000 user rules, and a tool call's round trip through the
// ToolRunner (guard + audit) against calling the same tool's handler directly, in one process.

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
  readonly decisionDefaultsUs: number;
  readonly guardedMs: number;
  readonly directMs: number;
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
    const start = performance.now();
    for (let i = 0; i < n; i++) decide(facts, rules);
    return ((performance.now() - start) * 1000) / n;
  };
  time(many, 200);
  const decisionUs = time(many, 2000);
  const decisionDefaultsUs = time(few, 2000);

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
  const rounds = 30;
  let start = performance.now();
  for (let i = 0; i < rounds; i++) await runner.call('take_snapshot', {}, { frontEnd: 'bench' });
  const guardedMs = (performance.now() - start) / rounds;
  start = performance.now();
  for (let i = 0; i < rounds; i++)
    await snapshotTool.handle({}, context, await snapshotTool.target({}, context));
  const directMs = (performance.now() - start) / rounds;
  await session.close();
  return { decisionUs, decisionDefaultsUs, guardedMs, directMs };
}
