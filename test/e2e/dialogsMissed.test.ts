// A dialog that tabward's own session of the tab was never told of (it opened before the session listened: a tab
// handed out before its dialogs were watched, a popup, a slow start under load) has no known frame, and that frame
// may be removed at any moment, after which answering the dialog crashes the browser (browser/orphanDialogs.ts).
// Such a dialog is not answerable: the watch retires the tab once Playwright reports it. Real Chromium, driven
// through Playwright as tabward drives it; a cross-site frame alerts before the watch starts.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, chromium, type Dialog, type Page } from 'playwright-core';
import { findChrome } from '../../src/browser/findChrome.ts';
import { retiredPages, retireTab, watchOrphanDialogs } from '../../src/browser/orphanDialogs.ts';
import { TrackedPage } from '../../src/browser/pages.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { waitFor } from '../helpers/waitFor.ts';

let site: Fixture;
let browser: Browser;

before(async () => {
  site = await startFixture({
    '/host': (_req, _body, res) =>
      html(res, `<title>Host</title><iframe src="${site.url('frame.example', '/alerting')}"></iframe>`),
    '/alerting': (_req, _body, res) => html(res, `<script>alert('from a frame')</script>`),
    '/own': (_req, _body, res) =>
      html(res, `<title>Own</title><script>setTimeout(() => alert('own'), 300)</script>`),
    '/twice': (_req, _body, res) =>
      html(
        res,
        `<title>Twice</title><script>setTimeout(() => { alert('first'); alert('second'); }, 300)</script>`,
      ),
  });
  browser = await chromium.launch({ executablePath: findChrome(), args: testChromeArgs });
});
after(async () => {
  await browser?.close();
  await site?.close();
});

/** A tab whose dialog is open (reported by Playwright) before a session of tabward's own watches it. */
async function dialogBeforeWatch(path: string): Promise<{ page: Page; dialog: Dialog }> {
  const page = await browser.newPage();
  const dialog = new Promise<Dialog>((resolve) => page.once('dialog', resolve));
  await page.goto(site.url('host.example', path), { waitUntil: 'commit' });
  return { page, dialog: await dialog };
}

test("a frame's dialog opened before tabward's session listened is not answerable: the tab is retired", async () => {
  const { page } = await dialogBeforeWatch('/host');
  const cdp = await page.context().newCDPSession(page);
  let orphaned = 0;
  const watch = await watchOrphanDialogs(page, cdp, () => {
    orphaned++;
    void retireTab(page, cdp);
  });
  assert.equal(watch.answerable(), undefined, 'the session was told of a dialog opened before it listened');
  await watch.reported();
  assert.equal(orphaned, 1, 'a dialog of no known frame was left answerable');
  assert.equal(watch.answerable(), false);
  assert.ok(retiredPages.has(page));
});

test('a dialog the session was told of stays answerable once reported', async () => {
  const page = await browser.newPage();
  const cdp = await page.context().newCDPSession(page);
  let orphaned = 0;
  const watch = await watchOrphanDialogs(page, cdp, () => orphaned++);
  const dialog = new Promise<Dialog>((resolve) => page.once('dialog', resolve));
  await page.goto(site.url('host.example', '/own'), { waitUntil: 'commit' });
  const open = await dialog;
  await watch.reported();
  assert.equal(orphaned, 0, 'an honest dialog of the tab retired it');
  assert.equal(watch.answerable(), true);
  await open.dismiss();
  await waitFor('the dialog closed', () => watch.answerable() === undefined);
  assert.equal(retiredPages.has(page), false);
  await page.close();
});

// A dialog closed without tabward (the user clicks OK in their own Chrome; Chromium dismisses a frame's alert when
// another frame of the tab commits in a new process): the tab said "dialog open" to every call from then on, and
// handle_dialog could not end it (Chromium: no dialog is showing). Another DevTools client answers it here.
/** A tab tabward tracks, opened at `path`, and another DevTools client of it (the user's). */
async function trackedWithUser(id: string, path: string) {
  const page = await browser.newPage();
  const tracked = new TrackedPage(id, page, true);
  await tracked.dialogsWatched();
  // The other client enables its Page domain first: Page.enable waits while a dialog holds the page (measured).
  const user = await page.context().newCDPSession(page);
  await user.send('Page.enable');
  await page.goto(site.url('host.example', path), { waitUntil: 'commit' });
  return { page, tracked, user };
}

test('a dialog answered by someone else is no longer the tab’s open dialog: the tab is usable again', async () => {
  const { page, tracked, user } = await trackedWithUser('p1', '/own');
  await waitFor('the dialog reported', () => tracked.dialog);
  await user.send('Page.handleJavaScriptDialog', { accept: true });
  await waitFor('the tab to drop the dialog the user answered', () => tracked.dialog === undefined);
  assert.equal(retiredPages.has(page), false, 'a tab whose dialog was answered was retired');
  assert.equal(await page.title(), 'Own', 'the page goes on');
  await page.close();
});

test('a dialog answered elsewhere leaves a newer dialog of the tab open, with other words', async () => {
  const { page, tracked, user } = await trackedWithUser('p2', '/twice');
  await waitFor('the first dialog reported', () => tracked.dialog?.message() === 'first');
  await user.send('Page.handleJavaScriptDialog', { accept: true });
  await waitFor('the second dialog reported', () => tracked.dialog?.message() === 'second');
  await tracked.assertDialogAnswerable();
  await tracked.dialog?.dismiss();
  await page.close();
});
