// A request held during an action is asked as the page that sent it. The hook knows the tab, and the address it
// reads is where the tab is *now*: an attack review had the attacker's post read as the honest page's, and the
// human approve it, when the attacker's page posted as it unloaded into the honest page, when a popup went to the
// honest page and posted on its way, and when its post came back through a slow redirect after the popup had moved
// on. The browser's Origin header names the sending document's site: where it disagrees with the address, the
// question names that site. And a page cannot flood the human: the same request again while its question is open
// waits for that answer, a refusal answers its site's retries whatever address it shows, at most ten an action.
// The human here approves only what names the honest page, after a pause (a real human takes seconds).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { type Connected, clientsOf, startMcpHttp, stopAll } from '../helpers/mcpHttpClients.ts';
import type { RunningTabward } from '../helpers/tabwardProcess.ts';
import { waitFor } from '../helpers/waitFor.ts';

const portOf = (req: IncomingMessage) => (req.headers.host ?? '').split(':')[1];
const github = (req: IncomingMessage) => `https://github.com:${portOf(req)}/settings/emails`;
const honest = (req: IncomingMessage) => `https://app.example:${portOf(req)}/dash`;
const post = (req: IncomingMessage, body: string, more = '') =>
  `fetch('${github(req)}', { method: 'POST', mode: 'no-cors', body: '${body}'${more} })`;
const waitGo =
  "async function waitGo() { while ((await (await fetch('/go')).text()) !== 'go') await new Promise((r) => setTimeout(r, 100)); }";
const opener = (popup: string) => (_req: IncomingMessage, _body: string, res: Parameters<typeof html>[0]) =>
  html(res, `<title>Opener</title><button onclick="window.open('${popup}', '_blank')">Continue</button>`);

describe('a held request is asked as the page that sent it', { timeout: 240_000 }, () => {
  let site: Fixture;
  let tabward: RunningTabward;
  let home = '';
  let go = false;
  const open: Connected[] = [];
  const { connect, call, leave } = clientsOf(() => tabward, open);
  const posted = () => site.seen.filter((seen) => seen.method === 'POST' && seen.path === '/settings/emails');

  before(async () => {
    site = await startFixture(
      {
        '/dash': (req, _body, res) =>
          html(
            res,
            `<title>Dash</title><p>Dashboard</p><button onclick="${post(req, 'email=me@example.com')}">Save</button>`,
          ),
        '/settings/emails': (_req, _body, res) => html(res, '<title>Saved</title><p>saved</p>'),
        '/go': (_req, _body, res) => {
          res
            .writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' })
            .end(go ? 'go' : 'wait');
        },
        // The attacker's page: Continue goes to the honest page, and it posts as it unloads.
        '/unload': (req, _body, res) =>
          html(
            res,
            `<title>Evil</title><button onclick="location.href='${honest(req)}'">Continue</button><script>addEventListener('pagehide', () => { ${post(req, 'email=unload@evil.example', ', keepalive: true')}; navigator.sendBeacon('${github(req)}', 'email=beacon@evil.example'); })</script>`,
          ),
        // A popup that goes to the honest page when told, posting on its way out.
        '/opener-unload': opener('/poster-unload'),
        '/poster-unload': (req, _body, res) =>
          html(
            res,
            `<title>Poster</title><script>addEventListener('pagehide', () => { const t = Date.now(); while (Date.now() - t < 400); ${post(req, 'email=popup-unload@evil.example', ', keepalive: true')}; }); ${waitGo} waitGo().then(() => { location.href = '${honest(req)}'; })</script>`,
          ),
        // A popup that posts to its own slow redirector, then goes to the honest page: the hop comes after.
        '/opener-redirect': opener('/poster-redirect'),
        '/poster-redirect': (req, _body, res) =>
          html(
            res,
            `<title>Poster</title><script>${waitGo} waitGo().then(() => { fetch('/slow', { method: 'POST', keepalive: true, body: 'email=redirect@evil.example' }); location.href = '${honest(req)}'; })</script>`,
          ),
        '/slow': (req, _body, res) => {
          setTimeout(() => res.writeHead(307, { location: github(req) }).end(), 800);
        },
        // A popup that posts every 300 ms, changing its own address each time.
        '/opener-flood': opener('/flood'),
        '/flood': (req, _body, res) =>
          html(
            res,
            `<title>Flood</title><script>${waitGo} waitGo().then(async () => { for (let n = 0; n < 30; n++) { location.hash = 'n' + n; ${post(req, 'email=flood@evil.example')}; await new Promise((r) => setTimeout(r, 300)); } })</script>`,
          ),
      },
      { tls: true },
    );
    home = mkdtempSync(join(tmpdir(), 'tabward-held-sender-'));
    tabward = await startMcpHttp(
      ['--mode', 'isolated', '--approval', 'inbox', '--approval-wait', '15', '--no-notify'],
      home,
    );
  });
  after(async () => {
    await stopAll(tabward, open);
    await site?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  afterEach(async () => {
    go = false;
    await Promise.all(open.splice(0).map((each) => leave(each)));
  });

  /** The human, while the action runs: each question read for 1.5 s, approved only when it names the honest page. */
  const humanWhile = async (acting: () => boolean) => {
    const human = inboxOf(home);
    const pages: string[] = [];
    const seen = new Set<string>();
    while (acting()) {
      for (const question of await human.questions()) {
        if (seen.has(question.id)) continue;
        seen.add(question.id);
        pages.push(question.page);
        await new Promise((done) => setTimeout(done, 1500));
        await human.answer(
          question.id,
          /^https:\/\/app\.example:\d+\/dash$/.test(question.page) ? 'approve' : 'reject',
        );
      }
      await new Promise((done) => setTimeout(done, 40));
    }
    return pages;
  };
  /** B's popup opened from an attacker's page, then B acts on the honest page in its first tab. */
  const popupThenSave = async (openerPath: string) => {
    const b = await connect('agent-B');
    await call(b.client, 'new_page', { url: site.url('evil.example', openerPath) });
    const shown = await waitFor('the opener', async () => {
      const text = (await call(b.client, 'take_snapshot')).text;
      return /Continue/.test(text) ? text : undefined;
    });
    await call(b.client, 'click', { ref: refOf(shown, 'Continue') });
    await call(b.client, 'select_page', { pageId: 'p1' });
    await call(b.client, 'navigate_page', { url: site.url('app.example', '/dash') });
    return { b, save: refOf((await call(b.client, 'take_snapshot')).text, 'Save') };
  };
  const acted = async (b: Connected, ref: string) => {
    let acting = true;
    const clicking = call(b.client, 'click', { ref }).finally(() => {
      acting = false;
    });
    const pages = await humanWhile(() => acting);
    await clicking;
    await new Promise((done) => setTimeout(done, 2000));
    return pages;
  };

  test('a page that posts as it unloads into the honest page is asked as its own site', async () => {
    const b = await connect('agent-B');
    await call(b.client, 'new_page', { url: site.url('evil.example', '/unload') });
    const before = posted().length;
    const pages = await acted(b, refOf((await call(b.client, 'take_snapshot')).text, 'Continue'));
    assert.ok(pages.length > 0, 'its posts were asked about');
    // Named as the evil page itself when judged before the tab moved on (a loaded machine), else by its origin:
    // never as the honest page.
    for (const page of pages)
      assert.match(page, /^https:\/\/evil\.example:\d+(\/unload$| \(a document of that site sent it)/);
    assert.deepEqual(posted().slice(before), [], 'nothing of the attacker left');
  });

  test('a popup that goes to the honest page and posts on its way out is asked as its own site', async () => {
    const { b, save } = await popupThenSave('/opener-unload');
    const before = posted().length;
    go = true;
    const pages = await acted(b, save);
    assert.ok(
      pages.some((page) => /evil\.example/.test(page)),
      pages.join(', '),
    );
    assert.deepEqual(
      posted()
        .slice(before)
        .map((seen) => seen.body),
      ['email=me@example.com'],
    );
  });

  test('a post redirected to the sensitive page after its popup moved on is asked as the site that sent it', async () => {
    const { b, save } = await popupThenSave('/opener-redirect');
    const before = posted().length;
    go = true;
    const pages = await acted(b, save);
    // Only the honest page's own post is asked as the honest page; the hop names the site its post came from
    // (the Origin a redirect keeps), or a document of no origin (one that crossed sites twice).
    const asHonest = pages.filter((page) => /^https:\/\/app\.example:\d+\/dash$/.test(page));
    assert.equal(asHonest.length, 1, pages.join(', '));
    for (const page of pages.filter((each) => !asHonest.includes(each)))
      assert.match(
        page,
        /^(https:\/\/evil\.example:\d+ \(a document of that site|\(a document with no origin)/,
      );
    assert.deepEqual(
      posted()
        .slice(before)
        .map((seen) => seen.body),
      ['email=me@example.com'],
    );
  });

  test('a popup posting every 300 ms under a new address each time is asked once, not once a post', async () => {
    const { b, save } = await popupThenSave('/opener-flood');
    const before = posted().length;
    go = true;
    const pages = await acted(b, save);
    const flood = pages.filter((page) => /evil\.example/.test(page));
    assert.ok(flood.length >= 1 && flood.length <= 2, `${flood.length} questions: ${pages.join(', ')}`);
    assert.deepEqual(
      posted()
        .slice(before)
        .map((seen) => seen.body),
      ['email=me@example.com'],
    );
  });
});
