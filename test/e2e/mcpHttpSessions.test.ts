// `tabward mcp --http` answers like the Streamable HTTP spec asks (issue 17): a session id it does not know
// (it restarted, or the session ended) is 404, which tells a client to initialize again, never 400; a body over
// its one 4 MiB limit is 413 with a clear message, starting a session or inside one, never a 500.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { binPath } from '../helpers/mcpClient.ts';
import { initializeBody, postMcp } from '../helpers/rawMcp.ts';
import { waitFor } from '../helpers/waitFor.ts';

let server: ChildProcess;
let home = '';
let mcpUrl = '';
let token = '';

before(async () => {
  home = mkdtempSync(join(tmpdir(), 'tabward-http-sessions-'));
  server = spawn(process.execPath, [binPath, 'mcp', '--mode', 'isolated', '--http', '0'], {
    env: { ...process.env, TABWARD_HOME: home },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  server.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await waitFor('the start-up lines', () => {
    mcpUrl = /MCP over Streamable HTTP at (\S+)/.exec(stderr)?.[1] ?? '';
    token = /new bearer token for MCP over HTTP.*: (\S+)\n/.exec(stderr)?.[1] ?? '';
    if (server.exitCode !== null) throw new Error(`tabward exited ${server.exitCode}`);
    return Boolean(mcpUrl && token);
  }).catch((error: unknown) => {
    throw new Error(`${String(error)}\nstderr: ${stderr}`);
  });
});
after(async () => {
  // tabward writes into its home as it stops (its audit log, its browser's profile): the home goes once it is gone.
  const exited = new Promise((resolve) => server?.once('exit', resolve));
  server?.kill('SIGTERM');
  if (server?.exitCode === null)
    await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
  rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const post = (body: string, session?: string) => postMcp(mcpUrl, token, body, session);
const initialize = initializeBody;
const over = 'x'.repeat(4 * 1024 * 1024 + 10);

test('an unknown session id is 404 (initialize again), for POST and GET', async () => {
  const posted = await post(
    JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    'no-such-session',
  );
  assert.equal(posted.status, 404);
  assert.match(await posted.text(), /No such MCP session.*initialize again/);
  const streamed = await fetch(mcpUrl, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': 'gone' },
  });
  assert.equal(streamed.status, 404);
  await streamed.text();
});

test('a body over 4 MiB is 413, starting a session and inside one', async () => {
  const refused = await post(initialize(over));
  assert.equal(refused.status, 413);
  assert.match(await refused.text(), /over the 4194304-byte \(4 MiB\) limit; nothing was run/);
  const opened = await post(initialize());
  assert.equal(opened.status, 200);
  const session = opened.headers.get('mcp-session-id') ?? '';
  await opened.text();
  const inside = await post(
    JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { padding: over } }),
    session,
  );
  assert.equal(inside.status, 413);
  await inside.text();
});
