// The shared browser's choke point does not depend on tabward's environment (an attack review): each client's
// context sends through its own egress proxy, loopback included. Playwright sends loopback addresses through a
// context's proxy only while PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK is unset; with it set in tabward's
// environment, after a sensitive read a page's WebSocket to a server on 127.0.0.1 went direct, the token in its
// address, and the audit said nothing. The context now names `<-loopback>` itself (sharedIsolatedBrowser.ts).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { binPath } from '../helpers/mcpClient.ts';
import { type Connected, clientsOf, startMcpHttp, stopAll } from '../helpers/mcpHttpClients.ts';
import type { RunningTabward } from '../helpers/tabwardProcess.ts';

const token = 'ghp_loopbackToken5150';
let site: Fixture;
let trap: Server;
/** What reached the server on 127.0.0.1 (the first bytes of each connection). */
const reached: string[] = [];
const home = mkdtempSync(join(tmpdir(), 'tabward-shared-loopback-'));
let tabward: RunningTabward | undefined;
const open: Connected[] = [];
const { connect, call } = clientsOf(() => tabward as RunningTabward, open);

before(async () => {
  site = await startFixture(
    {
      '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
      '/acme': (_req, _body, res) => html(res, '<title>acme</title><p>acme</p>'),
    },
    { tls: true },
  );
  trap = createServer((socket) => {
    socket.once('data', (data) => reached.push(data.subarray(0, 200).toString('latin1')));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', () => resolve()));
  // The environment tabward is started in (inherited from this test's process).
  process.env.PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK = '1';
  tabward = await startMcpHttp([], home);
});
after(async () => {
  await stopAll(tabward, open);
  await site?.close();
  trap?.close();
  rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

test('after a sensitive read, a page’s WebSocket to a loopback server meets the choke point, whatever the environment', async () => {
  const { client } = await connect();
  await call(client, 'navigate_page', { url: site.url('github.com', '/acme') });
  const port = (trap.address() as { port: number }).port;
  const script = {
    function: `async () => {
      const text = await fetch('/settings/tokens').then((r) => r.text());
      const secret = /ghp_\\w+/.exec(text)?.[0];
      return new Promise((done) => { const socket = new WebSocket('ws://127.0.0.1:${port}/ws?' + secret); socket.onopen = () => done('open'); socket.onerror = () => done('error'); setTimeout(() => done('timeout'), 3000); });
    }`,
  };
  // The script asks the human (a script on a sensitive site's page): approved from the terminal's inbox.
  let result = await call(client, 'evaluate_script', script);
  const question = /question (\w+)/.exec(result.text)?.[1];
  if (question) {
    execFileSync(process.execPath, [binPath, 'approvals', 'approve', question], {
      env: { ...process.env, TABWARD_HOME: home },
    });
    result = await call(client, 'evaluate_script', script);
  }
  assert.match(result.text, /"error"/, result.text);
  assert.deepEqual(reached, []);
  const audit = readFileSync(join(home, 'audit.jsonl'), 'utf8');
  assert.match(
    audit,
    new RegExp(`"url":"ws://127\\.0\\.0\\.1:${port}/ws\\?${token}"[^\\n]*"decision":"block"`),
  );
});
