// Several agents on one `tabward mcp --http` (issue 36): 1, 2, 4 and 8 MCP clients at once, each in a browser context
// of its own in the one shared Chromium, each doing navigate + snapshot + click over the bench pages for ROUNDS
// rounds. Per row: steps per second over all clients, p50/p95 of one step (navigate+snapshot+click) as its client
// saw it, and the memory the row's clients add (PSS of tabward and its Chromium's processes, with the clients'
// contexts open, less the same with none; per client). Then a slow page: one client's tab waits on a page that never
// answers while another client works; that client's step p50 against the same client alone, alternated.
// Everything shares this machine's CPUs, so throughput grows with clients only while the CPUs are not the limit.
// Run alone: `node --import tsx bench/concurrentClients.ts` (CLIENTS_ROUNDS: rounds per client, default 3).

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { benchPages } from './pages.ts';
import { writeResultsSection } from './resultsFile.ts';

const rounds = Number(process.env.CLIENTS_ROUNDS ?? 3);
const root = new URL('..', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export interface ClientsRow {
  readonly clients: number;
  readonly steps: number;
  readonly stepsPerSecond: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly errors: number;
  /** PSS added per client (MB), contexts and tabs open. */
  readonly mbPerClient: number;
}

const held: ServerResponse[] = [];
const site = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/slow') {
    held.push(res);
    return;
  }
  const page = benchPages[Number(path.slice(1))];
  if (!page) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page.html);
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
const sitePort = (site.address() as AddressInfo).port;
const pageUrl = (index: number, client: number) => `http://127.0.0.1:${sitePort}/${index}?c=${client}`;

const home = mkdtempSync(join(tmpdir(), 'bench-clients-'));
const tabward = await startTabward();

async function startTabward(): Promise<{ child: ChildProcess; url: string; token: string }> {
  const child = spawn(
    process.execPath,
    [join(root, 'bin/tabward'), 'mcp', '--http', '0', '--mode', 'isolated', '--approval', 'deny'],
    { env: { ...process.env, TABWARD_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (process.env.CLIENTS_LOG) process.stderr.write(chunk);
  });
  for (let waited = 0; waited < 300; waited++) {
    const url = /MCP over Streamable HTTP at (\S+)/.exec(output)?.[1];
    const token = /new bearer token for MCP over HTTP.*: (\S+)\n/.exec(output)?.[1];
    if (url && token) return { child, url, token };
    await sleep(100);
  }
  throw new Error(`tabward mcp --http did not start: ${output}`);
}

interface BenchClient {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
}

async function connect(): Promise<BenchClient> {
  const transport = new StreamableHTTPClientTransport(new URL(tabward.url), {
    requestInit: { headers: { Authorization: `Bearer ${tabward.token}` } },
  });
  const client = new Client({ name: 'bench-clients', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const text = (result.content as { text?: string }[]).map((part) => part.text ?? '').join('\n');
  if (result.isError) throw new Error(`${name}: ${text.slice(0, 200)}`);
  return text;
}

/** One step: go to the page, read it, click its first button (else its first element with a ref). */
async function step(client: Client, url: string): Promise<void> {
  await call(client, 'navigate_page', { url });
  const snapshot = await call(client, 'take_snapshot', {});
  const ref = /^\s*button [^\n]*@(\S+)/m.exec(snapshot)?.[1] ?? /@(f?\d*e\d+)/.exec(snapshot)?.[1];
  if (ref) await call(client, 'click', { ref });
}

/** Each client's steps, timed; failures counted, not thrown. */
async function work(
  client: Client,
  index: number,
  times: number[],
  errors: { count: number },
): Promise<void> {
  for (let round = 0; round < rounds; round++)
    for (let page = 0; page < benchPages.length; page++) {
      const started = performance.now();
      try {
        await step(client, pageUrl(page, index));
        times.push(performance.now() - started);
      } catch (error) {
        errors.count++;
        if (errors.count <= 3) process.stderr.write(`bench: a step failed: ${String(error)}\n`);
      }
    }
}

async function closeAll(clients: readonly BenchClient[]): Promise<void> {
  for (const { client, transport } of clients) {
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

/** PSS (MB) of tabward and every process under it (its Chromium and that one's helpers). */
function treePssMb(pid: number): number {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const inTree = (candidate: number): boolean => {
    for (let at = candidate, hops = 0; at > 1 && hops < 50; hops++) {
      if (at === pid) return true;
      at = parents.get(at) ?? 0;
    }
    return false;
  };
  let kb = 0;
  for (const candidate of parents.keys()) {
    if (!inTree(candidate)) continue;
    try {
      const rollup = readFileSync(`/proc/${candidate}/smaps_rollup`, 'utf8');
      kb += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return kb / 1024;
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
};

async function row(count: number, baselineMb: number): Promise<ClientsRow> {
  const clients = await Promise.all(Array.from({ length: count }, () => connect()));
  // A first page each: contexts open and warm before the clock starts.
  await Promise.all(clients.map(({ client }, index) => step(client, pageUrl(0, index))));
  const times: number[] = [];
  const errors = { count: 0 };
  const started = performance.now();
  await Promise.all(clients.map(({ client }, index) => work(client, index, times, errors)));
  const wallMs = performance.now() - started;
  const pss = treePssMb(tabward.child.pid ?? 0);
  await closeAll(clients);
  return {
    clients: count,
    steps: times.length,
    stepsPerSecond: (times.length / wallMs) * 1000,
    p50Ms: percentile(times, 50),
    p95Ms: percentile(times, 95),
    errors: errors.count,
    mbPerClient: (pss - baselineMb) / count,
  };
}

/** One client's step p50, alone and while another client's tab waits on a page that never answers, alternated. */
async function slowNeighbour(): Promise<{ aloneMs: number; besideSlowMs: number }> {
  const [worker, slow] = await Promise.all([connect(), connect()]);
  await step(worker.client, pageUrl(0, 0));
  await call(slow.client, 'new_page', { url: 'about:blank' });
  const alone: number[] = [];
  const besideSlow: number[] = [];
  for (let round = 0; round < rounds * 2; round++) {
    const waiting = round % 2 === 1;
    const stalled = waiting
      ? call(slow.client, 'navigate_page', { url: `http://127.0.0.1:${sitePort}/slow` }).catch(() => '')
      : undefined;
    if (waiting) while (held.length === 0) await sleep(10);
    for (let page = 0; page < benchPages.length; page++) {
      const started = performance.now();
      await step(worker.client, pageUrl(page, 0));
      (waiting ? besideSlow : alone).push(performance.now() - started);
    }
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'text/html' }).end('<p>late</p>');
    await stalled;
  }
  await closeAll([worker, slow]);
  return { aloneMs: percentile(alone, 50), besideSlowMs: percentile(besideSlow, 50) };
}

try {
  // The browser up, no client context open: the baseline the rows' memory is counted from.
  const warm = await connect();
  await step(warm.client, pageUrl(0, 0));
  await closeAll([warm]);
  await sleep(1_000);
  const baselineMb = treePssMb(tabward.child.pid ?? 0);
  const rows: ClientsRow[] = [];
  for (const count of [1, 2, 4, 8]) {
    rows.push(await row(count, baselineMb));
    process.stderr.write(`bench: ${count} client(s) done\n`);
    await sleep(1_000);
  }
  const neighbour = await slowNeighbour();
  const one = rows[0] as ClientsRow;
  const table = [
    `${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ${rounds} rounds of ${benchPages.length} pages per client, load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}, baseline (browser up, no client) ${baselineMb.toFixed(0)} MB PSS`,
    '',
    '| clients | steps | steps/s | × 1 client | step p50 | step p95 | errors | MB per client |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (each) =>
        `| ${each.clients} | ${each.steps} | ${each.stepsPerSecond.toFixed(1)} | ${(each.stepsPerSecond / one.stepsPerSecond).toFixed(2)} | ${each.p50Ms.toFixed(0)} ms | ${each.p95Ms.toFixed(0)} ms | ${each.errors} | ${each.mbPerClient.toFixed(1)} |`,
    ),
    '',
    `A slow page in a neighbour's tab (a navigation that never gets its answer): another client's step p50 ${neighbour.besideSlowMs.toFixed(0)} ms beside it, ${neighbour.aloneMs.toFixed(0)} ms alone (ratio ${(neighbour.besideSlowMs / neighbour.aloneMs).toFixed(2)}).`,
  ].join('\n');
  process.stdout.write(`${table}\n`);
  writeResultsSection(
    'concurrent-clients',
    `Several clients on one \`tabward mcp --http\` (step = navigate + snapshot + click):\n\n${table}`,
  );
} finally {
  for (const res of held.splice(0)) res.destroy();
  tabward.child.kill('SIGTERM');
  await new Promise((done) => tabward.child.once('exit', done));
  site.close();
  if (!process.env.CLIENTS_LOG) rmSync(home, { recursive: true, force: true });
  else process.stderr.write(`bench: home kept: ${home}\n`);
}
