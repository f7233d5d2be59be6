// Measuring one server: cold start, tools/list tokens, and per page the navigate+snapshot latency, snapshot
// tokens and coverage; the server process's memory at the end.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import type { BenchPage } from './pages.ts';
import type { ServerUnderTest } from './servers.ts';

export interface PageFigures {
  readonly tokens: number;
  readonly latencyMs: number;
  readonly textCoverage: number;
  readonly controlCoverage: number;
}

export interface RunFigures {
  readonly toolsTokens: number;
  readonly toolsCount: number;
  readonly coldToolsMs: number;
  readonly coldFirstReadMs: number;
  /** The first navigate+snapshot after tools/list and a pause (measureFirstReadAfterPause). */
  readonly firstReadAfterPauseMs?: number;
  readonly rssMb: number;
  readonly pages: Record<string, PageFigures>;
  /** Going to a page and seeing it in the fewest calls the server offers: calls, and the median time over pages. */
  readonly lookCalls: number;
  readonly lookMs: number;
}

export const tokens = (text: string): number => encode(text).length;

/** Starts the server as an MCP client would (stdio) and connects the SDK's client to it. */
export async function connectTo(server: ServerUnderTest) {
  const transport = new StdioClientTransport({
    command: server.command,
    args: [...server.args],
    stderr: 'ignore',
    env: { ...process.env, CI: '1' } as Record<string, string>,
  });
  const client = new Client({ name: 'tabward-bench', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

export async function measureServer(
  server: ServerUnderTest,
  pages: readonly BenchPage[],
  urlOf: (page: BenchPage) => string,
): Promise<RunFigures> {
  const started = performance.now();
  const { client, transport } = await connectTo(server);
  const { tools } = await client.listTools();
  const coldToolsMs = performance.now() - started;
  const call = async (request: { name: string; arguments: Record<string, unknown> }) => {
    const result = await client.callTool(request, undefined, { timeout: 60_000 });
    const text = (result.content as { type: string; text?: string }[])
      .map((part) => part.text ?? '')
      .join('\n');
    if (result.isError) throw new Error(`${server.name} ${request.name}: ${text.slice(0, 300)}`);
    return text;
  };
  const figures: Record<string, PageFigures> = {};
  // The first read starts the browser (each server starts it lazily): it is the cold start's figure, and the pages
  // are then measured on a running browser, the first of them as the others (it had carried the launch).
  const first = pages[0];
  if (first) {
    await call(server.navigate(`${urlOf(first)}?cold`));
    await call(server.snapshot);
  }
  const coldFirstReadMs = first ? performance.now() - started : 0;
  for (const page of pages) {
    const before = performance.now();
    await call(server.navigate(urlOf(page)));
    const snapshot = await call(server.snapshot);
    const latencyMs = performance.now() - before;
    figures[page.name] = { tokens: tokens(snapshot), latencyMs, ...coverage(snapshot, page, server.ref) };
  }
  const looks: number[] = [];
  for (const page of pages) {
    const before = performance.now();
    let shown = '';
    for (const request of server.look(`${urlOf(page)}?look`)) shown = await call(request);
    looks.push(performance.now() - before);
    if (!server.ref.test(shown))
      throw new Error(`${server.name}: its look at ${page.name} showed no element refs`);
  }
  const rssMb = transport.pid ? readRssMb(transport.pid) : 0;
  await client.close();
  return {
    toolsTokens: tokens(JSON.stringify(tools)),
    toolsCount: tools.length,
    coldToolsMs,
    coldFirstReadMs,
    rssMb,
    pages: figures,
    lookCalls: server.look('about:blank').length,
    lookMs: [...looks].sort((a, b) => a - b)[Math.floor(looks.length / 2)] ?? 0,
  };
}

/**
 * An agent's first read as it happens in a session: the client lists the tools at start-up, the model thinks, then
 * the first navigate+snapshot. Its latency alone (the pause not counted): what a lazily started browser costs.
 */
export async function measureFirstReadAfterPause(
  server: ServerUnderTest,
  url: string,
  pauseMs: number,
): Promise<number> {
  const { client } = await connectTo(server);
  try {
    await client.listTools();
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    const before = performance.now();
    for (const request of [server.navigate(url), server.snapshot]) {
      const result = await client.callTool(request, undefined, { timeout: 60_000 });
      if (result.isError) throw new Error(`${server.name} ${request.name} failed after the pause`);
    }
    return performance.now() - before;
  } finally {
    await client.close();
  }
}

/** Share of the page's text the snapshot lets an agent read, and of its controls it lets an agent address. */
export function coverage(
  snapshot: string,
  page: BenchPage,
  ref: RegExp,
): { textCoverage: number; controlCoverage: number } {
  const normal = (text: string) => text.replace(/\\"/g, '"').replace(/\s+/g, ' ').trim();
  const flat = normal(snapshot);
  const lines = snapshot.split('\n').map(normal);
  const read = page.texts.filter((text) => flat.includes(normal(text))).length;
  const addressed = page.controls.filter((name) =>
    lines.some((line) => line.includes(normal(name)) && ref.test(line)),
  ).length;
  return {
    textCoverage: read / Math.max(1, page.texts.length),
    controlCoverage: addressed / Math.max(1, page.controls.length),
  };
}

function readRssMb(pid: number): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
}
