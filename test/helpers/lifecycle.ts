// Fault injection around one tabward: a place of its own (TMPDIR and TABWARD_HOME under one folder), a real MCP
// SDK client over stdio that knows tabward's pid, and the checks every such test ends with: no Chromium of that
// place still running, nothing left in its temp folder, and every call in its audit log started and ended.

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { testChromeArgs } from './fixtureServer.ts';
import { binPath, type CallOutcome, callThrough } from './mcpClient.ts';
import { waitFor } from './waitFor.ts';

export interface Place {
  readonly root: string;
  /** tabward's TMPDIR: its profiles, Playwright's and Chromium's temp folders land here. */
  readonly tmp: string;
  readonly home: string;
  readonly auditPath: string;
  readonly env: Record<string, string>;
}

export function makePlace(): Place {
  const root = mkdtempSync(join(tmpdir(), 'tabward-life-'));
  const tmp = join(root, 'tmp');
  const home = join(root, 'home');
  mkdirSync(tmp);
  mkdirSync(home);
  return {
    root,
    tmp,
    home,
    auditPath: join(home, 'audit.jsonl'),
    env: { ...(process.env as Record<string, string>), TMPDIR: tmp, TABWARD_HOME: home },
  };
}

/** The arguments of `tabward mcp` for a place (test browser flags, the place's audit log). */
export function mcpArgs(place: Place, extra: readonly string[] = []): string[] {
  return [
    binPath,
    'mcp',
    '--audit-log',
    place.auditPath,
    ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]),
    ...extra,
  ];
}

export interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly cmd: string;
}

/** Running processes whose command line mentions `text` (a Chromium's --user-data-dir under a place). */
export function processesMentioning(text: string): Proc[] {
  const found: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (!cmd.includes(text)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The state and ppid follow the command name in parentheses; a zombie is already gone.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') found.push({ pid: Number(entry), ppid: Number(ppid), cmd: cmd.slice(0, 200) });
    } catch {
      // exited while being read
    }
  }
  return found;
}

export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** What is in a place's temp folder, less tsx's compile cache (the checkout runs tabward's sources through tsx). */
export function tempLeftovers(place: Place): string[] {
  return readdirSync(place.tmp).filter((name) => !name.startsWith('tsx-'));
}

/** Waits until no Chromium of the place runs and its temp folder is empty; fails naming what is left. */
export async function assertNothingLeft(place: Place, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    `nothing left of ${place.tmp}`,
    () => processesMentioning(place.tmp).length === 0 && tempLeftovers(place).length === 0,
    { timeoutMs },
  ).catch(() => {
    const procs = processesMentioning(place.tmp).map((proc) => `pid ${proc.pid} (ppid ${proc.ppid})`);
    throw new Error(
      `left behind: processes [${procs.join(', ')}], files [${tempLeftovers(place).join(', ')}]`,
    );
  });
}

interface AuditLine {
  readonly call?: string;
  readonly tool: string;
  readonly mode: string;
  readonly outcome: string;
  readonly error?: string;
}

/** The completion record of each call, in order; throws if any call started and never ended (or vice versa). */
export function auditedCalls(place: Place): AuditLine[] {
  const lines = readFileSync(place.auditPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditLine);
  const starts = lines.filter((line) => line.outcome === 'started');
  const ends = lines.filter((line) => line.outcome !== 'started' && line.call);
  const unended = starts.filter((start) => !ends.some((end) => end.call === start.call));
  const unstarted = ends.filter((end) => !starts.some((start) => start.call === end.call));
  if (unended.length > 0 || unstarted.length > 0 || starts.length === 0)
    throw new Error(`audit log incomplete:\n${lines.map((line) => JSON.stringify(line)).join('\n')}`);
  return ends;
}

export interface TabwardUnderTest {
  readonly client: Client;
  readonly pid: number;
  readonly stderr: () => string;
  call(name: string, args?: Record<string, unknown>): Promise<CallOutcome>;
  close(): Promise<void>;
}

/** `tabward mcp` in a place, over stdio, with the real SDK client. */
export async function startIn(place: Place, extra: readonly string[] = []): Promise<TabwardUnderTest> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: mcpArgs(place, extra),
    env: place.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'tabward-life', version: '1' }, { capabilities: {} });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error('tabward did not start');
  return {
    client,
    pid,
    stderr: () => stderr,
    call: (name, args = {}) => callThrough(client, name, args, 60_000),
    close: () => client.close(),
  };
}

export function removePlace(place: Place): void {
  rmSync(place.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
