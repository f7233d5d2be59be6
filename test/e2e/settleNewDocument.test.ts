// Settling once an action replaced the document (browser/pageSettle.ts, docs/architecture.md "Settling"), in real
// Chromium: tabward's session of the tab counts the main frame's new documents (a link followed, not a pushState),
// and the new document is waited for until parsed and its DOMContentLoaded handlers have run, as navigate_page
// waits for one, asked in tabward's isolated world (a page that breaks its own addEventListener changes nothing). The fixture holds a deferred script until the test lets it go, so what is asserted is what the
// page showed when the wait ended, never how long it took.

import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { TrackedPage } from '../../src/browser/pages.ts';
import { BrowserSession } from '../../src/browser/session.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';

describe('settling after an action that replaced the document', () => {
  let site: Fixture;
  const held: ServerResponse[] = [];
  const release = () => {
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'text/javascript' }).end('');
  };
  const session = new BrowserSession({
    mode: 'isolated',
    headless: true,
    chromeArgs: testChromeArgs,
    attach: {},
    attachTimeoutMs: 10_000,
    notify: () => undefined,
  });
  const heading = (tab: TrackedPage) => tab.page.evaluate('document.getElementById("state")?.textContent');
  /** Polls (bounded) until `ok` holds; fails naming what never happened. */
  const until = async (ok: () => boolean | Promise<boolean>, what: string) => {
    for (let i = 0; i < 200 && !(await ok()); i++) await new Promise((done) => setTimeout(done, 25));
    assert.ok(await ok(), what);
  };

  before(async () => {
    site = await startFixture({
      '/': (_req, _body, res) =>
        html(
          res,
          `<a href="/next">Next</a><button onclick="history.pushState({}, '', '/moved')">Move</button>`,
        ),
      '/next': (_req, _body, res) => html(res, 'next'),
      // Parsed early; its DOMContentLoaded handlers run only once the deferred script has loaded and run.
      '/late': (_req, _body, res) =>
        html(
          res,
          `<h1 id="state">parsed</h1><script defer src="/held.js"></script>
           <script>document.addEventListener('DOMContentLoaded', () => { state.textContent = 'ready' })</script>`,
        ),
      // The same, in a page that tells its own world it is ready long before it is.
      '/late-liar': (_req, _body, res) =>
        html(
          res,
          `<h1 id="state">parsed</h1><script defer src="/held.js"></script>
           <script>document.addEventListener('DOMContentLoaded', () => { state.textContent = 'ready' });
           performance.getEntriesByType = () => [{ domContentLoadedEventEnd: 1 }];
           Object.defineProperty(Document.prototype, 'readyState', { get: () => 'complete' });</script>`,
        ),
      '/held.js': (_req, _body, res) => {
        held.push(res);
      },
    });
  });
  after(async () => {
    release();
    await session.close();
    await site?.close();
  });

  test('a link followed is a new document; a pushState is not', async () => {
    const tab = await session.newPage();
    await tab.page.goto(site.url('site.example', '/'));
    assert.notEqual(await tab.announcements.mark(), undefined, 'counting could not be turned on');
    const before = tab.announcements.documentsCommitted();
    await tab.page.getByRole('button', { name: 'Move' }).click();
    await until(() => tab.page.url().endsWith('/moved'), 'the pushState moved the URL');
    assert.equal(tab.announcements.documentsCommitted(), before, 'a pushState counted as a new document');
    const commit = tab.announcements.documentCommitted(before);
    await tab.page.getByRole('link', { name: 'Next' }).click();
    await until(() => tab.announcements.documentsCommitted() > before, 'the link’s document was counted');
    // The wait made before the click is told of the commit too (bounded: a wait never told fails, not hangs).
    const told = await Promise.race([
      commit.committed.then(() => true),
      new Promise<false>((done) => setTimeout(() => done(false), 5_000)),
    ]);
    assert.ok(told, 'the wait for a commit was not told of it');
    assert.equal(tab.announcements.documentsCommitted(), before + 1);
    await tab.page.close();
  });

  for (const path of ['/late', '/late-liar'])
    test(`the new document is waited for until its DOMContentLoaded handlers ran, not only until parsed (${path})`, async () => {
      const tab = await session.newPage();
      await tab.page.goto(site.url('site.example', path), { waitUntil: 'commit' });
      await until(() => held.length === 1, 'the deferred script reached the server');
      await until(
        async () => (await tab.readInDocument<string>('document.readyState')) === 'interactive',
        'parsed',
      );
      assert.equal(await heading(tab), 'parsed');
      // Let the script go just after the wait began: a wait that ended once parsed reads "parsed" here. Deferred
      // scripts are given 10 s, so that only the DOMContentLoaded handlers having run ends the wait on a slow machine.
      const waited = tab.waitForDocument(10_000, 10_000).then(() => heading(tab));
      setTimeout(release, 50);
      assert.equal(await waited, 'ready', 'the wait ended before the DOMContentLoaded handlers ran');
      await tab.page.close();
    });
});
