// tabward in-process, for fast tests of the call path: the guarded browser as `tabward mcp` assembles it
// (assembleGuardedBrowser, createMcpServer, as src/cli/runMcp.ts wires them), its MCP server joined to the real
// SDK client by the SDK's in-memory transport, the scripted human answering elicitation in the same process.
// One browser per file (`startInProcess`, started lazily on the first call that needs it); each test `connect`s
// with a call path of its own (grants, taint, audit log) over that browser, as a fresh `tabward mcp` would have.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { AuditLog } from '../../src/audit/auditLog.ts';
import {
  assembleGuardedBrowser,
  type GuardedBrowser,
  type GuardedBrowserOptions,
} from '../../src/cli/assemble.ts';
import type { AuditEntry, AuditStart } from '../../src/core/audit.ts';
import type { ToolCategory, WritePolicy } from '../../src/core/kinds.ts';
import { ScriptedHuman } from '../../src/demo/scriptedHuman.ts';
import { type ApprovalMode, createMcpServer } from '../../src/mcp/mcpServer.ts';
import { ToolRunner } from '../../src/tools/runner.ts';
import { testChromeArgs } from './fixtureServer.ts';
import { type CallOutcome, callThrough } from './mcpClient.ts';

export interface InProcessOptions {
  readonly mode?: GuardedBrowserOptions['mode'];
  /** Sensitive-page patterns besides the defaults, one a line (written to a --rules file). */
  readonly rules?: readonly string[];
  /** The text of a --secrets dotenv file. */
  readonly secrets?: string;
  readonly wsEndpoint?: string;
  /** Deadline of one browser step (--timeout). */
  readonly timeoutMs?: number;
  /** --tools: the tool categories offered (default core). */
  readonly tools?: readonly ToolCategory[];
  /** --output-dir, --download-max-mb, --download-max-count. */
  readonly downloads?: { readonly dir?: string; readonly maxMb?: number; readonly maxCount?: number };
}

export interface InProcessBrowser {
  readonly browser: GuardedBrowser;
  readonly home: string;
  /** A client on a fresh call path over this browser. */
  connect(options?: ConnectOptions): Promise<InProcessMcp>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  readonly policy?: WritePolicy;
  /** --approval (default auto: elicitation when the client declares it). */
  readonly approval?: ApprovalMode;
  /** Declare elicitation so the scripted human is asked (default true). */
  readonly elicitation?: boolean;
  readonly approveAllTtlMs?: number;
  /** The clock site grants expire by. */
  readonly clock?: () => number;
}

export type AuditRecord = (AuditEntry | AuditStart) & { readonly call?: string };

/** The addresses the audit says left although the choke point refused them (past every hook: `(egress)` events). */
export function sentAlthoughRefused(records: readonly AuditRecord[]): string[] {
  return records
    .filter(
      (record) =>
        record.tool === '(egress)' && 'error' in record && /sent although refused/.test(String(record.error)),
    )
    .map((record) => ('url' in record ? String(record.url) : ''));
}

export interface InProcessMcp {
  readonly client: Client;
  readonly human: ScriptedHuman;
  readonly runner: ToolRunner;
  readonly auditPath: string;
  call(name: string, args?: Record<string, unknown>): Promise<CallOutcome>;
  /** Every record of this client's audit log, in order. */
  audit(): AuditRecord[];
  close(): Promise<void>;
}

export async function startInProcess(options: InProcessOptions = {}): Promise<InProcessBrowser> {
  const home = mkdtempSync(join(tmpdir(), 'tabward-inproc-'));
  // The user's own rules file is read from TABWARD_HOME: this process's tests must not read the real one.
  process.env.TABWARD_HOME = home;
  const rulesFile = join(home, 'rules.txt');
  writeFileSync(rulesFile, `${(options.rules ?? []).join('\n')}\n`);
  const secretsFile = join(home, 'secrets.env');
  writeFileSync(secretsFile, options.secrets ?? '', { mode: 0o600 });
  const browser = await assembleGuardedBrowser(
    {
      mode: options.mode ?? 'isolated',
      rules: [rulesFile],
      secrets: secretsFile,
      auditLog: join(home, 'audit.jsonl'),
      policy: 'default',
      timeout: options.timeoutMs ?? 15_000,
      consent: false,
      headless: true,
      chromeArg: testChromeArgs,
      attachTimeout: 10_000,
      ...(options.wsEndpoint ? { wsEndpoint: options.wsEndpoint } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.downloads?.dir ? { outputDir: options.downloads.dir } : {}),
      ...(options.downloads?.maxMb ? { downloadMaxMb: options.downloads.maxMb } : {}),
      ...(options.downloads?.maxCount ? { downloadMaxCount: options.downloads.maxCount } : {}),
    },
    () => undefined,
  );
  // Each test connects a call path of its own: the assembled runner's, never used, must not add its taint to theirs.
  browser.runner.path.close();
  let clients = 0;
  return {
    browser,
    home,
    connect: (connectOptions = {}) =>
      connect(browser, join(home, `audit-${++clients}.jsonl`), connectOptions),
    close: async () => {
      await browser.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

async function connect(
  browser: GuardedBrowser,
  auditPath: string,
  options: ConnectOptions,
): Promise<InProcessMcp> {
  // The assembled runner's wiring (tools, session, secrets, network backstop, rules), with a call path of its own.
  const runner = new ToolRunner({
    ...browser.runner.options,
    audit: new AuditLog(auditPath),
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.approveAllTtlMs ? { approveAllTtlMs: options.approveAllTtlMs } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const server = createMcpServer({ runner, approval: options.approval ?? 'auto', version: 'test' });
  const elicits = options.elicitation !== false;
  const client = new Client(
    { name: 'tabward-in-process', version: '1' },
    { capabilities: elicits ? { elicitation: {} } : {} },
  );
  const human = new ScriptedHuman();
  if (elicits) human.attach(client);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    human,
    runner,
    auditPath,
    call: (name, args = {}) => callThrough(client, name, args, 60_000),
    audit: () =>
      (existsSync(auditPath) ? readFileSync(auditPath, 'utf8') : '')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditRecord),
    close: async () => {
      await client.close();
      await server.close();
      // As a tabward mcp process ending: its taint no longer counts at the browser's choke point; a tab still
      // holding a secret it typed (which makes every other host ask) holds it no more, and a sensitive page left open
      // (whose late requests, a favicon say, would taint the next client) is left.
      runner.path.close();
      const holding = browser.session.pages
        .list()
        .filter((tracked) => tracked.holdsTypedSecret || runner.options.rules.match(tracked.page.url()));
      await Promise.all(holding.map((tracked) => tracked.page.goto('about:blank').catch(() => undefined)));
    },
  };
}
