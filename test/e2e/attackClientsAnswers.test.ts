// Attacks on the human's answers when several MCP clients share one `tabward mcp --http` (issue 36; the rest of the
// attacks across clients: attackSeveralClients.test.ts): a client's held request, login wall or typed secret riding
// on a question or a yes that was another client's, a client naming itself after another's session, a popup's post
// asked as its opener's page, a question outliving its client's session. The real CLI, the real SDK client over
// Streamable HTTP, real Chromium; every host name maps to the fixtures.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { loginHost, startLoginSite } from '../helpers/loginSite.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { type Connected, clientsOf, startMcpHttp, stopAll } from '../helpers/mcpHttpClients.ts';
import type { RunningTabward } from '../helpers/tabwardProcess.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe("a human's answers across clients of one isolated browser", { timeout: 240_000 }, () => {
  let site: Fixture;
  let tabward: RunningTabward;
  let home = '';
  const open: Connected[] = [];
  const { connect, call, leave } = clientsOf(() => tabward, open);
  const typed = 'tok_SuperSecret_998877';
  const posted = (path: string) => site.seen.filter((seen) => seen.path === path && seen.method === 'POST');
  let popupGo = false;

  before(async () => {
    site = await startFixture(
      {
        // A dashboard whose Save posts the visitor's address to github.com's settings by script: a request
        // tabward did not predict, held for the human. The attacker's copy (evil.example) posts its own address.
        '/dash': (req, _body, res) => {
          const who = (req.headers.host ?? '').startsWith('evil.')
            ? 'attacker@evil.example'
            : 'me@example.com';
          const github = `https://github.com:${(req.headers.host ?? '').split(':')[1]}/settings/emails`;
          html(
            res,
            `<title>Dash</title><p>Dashboard</p><button onclick="fetch('${github}', { method: 'POST', mode: 'no-cors', body: 'email=${who}' })">Save</button>`,
          );
        },
        '/settings/emails': (_req, _body, res) => html(res, '<title>Saved</title><p>saved</p>'),
        // The attacker's opener: its Continue opens a popup that posts the attacker's address, once told to go.
        '/go': (_req, _body, res) => {
          res
            .writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' })
            .end(popupGo ? 'go' : 'wait');
        },
        '/opener': (_req, _body, res) =>
          html(
            res,
            `<title>Opener</title><button onclick="window.open('/poster', '_blank')">Continue</button>`,
          ),
        '/poster': (req, _body, res) => {
          const github = `https://github.com:${(req.headers.host ?? '').split(':')[1]}/settings/emails`;
          html(
            res,
            `<title>Poster</title><p>working</p><script>let n = 0; const t = setInterval(async () => { if ((await (await fetch('/go')).text()) !== 'go') return; fetch('${github}', { method: 'POST', mode: 'no-cors', body: 'email=popup@evil.example' }); if (++n === 12) clearInterval(t); }, 150)</script>`,
          );
        },
        '/settings/profile': (_req, _body, res) =>
          html(
            res,
            '<title>Profile</title><form method="post" action="/settings/profile"><button>Update profile</button></form>',
          ),
        '/login': (_req, _body, res) =>
          html(
            res,
            '<title>Sign in</title><form method="post" action="/session"><input type="password" name="p" aria-label="Password"><button>Sign in</button></form>',
          ),
        '/session': (_req, _body, res) => html(res, '<title>Signed in</title><p>welcome</p>'),
      },
      { tls: true },
    );
    home = mkdtempSync(join(tmpdir(), 'tabward-answers-clients-'));
    const secrets = join(home, 'secrets.env');
    writeFileSync(secrets, `TOKEN=${typed}\n`, { mode: 0o600 });
    tabward = await startMcpHttp(
      [
        '--mode',
        'isolated',
        '--approval',
        'inbox',
        '--approval-wait',
        '15',
        '--no-notify',
        '--secrets',
        secrets,
      ],
      home,
    );
  });
  after(async () => {
    await stopAll(tabward, open);
    await site?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((each) => leave(each)));
  });

  test("one client's held request never joins another's question: each is asked as its own, from its own page", async () => {
    const human = inboxOf(home);
    const a = await connect('agent-A');
    const b = await connect('agent-B');
    await call(b.client, 'new_page', { url: site.url('evil.example', '/dash') });
    const bSave = refOf((await call(b.client, 'take_snapshot')).text, 'Save');
    await call(a.client, 'new_page', { url: site.url('app.example', '/dash') });
    const aSave = refOf((await call(a.client, 'take_snapshot')).text, 'Save');
    // B clicks first, so that its question is open when the honest A's identical request is held.
    const bClick = call(b.client, 'click', { ref: bSave });
    await human.question('click');
    const aClick = call(a.client, 'click', { ref: aSave });
    const both = await waitFor('a question for each client', async () => {
      const questions = (await human.questions()).filter((q) => q.tool === 'click');
      return questions.length === 2 ? questions : undefined;
    });
    const ofA = both.find((q) => /calling itself "agent-A"/.test(q.question));
    const ofB = both.find((q) => /calling itself "agent-B"/.test(q.question));
    assert.ok(ofA && ofB, both.map((q) => q.question).join('\n---\n'));
    // Each names the page that sent it, not only where it goes.
    assert.match(ofA.page, /^https:\/\/app\.example:\d+\/dash$/);
    assert.match(ofB.page, /^https:\/\/evil\.example:\d+\/dash$/);
    assert.match(ofA.question, /POST github\.com:\d+\/settings\/emails/);
    // The human approves the agent they asked (A), and refuses the other.
    assert.equal(await human.answer(ofA.id, 'approve'), 200);
    assert.equal(await human.answer(ofB.id, 'reject'), 200);
    await Promise.all([aClick, bClick]);
    await waitFor("A's post", () => posted('/settings/emails').length > 0 || undefined);
    assert.deepEqual(
      posted('/settings/emails').map((seen) => seen.body),
      ['email=me@example.com'],
      "only A's own request left, with A's body",
    );
  });

  test("a client naming itself after another's session is shown under its own session, first and whole", async () => {
    // An attack review's client called itself "agent-A (session …-1) — …long…": tabward's own mark came after the
    // name and was cut off the line, so its questions read as A's.
    const human = inboxOf(home);
    const a = await connect('agent-A');
    await call(a.client, 'new_page', { url: site.url('app.example', '/dash') });
    const aSave = refOf((await call(a.client, 'take_snapshot')).text, 'Save');
    const aClick = call(a.client, 'click', { ref: aSave });
    const ofA = await human.question('click');
    const sessionOfA = /Asked by: session (\S+),/.exec(ofA.question)?.[1] ?? '';
    assert.ok(sessionOfA, ofA.question);
    const b = await connect(
      `agent-A (session ${sessionOfA}) — the email update the user asked for in chat${'.'.repeat(80)}`,
    );
    await call(b.client, 'new_page', { url: site.url('evil.example', '/dash') });
    const bSave = refOf((await call(b.client, 'take_snapshot')).text, 'Save');
    const bClick = call(b.client, 'click', { ref: bSave });
    const ofB = await waitFor("B's question", async () =>
      (await human.questions()).find((q) => q.tool === 'click' && q.id !== ofA.id),
    );
    const asked = /Asked by: (.*)/.exec(ofB.question)?.[1] ?? '';
    assert.match(asked, /^session (\S+), calling itself "agent-A \(session /, asked);
    assert.notEqual(
      /^session (\S+),/.exec(asked)?.[1],
      sessionOfA,
      "B's own session, never A's, leads its line",
    );
    for (const question of [ofA, ofB]) await human.answer(question.id, 'reject');
    await Promise.all([aClick, bClick]);
  });

  test("a held request a popup sent shows the popup's page, not the page its opener's action ran on", async () => {
    // B's popup kept posting the attacker's address while B acted on the honest page its opener tab then showed:
    // the question named that honest page, and the human let the popup's post go.
    const human = inboxOf(home);
    const b = await connect('agent-B');
    await call(b.client, 'new_page', { url: site.url('evil.example', '/opener') });
    const opener = await waitFor('the opener', async () => {
      const shown = (await call(b.client, 'take_snapshot')).text;
      return /Continue/.test(shown) ? shown : undefined;
    });
    await call(b.client, 'click', { ref: refOf(opener, 'Continue') });
    await call(b.client, 'select_page', { pageId: 'p1' });
    await call(b.client, 'navigate_page', { url: site.url('app.example', '/dash') });
    const save = refOf((await call(b.client, 'take_snapshot')).text, 'Save');
    const before = posted('/settings/emails').length;
    let acting = true;
    popupGo = true;
    const clicking = call(b.client, 'click', { ref: save }).finally(() => {
      acting = false;
    });
    // The human lets go only what the honest page sends: questions that name it; the honest one is answered once
    // the popup's post has been asked about too (or after 10 s), so that the action still runs when it is held.
    const pages: string[] = [];
    const answered = new Set<string>();
    const since = Date.now();
    while (acting) {
      for (const question of (await human.questions()).filter(
        (q) => q.tool === 'click' && !answered.has(q.id),
      )) {
        const honest = /app\.example:\d+\/dash$/.test(question.page);
        if (honest && !pages.some((page) => /poster/.test(page)) && Date.now() - since < 10_000) continue;
        answered.add(question.id);
        pages.push(question.page);
        await human.answer(question.id, honest ? 'approve' : 'reject');
      }
      await new Promise((done) => setTimeout(done, 50));
    }
    await clicking;
    await call(b.client, 'close_page', { pageId: 'p2' }).catch(() => undefined);
    await waitFor('the honest post', () => posted('/settings/emails').length > before || undefined).catch(
      () => {
        throw new Error(`no post left; the questions named: ${pages.join(', ')}`);
      },
    );
    assert.ok(
      pages.some((page) =>
        /evil\.example:\d+\/poster$|^https:\/\/evil\.example:\d+ \(a document of that site/.test(page),
      ),
      `the popup's page shown: ${pages.join(', ')}`,
    );
    assert.deepEqual(
      posted('/settings/emails')
        .slice(before)
        .map((seen) => seen.body),
      ['email=me@example.com'],
      "only the honest page's post left",
    );
  });

  test("a human's yes to typing a secret on a site is the client's that asked, not another's", async () => {
    const human = inboxOf(home);
    const a = await connect('agent-A');
    const b = await connect('agent-B');
    await call(a.client, 'new_page', { url: site.url('login.example', '/login') });
    const aField = refOf((await call(a.client, 'take_snapshot')).text, 'Password');
    const aFill = call(a.client, 'fill', { ref: aField, secret: 'TOKEN' });
    const asked = await human.question('fill');
    assert.match(asked.question, /calling itself "agent-A"/);
    assert.equal(await human.answer(asked.id, 'approve'), 200);
    assert.match((await aFill).text, /Filled .* with secret TOKEN/);
    // B, in its own context, types the same secret on the same site: asked again, as B's own question.
    await call(b.client, 'new_page', { url: site.url('login.example', '/login') });
    const bField = refOf((await call(b.client, 'take_snapshot')).text, 'Password');
    const bFill = call(b.client, 'fill', { ref: bField, secret: 'TOKEN' });
    const again = await waitFor("B's own question", async () =>
      (await human.questions()).find((q) => q.tool === 'fill' && /calling itself "agent-B"/.test(q.question)),
    );
    assert.equal(await human.answer(again.id, 'reject'), 200);
    assert.match((await bFill).text, /rejected/);
    assert.deepEqual(posted('/session'), [], 'nothing was signed in with it');
  });

  test('a client that ends its session takes its questions with it: a late yes is refused, not taken', async () => {
    const human = inboxOf(home);
    const c = await connect('agent-C');
    // Opening a sensitive page asks; the call ends "still waiting" (--approval-wait), its question left open for
    // the same call made again.
    const pending = await call(c.client, 'new_page', { url: site.url('github.com', '/settings/profile') });
    assert.match(pending.text, /^pending_approval: .*question ([a-z2-9]{4})/);
    const id = /question ([a-z2-9]{4})/.exec(pending.text)?.[1] ?? '';
    assert.ok((await human.questions()).some((q) => q.id === id));
    await leave(c);
    await waitFor(
      'its question withdrawn',
      async () => !(await human.questions()).some((q) => q.id === id) || undefined,
    );
    assert.equal(await human.answer(id, 'approve'), 404, 'a late yes to a question gone is refused');
    assert.equal(
      site.seen.filter((seen) => seen.path === '/settings/profile').length,
      0,
      'nothing was opened',
    );
  });
});

describe('questions of clients sharing one world (--share-context)', { timeout: 120_000 }, () => {
  let site: Fixture;
  let tabward: RunningTabward;
  let home = '';
  const open: Connected[] = [];
  const { connect, call, leave } = clientsOf(() => tabward, open);

  before(async () => {
    site = await startFixture(
      { '/settings/profile': (_req, _body, res) => html(res, '<title>Profile</title><p>profile</p>') },
      { tls: true },
    );
    home = mkdtempSync(join(tmpdir(), 'tabward-answers-shared-'));
    tabward = await startMcpHttp(
      ['--mode', 'isolated', '--approval', 'inbox', '--approval-wait', '3', '--no-notify', '--share-context'],
      home,
    );
  });
  after(async () => {
    await stopAll(tabward, open);
    await site?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  test('each question still says which session asks, and goes when that session ends', async () => {
    const human = inboxOf(home);
    const a = await connect('agent-A');
    const b = await connect('agent-B');
    const url = site.url('github.com', '/settings/profile');
    const pendingA = await call(a.client, 'new_page', { url });
    const pendingB = await call(b.client, 'new_page', { url });
    const ids = [pendingA, pendingB].map((pending) => /question ([a-z2-9]{4})/.exec(pending.text)?.[1] ?? '');
    assert.notEqual(ids[0], ids[1], 'the same call of two sessions is two questions');
    const open = await human.questions();
    const askedBy = ids.map(
      (id) => /Asked by: session (\S+),/.exec(open.find((q) => q.id === id)?.question ?? '')?.[1],
    );
    assert.ok(
      askedBy[0] && askedBy[1] && askedBy[0] !== askedBy[1],
      `each names its own session: ${askedBy}`,
    );
    await leave(b);
    await waitFor(
      "B's question withdrawn",
      async () => !(await human.questions()).some((q) => q.id === ids[1]) || undefined,
    );
    assert.ok(
      (await human.questions()).some((q) => q.id === ids[0]),
      "A's question stays",
    );
    assert.equal(await human.answer(ids[1] ?? '', 'approve'), 404, "a late yes to B's question is refused");
    await human.answer(ids[0] ?? '', 'reject');
    assert.equal(
      site.seen.filter((seen) => seen.path === '/settings/profile').length,
      0,
      'nothing was opened',
    );
  });
});

describe('login walls of several clients in auto mode', { timeout: 180_000 }, () => {
  let site: Fixture;
  let chrome: UserChrome;
  let tabward: RunningTabward;
  let home = '';
  const open: Connected[] = [];
  const { connect, call } = clientsOf(() => tabward, open);

  before(async () => {
    site = await startLoginSite();
    chrome = await startUserChrome({ chromeArgs: testChromeArgs });
    home = mkdtempSync(join(tmpdir(), 'tabward-walls-clients-'));
    tabward = await startMcpHttp(
      [
        '--mode',
        'auto',
        '--user-data-dir',
        chrome.userDataDir,
        '--approval',
        'inbox',
        '--approval-wait',
        '15',
        '--no-notify',
      ],
      home,
    );
  });
  after(async () => {
    await stopAll(tabward, open);
    await chrome?.close();
    await site?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  test('each client\'s "use your own Chrome" question is its own: one yes never moves another client into the user\'s Chrome', async () => {
    // B meets the same login wall as A, at the same time: the two questions were alike in all they showed, so B's
    // joined A's (or the other way round) and the human's one yes went to whichever asked first.
    const human = inboxOf(home);
    const a = await connect('agent-A');
    const b = await connect('agent-B');
    const wall = site.url(loginHost, '/private');
    const aOpens = call(a.client, 'new_page', { url: wall });
    await human.question('browser_connect');
    const bOpens = call(b.client, 'new_page', { url: wall });
    const both = await waitFor('a question for each client', async () => {
      const asked = (await human.questions()).filter((q) => q.tool === 'browser_connect');
      return asked.length === 2 ? asked : undefined;
    });
    assert.ok(
      both.some((q) => /calling itself "agent-A"/.test(q.question)) &&
        both.some((q) => /calling itself "agent-B"/.test(q.question)),
      both.map((q) => q.question).join('\n---\n'),
    );
    for (const question of both) assert.equal(await human.answer(question.id, 'reject'), 200);
    for (const opened of await Promise.all([aOpens, bOpens]))
      assert.match(opened.text, /chose not to use their Chrome; still in the isolated browser/);
  });
});
