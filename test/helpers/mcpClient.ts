// Starts `bin/tabward mcp` as a real subprocess with a temporary TABWARD_HOME and connects the real MCP SDK
// client to it over stdio. The scripted human answers elicitation requests.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { ScriptedHuman } from '../../src/demo/scriptedHuman.ts';
import { testChromeArgs } from './fixtureServer.ts';

// The checkout's launcher: the bundle when it is fresh, else the sources (bin/tabward runs the bundle only).
export const binPath = fileURLToPath(new URL('../../scripts/tabward-dev.mjs', import.meta.url));

export interface CallOutcome {
  readonly text: string;
  readonly isError: boolean;
  readonly images: number;
}

export interface McpUnderTest {
  readonly client: Client;
  readonly human: ScriptedHuman;
  readonly home: string;
  readonly auditPath: string;
  readonly stderr: () => string;
  call(name: string, args?: Record<string, unknown>): Promise<CallOutcome>;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly args?: readonly string[];
  /**
   * Declare elicitation so the scripted human is asked (default true); or the capability to declare and the
   * handler that answers in its place.
   */
  readonly elicitation?:
    | boolean
    | { readonly capability: Record<string, object>; readonly answer: ElicitAnswer };
  readonly env?: Record<string, string>;
  /** Leave the desktop notification on (default off: no pop-ups on a developer's screen). */
  readonly notify?: boolean;
}

export type ElicitAnswer = (params: {
  message: string;
  mode?: string;
  url?: string;
}) => Promise<ElicitResult>;

export async function startMcp(options: StartOptions = {}): Promise<McpUnderTest> {
  const home = mkdtempSync(join(tmpdir(), 'tabward-home-'));
  const auditPath = join(home, 'audit.jsonl');
  const args = [
    binPath,
    'mcp',
    '--audit-log',
    auditPath,
    ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]),
    // The scripted human answers at once, a decline included: here that is a human's answer. No desktop
    // notification pops up on a developer's screen. A test's own args come after and win.
    '--approval-human-ms',
    '0',
    ...(options.notify ? [] : ['--no-notify']),
    ...(options.args ?? []),
  ];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: { ...(process.env as Record<string, string>), TABWARD_HOME: home, ...options.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const custom = typeof options.elicitation === 'object' ? options.elicitation : undefined;
  const client = new Client(
    { name: 'tabward-test', version: '1' },
    {
      capabilities: options.elicitation === false ? {} : { elicitation: custom ? custom.capability : {} },
    },
  );
  const human = new ScriptedHuman();
  // The SDK refuses an elicitation handler on a client that does not declare the capability.
  if (custom)
    client.setRequestHandler(ElicitRequestSchema, (request) =>
      custom.answer(request.params as { message: string; mode?: string; url?: string }),
    );
  else if (options.elicitation !== false) human.attach(client);
  await client.connect(transport);
  return {
    client,
    human,
    home,
    auditPath,
    stderr: () => stderr,
    call: (name, callArgs = {}) => callThrough(client, name, callArgs, 120_000),
    close: async () => {
      await client.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** One tool call through an SDK client, as the tests read it: the text parts, the error flag, the image count. */
export async function callThrough(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  timeoutMs: number,
): Promise<CallOutcome> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs });
  const parts = result.content as { type: string; text?: string }[];
  return {
    text: parts.map((part) => part.text ?? '').join('\n'),
    isError: result.isError === true,
    images: parts.filter((part) => part.type === 'image').length,
  };
}

/**
 * The line of the element with this accessible name, its ref captured: the name follows its role, bare or quoted
 * (snapshotFormat.ts shownName), and a bare one ends where a value, state, URL, ref or option list begins.
 */
export function namedElementLine(name: string): RegExp {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `(?:"${escaped}"|^[ \\t]*(?:- )?(?:#+ )?\\S+ ${escaped}(?= (?:="|\\[|@|[/#?]|[a-z][a-z0-9+.-]*://|options: )))[^\\n]*@(\\S+)`,
    'm',
  );
}

/** The ref of the element with this accessible name in a snapshot text. */
export function refOf(snapshot: string, name: string): string {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // With allRefs, a plain text line ends in its ref.
  const match =
    namedElementLine(name).exec(snapshot) ?? new RegExp(`^\\s*${escaped} @(\\S+)$`, 'm').exec(snapshot);
  if (!match?.[1]) throw new Error(`no ref for "${name}" in:\n${snapshot}`);
  return match[1];
}
