// In the user's Chrome, a window an agent tab opened does not outlive tabward's watch when Playwright has not told of
// it yet. Playwright tells of a window once its first document commits: one whose page is answered slowly was open
// and untracked when the session ended, so it was never closed, and once tabward had let the browser go it sent
// whatever it liked, judged by nobody (here, a POST into a sensitive page: 36 in 3 s). The browser-wide gate knows each
// window's opener and closes the agent's windows before it lets go (BrowserFetchGate.close).
// A link the page activates with a modifier during the agent's click (its own synthetic ctrl-click) opens a tab with
// no opener at all: no hook judged it, it was listed as the user's own tab, and it stayed open after the session,
// posting into a sensitive page; a submit button so clicked posted once. The agent tab's session tells of the
// new-tab navigation just before the tab appears, and the gate ties the tab that then shows that address to it
// (expectWindowFrom). A page that keeps asking for new tabs Chromium never opens took every tab the user opened
// meanwhile (refused, then closed with the session) until the address had to match.
// Assertions on what the fixture server received.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

let site: Fixture;
let chrome: UserChrome;

before(async () => {
  site = await startFixture(
    {
      '/open': (req, _body, res) => {
        const opener = new URL(req.url ?? '/', 'http://x').searchParams.get('opener') ?? '';
        const features = opener === 'noopener' ? 'noopener' : '';
        html(
          res,
          `<title>Offer</title><button onclick="window.open('/slow-window?from=${opener}', '_blank', '${features}')">See the offer</button>`,
        );
      },
      // The agent's click makes the page ctrl-click a link, or a form's submit button, of its own.
      '/ctrl-link': (_req, _body, res) =>
        html(
          res,
          `<title>Offer</title><a id="link" href="/posting?from=ctrl-link">offer</a>
          <button onclick="document.getElementById('link').dispatchEvent(new MouseEvent('click', { ctrlKey: true, bubbles: true, cancelable: true }))">See the offer</button>`,
        ),
      '/ctrl-form': (_req, _body, res) =>
        html(
          res,
          `<title>Offer</title><form method="post" action="https://github.com:${site.port}/settings/delete?from=ctrl-form"><input name="repo" value="mine"><button id="go">go</button></form>
          <button onclick="document.getElementById('go').dispatchEvent(new MouseEvent('click', { ctrlKey: true, bubbles: true, cancelable: true }))">See the offer</button>`,
        ),
      // Asks for a new tab every 150 ms with no user activation: Chromium opens none.
      '/asking': (_req, _body, res) =>
        html(
          res,
          `<title>Offer</title><a id="link" href="/nothing">x</a><script>setInterval(() => document.getElementById('link').dispatchEvent(new MouseEvent('click', { ctrlKey: true, bubbles: true, cancelable: true })), 150);</script>`,
        ),
      '/settings/profile': (_req, _body, res) =>
        html(
          res,
          `<title>Settings</title><script>setInterval(() => fetch('/settings/save', { method: 'POST', body: 'x' }).catch(() => {}), 100);</script>`,
        ),
      '/posting': (_req, _body, res) =>
        html(
          res,
          `<title>Offer</title><script>setInterval(() => fetch('https://github.com:' + location.port + '/settings/delete' + location.search, { method: 'POST', mode: 'no-cors', body: 'repo' }).catch(() => {}), 50);</script>`,
        ),
      '/slow-window': (_req, _body, res) => {
        setTimeout(
          () =>
            html(
              res,
              `<title>Offer</title><script>setInterval(() => fetch('https://github.com:' + location.port + '/settings/delete' + location.search, { method: 'POST', mode: 'no-cors', body: 'repo' }).catch(() => {}), 50);</script>`,
            ),
          1_500,
        );
      },
    },
    { tls: true },
  );
  chrome = await startUserChrome({ chromeArgs: testChromeArgs });
});

after(async () => {
  await chrome?.close();
  await site?.close();
});

// A window opened with its opener shares the crashed tab's renderer and went with it; one with none did not.
for (const opener of ['noopener'])
  test(`a window an agent tab opened (${opener}), its page not loaded yet, is closed as the session ends`, async () => {
    const mcp = await startMcp({ args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint] });
    mcp.human.policy = () => ({ decision: 'approve' });
    const opened = await mcp.call('new_page', { url: site.url('evil.example', `/open?opener=${opener}`) });
    assert.equal(opened.isError, false, opened.text);
    const snapshot = await mcp.call('take_snapshot');
    const clicked = await mcp.call('click', { ref: refOf(snapshot.text, 'See the offer') });
    assert.equal(clicked.isError, false, clicked.text);
    await mcp.close();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const writes = site.seen.filter((request) => request.path.startsWith(`/settings/delete?from=${opener}`));
    assert.deepEqual(
      writes.map((request) => `${request.method} ${request.host}${request.path}`),
      [],
      `the window tabward left open posted into a sensitive page ${writes.length} times`,
    );
  });

for (const how of ['ctrl-link', 'ctrl-form'])
  test(`a tab the page opens with a modifier click during the agent's click is the agent's (${how})`, async () => {
    const mcp = await startMcp({ args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint] });
    // The click is approved; a request tabward did not predict (a post into a sensitive page) is not.
    mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    const opened = await mcp.call('new_page', { url: site.url('evil.example', `/${how}`) });
    assert.equal(opened.isError, false, opened.text);
    const snapshot = await mcp.call('take_snapshot');
    const clicked = await mcp.call('click', { ref: refOf(snapshot.text, 'See the offer') });
    assert.equal(clicked.isError, false, clicked.text);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const pages = await mcp.call('list_pages');
    await mcp.close();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const writes = site.seen.filter((request) => request.path.startsWith(`/settings/delete?from=${how}`));
    assert.deepEqual(
      writes.map((request) => `${request.method} ${request.host}${request.path}`),
      [],
      `the tab the page opened posted into a sensitive page ${writes.length} times`,
    );
    assert.doesNotMatch(
      pages.text,
      /\[user\] https:\/\/(evil\.example|github\.com)/,
      "listed as the user's own tab",
    );
  });

test("the user's own new tab, while an agent tab keeps asking for new tabs, stays the user's", async () => {
  const mcp = await startMcp({ args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint] });
  mcp.human.policy = () => ({ decision: 'approve' });
  const opened = await mcp.call('new_page', { url: site.url('evil.example', '/asking') });
  assert.equal(opened.isError, false, opened.text);
  await new Promise((resolve) => setTimeout(resolve, 500));
  // The user opens a tab of their own (with no opener, as a typed address does) on a page that saves as it goes.
  const devtools = chrome.wsEndpoint.replace(/^ws/, 'http').replace(/\/devtools\/.*/, '');
  const usersTab = site.url('github.com', '/settings/profile');
  const made = await fetch(`${devtools}/json/new?${usersTab}`, { method: 'PUT' });
  assert.equal(made.status, 200);
  // Its saves are waited for, not counted in a fixed time (a loaded machine took longer than 1.5 s to open it).
  const saves = () => site.seen.filter((request) => request.path.startsWith('/settings/save')).length;
  const saved = await waitFor("the user's own tab to save", () => saves() > 3, { timeoutMs: 15_000 }).catch(
    () => false,
  );
  await mcp.close();
  const tabs = (await (await fetch(`${devtools}/json/list`)).json()) as { type: string; url: string }[];
  assert.ok(saved, `the user's own tab was held: ${saves()} saves in 15 s`);
  assert.ok(
    tabs.some((tab) => tab.type === 'page' && tab.url === usersTab),
    "the user's own tab was closed with the session",
  );
});
