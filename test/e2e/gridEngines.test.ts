// Browser services other than a plain CDP endpoint, real parts on 127.0.0.1:
// - a Browserless stand-in (a small HTTP server that wants a bearer header, answers 429 a few times or holds the
//   handshake, then passes the connection to a real Chromium's CDP): busy is not down, the endpoint is never taken
//   out, the run waits within its deadline; the header's value is shown nowhere (/health, logs, results); a
//   handshake held a second time in one run is a failed start;
// - Playwright's own server (chromium.launchServer from playwright-core): `playwright+ws://` runs there, spoken
//   with `connect`, under the browser-wide gate (newBrowserCDPSession).

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { findChrome } from '../../src/browser/findChrome.ts';
import { type LaunchedChrome, launchChrome } from '../../src/browser/launch.ts';
import { testChromeArgs } from '../helpers/fixtureServer.ts';
import type { Loose } from '../helpers/loose.ts';
import { binPath } from '../helpers/mcpClient.ts';
import { usePortal } from '../helpers/recipeSite.ts';
import { tokenFile } from '../helpers/tokenFile.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'engines-token-0123456789';
const bearer = 'hdr-secret-5b1e77d2';

/** What the stand-in does with the next handshakes, and what it saw. */
interface Busy {
  tooMany: number;
  hold: number;
  holdMs: number;
  handshakes: number;
  unauthorised: number;
}

/** A Browserless stand-in in front of a real Chromium's CDP endpoint. */
async function startBrowserless(
  chrome: LaunchedChrome,
  busy: Busy,
): Promise<{ port: number; server: Server }> {
  const target = new URL(chrome.wsEndpoint);
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    busy.handshakes++;
    if (req.headers.authorization !== `Bearer ${bearer}`) {
      busy.unauthorised++;
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    if (busy.tooMany > 0) {
      busy.tooMany--;
      socket.end(
        'HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
      );
      return;
    }
    const pass = () => {
      if (socket.destroyed) return;
      const upstream = connect(Number(target.port), target.hostname, () => {
        const lines = [`GET ${target.pathname} HTTP/1.1`];
        for (let i = 0; i < req.rawHeaders.length; i += 2)
          if (req.rawHeaders[i]?.toLowerCase() !== 'host')
            lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
        lines.push(`Host: ${target.host}`);
        upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length > 0) upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
      socket.on('close', () => upstream.destroy());
    };
    if (busy.hold > 0) {
      busy.hold--;
      // Browserless queueing the connection: the handshake is answered only later.
      setTimeout(pass, busy.holdMs);
    } else pass();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as { port: number }).port, server };
}

async function startServe(home: string, args: readonly string[]) {
  const child = spawn(
    process.execPath,
    [binPath, 'serve', '--port', '0', '--token-file', tokenFile(token), '--allow-private', ...args],
    {
      env: { ...process.env, TABWARD_HOME: home },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const said = { stderr: '' };
  child.stderr?.on('data', (chunk: Buffer) => {
    said.stderr += chunk.toString();
  });
  const base = await waitFor('tabward serve to say where it serves', () =>
    child.exitCode === null
      ? /serving recipes at (\S+)/.exec(said.stderr)?.[1]
      : Promise.reject(new Error(said.stderr)),
  );
  return { child, base, said };
}

describe('Browserless (busy is not down, a bearer header) and Playwright servers', {
  timeout: 120_000,
}, () => {
  const portal = usePortal();
  let chrome: LaunchedChrome;
  let browserless: { port: number; server: Server };
  const busy: Busy = { tooMany: 0, hold: 0, holdMs: 0, handshakes: 0, unauthorised: 0 };
  const children: ChildProcess[] = [];

  before(async () => {
    chrome = await launchChrome({ executablePath: findChrome(), headless: true, extraArgs: testChromeArgs });
    browserless = await startBrowserless(chrome, busy);
  });
  after(async () => {
    for (const child of children) child.kill('SIGTERM');
    browserless?.server.close();
    await chrome?.close();
  });

  const post = async (base: string, recipe: unknown) => {
    const response = await fetch(`${base}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipe }),
    });
    return { status: response.status, json: (await response.json()) as Loose };
  };
  const home = () => ({ url: `http://127.0.0.1:${portal.site.port}/`, extract: { fields: { title: 'h1' } } });

  test('429s and a held handshake are busy: the run waits and runs there, the endpoint is never taken out; the header is never shown', async () => {
    const label = `ws://127.0.0.1:${browserless.port}/?token=***`;
    const serve = await startServe(portal.dir, [
      '--ws-endpoint',
      `ws://127.0.0.1:${browserless.port}/?token=q-tok-991#concurrency=2&header=Authorization:Bearer%20${bearer}`,
      // A connect not answered within 3 s would count as a failed start, were the server not taking connections.
      '--timeout',
      '3000',
    ]);
    children.push(serve.child);

    busy.tooMany = 3;
    const first = await post(serve.base, home());
    assert.equal(first.status, 200, JSON.stringify(first.json));
    assert.equal(first.json.data.title, 'Acme intranet');
    assert.equal(first.json.endpoint, label);
    assert.equal(busy.tooMany, 0, 'the run tried again after each 429');

    busy.hold = 1;
    busy.holdMs = 4_500;
    const second = await post(serve.base, home());
    assert.equal(second.status, 200, JSON.stringify(second.json));
    assert.equal(busy.hold, 0, 'the held handshake was waited for');

    const health = (await (await fetch(`${serve.base}/health`)).json()) as Loose;
    const [endpoint] = health.endpoints;
    assert.equal(endpoint.state, 'up');
    assert.equal(endpoint.startFailures, 0, 'busy is never counted as a failed start');
    assert.equal(endpoint.consecutiveFailures, 0);
    assert.deepEqual(endpoint.headers, { Authorization: '***' });
    assert.match(serve.said.stderr, /is busy/);
    for (const [where, text] of [
      ['/health', JSON.stringify(health)],
      ['the log', serve.said.stderr],
      ['the results', JSON.stringify([first.json, second.json])],
    ] as const) {
      assert.ok(!text.includes(bearer), `${where} shows no header value`);
      assert.ok(!text.includes('q-tok-991'), `${where} shows no token`);
    }
    assert.equal(busy.unauthorised, 0, 'every handshake carried the header');
  });

  test('without its header the endpoint answers 401: a failed start, said without the token', async () => {
    const serve = await startServe(portal.dir, [
      '--ws-endpoint',
      `ws://127.0.0.1:${browserless.port}/?token=q-tok-991`,
    ]);
    children.push(serve.child);
    const before = busy.unauthorised;
    const run = await post(serve.base, home());
    assert.equal(run.status, 503, JSON.stringify(run.json));
    assert.ok(busy.unauthorised > before);
    assert.match(JSON.stringify(run.json), /401/);
    assert.ok(!JSON.stringify(run.json).includes('q-tok-991'));
  });

  test('a handshake held twice in one run is a failed start (a load balancer with nothing behind it holds them too)', async () => {
    const serve = await startServe(portal.dir, [
      '--ws-endpoint',
      `ws://127.0.0.1:${browserless.port}/?token=q-tok-991#header=Authorization:Bearer%20${bearer}`,
      '--timeout',
      '2000',
    ]);
    children.push(serve.child);
    busy.hold = 2;
    busy.holdMs = 3_000;
    const run = await post(serve.base, home());
    assert.equal(run.status, 503, JSON.stringify(run.json));
    assert.equal(busy.hold, 0, 'the first held handshake was tried again');
    const health = (await (await fetch(`${serve.base}/health`)).json()) as Loose;
    assert.equal(health.endpoints[0].state, 'down');
    assert.equal(health.endpoints[0].startFailures, 1);
  });

  test("playwright+ws://: a run on Playwright's launchServer, spoken with connect", async () => {
    const server = await chromium.launchServer({
      executablePath: findChrome(),
      headless: true,
      args: testChromeArgs,
    });
    try {
      const given = `playwright+${server.wsEndpoint()}`;
      const serve = await startServe(portal.dir, ['--ws-endpoint', given]);
      children.push(serve.child);
      const health = (await (await fetch(`${serve.base}/health`)).json()) as Loose;
      assert.equal(health.endpoints[0].kind, 'playwright');
      const runs = await Promise.all([post(serve.base, home()), post(serve.base, home())]);
      for (const run of runs) {
        assert.equal(run.status, 200, JSON.stringify(run.json));
        assert.equal(run.json.data.title, 'Acme intranet');
        assert.equal(run.json.endpoint, given);
      }
    } finally {
      await server.close();
    }
  });
});
