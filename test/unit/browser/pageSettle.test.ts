// Settling after an action that replaced the document (browser/pageSettle.ts, docs/architecture.md "Settling"):
// once the main frame has committed a new document, nothing is asked of the old one any more. The turn of its event
// loop and the quiet window end there, and the new document is waited for as navigate_page waits for one. A stand-in
// tab here: a real PageActivity and RendererAnnouncements over stand-ins of Playwright's page and tabward's CDP
// session, so that what settling asked of the page, and when, is asserted, never how long anything took.

import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { CDPSession, Page, Request } from 'playwright-core';
import { PageActivity } from '../../../src/browser/pageActivity.ts';
import { settlePage } from '../../../src/browser/pageSettle.ts';
import { RendererAnnouncements } from '../../../src/browser/rendererAnnouncements.ts';

/** `answersTurns`: whether the old document answers the turn asked on tabward's session (a busy one does not). */
function standInTab(answersTurns: boolean) {
  const page = new EventEmitter();
  const evaluated: string[] = [];
  const pageStandIn = Object.assign(page, {
    evaluate: async (expression: string) => {
      evaluated.push(expression);
      return true;
    },
    frames: () => [{}],
    workers: () => [],
  });
  const session = Object.assign(new EventEmitter(), {
    send: (method: string) =>
      method === 'Runtime.evaluate' && !answersTurns ? new Promise(() => undefined) : Promise.resolve({}),
  });
  const announcements = new RendererAnnouncements(Promise.resolve(session as unknown as CDPSession));
  const activity = new PageActivity(page as unknown as Page);
  const tab = {
    page: pageStandIn as unknown as Page,
    // tabward's isolated world: where settling asks whether the new document is ready.
    readInDocument: async <T>(expression: string) => {
      evaluated.push(expression);
      return 'ready' as T;
    },
    documentSeq: 0,
    closed: false,
    dialog: undefined,
    activity,
    announcements,
    interrupted: new Promise<never>(() => undefined),
    pendingNavigations: 0,
  };
  const commit = () =>
    session.emit('Page.frameNavigated', { frame: { id: 'main', url: 'https://site.test/next' } });
  const frameCommit = () =>
    session.emit('Page.frameNavigated', { frame: { id: 'ad', parentId: 'main', url: 'https://ads.test/' } });
  const fetchStarts = () => {
    const request = {
      resourceType: () => 'fetch',
      method: () => 'GET',
      isNavigationRequest: () => false,
      url: () => 'https://site.test/api',
      frame: () => ({ page: () => page }),
    } as unknown as Request;
    page.emit('request', request);
    return request;
  };
  /** What settling asked the page for the new document (the waitForDocument read), and the turns it asked. */
  const documentReads = () =>
    evaluated.filter((expression) => expression.includes('DOMContentLoaded')).length;
  const turnsAsked = () =>
    evaluated.filter((expression) => expression.includes('setTimeout(done, 0))')).length;
  const marks = async () => ({
    activity: activity.mark(),
    announced: await announcements.mark(),
    documents: announcements.documentsCommitted(),
  });
  return { tab, session, page, commit, frameCommit, fetchStarts, documentReads, turnsAsked, marks };
}

test('a new document ends the wait for the old one’s turn: no turn is asked of the page after it', async () => {
  const { tab, commit, documentReads, turnsAsked, marks } = standInTab(false);
  const before = await marks();
  const settled = settlePage(tab, 60_000, before);
  // The old document is busy and never answers; the click's navigation commits meanwhile.
  setImmediate(commit);
  await settled;
  assert.equal(turnsAsked(), 0, 'a turn was asked of the page after its document was replaced');
  assert.equal(documentReads(), 1, 'the new document is waited for');
});

test('a document committed before settling starts: straight to the new document', async () => {
  const { tab, commit, documentReads, turnsAsked, marks } = standInTab(false);
  const before = await marks();
  commit();
  await settlePage(tab, 60_000, before);
  assert.equal(turnsAsked(), 0);
  assert.equal(documentReads(), 1);
});

test('a new document ends the quiet window, however many requests keep starting', async () => {
  const { tab, session, commit, fetchStarts, documentReads, page, marks } = standInTab(true);
  const before = await marks();
  // The action announced a request: the quiet window runs, and each new request keeps it open.
  session.emit('Network.requestWillBeSent', {});
  const started: Request[] = [];
  let sinceCommit = 0;
  let committed = false;
  let readAfter: number | undefined;
  const ticker = setInterval(() => {
    if (documentReads() > 0) return;
    started.push(fetchStarts());
    if (committed) sinceCommit++;
    else if (started.length === 3) {
      commit();
      committed = true;
    }
  }, 5);
  const settled = settlePage(tab, 60_000, before).finally(() => clearInterval(ticker));
  // The requests answered once the new document is read, so that settling's brief wait for them ends.
  const answered = setInterval(() => {
    if (documentReads() === 0) return;
    readAfter ??= sinceCommit;
    for (const request of started.splice(0)) page.emit('requestfinished', request);
  }, 5);
  await settled;
  clearInterval(answered);
  assert.ok(committed, 'the document was committed during the quiet window');
  assert.equal(readAfter, 0, 'requests kept starting after the commit, and the quiet window waited on them');
});

test('with no new document, the old one is still asked for its turn', async () => {
  const { tab, documentReads, turnsAsked, marks } = standInTab(false);
  // A turn that never answers is bounded (the renderer said nothing): the page is then asked for a task.
  await settlePage(tab, 60_000, await marks());
  assert.equal(turnsAsked(), 1, 'the page’s own turn after the unanswered one');
  assert.equal(documentReads(), 0, 'no navigation, no document to wait for');
  // A tab whose document never changes (a single-page app) keeps no wait of each action's for a commit.
  const waiting = (tab.announcements as unknown as { commitWaiters: Set<unknown> }).commitWaiters;
  assert.equal(waiting.size, 0, 'settling left its wait for a commit behind');
});

test('a frame’s new document is not the tab’s: the old document is still asked for its turn', async () => {
  const { tab, frameCommit, documentReads, turnsAsked, marks } = standInTab(false);
  const before = await marks();
  frameCommit();
  assert.equal(tab.announcements.documentsCommitted(), before.documents, 'a frame’s commit was counted');
  await settlePage(tab, 60_000, before);
  assert.equal(turnsAsked(), 1);
  assert.equal(documentReads(), 0);
});

test('a request the renderer announced holds the settle until Playwright reports it, or it ends', async () => {
  const { tab, session, page, marks } = standInTab(true);
  const before = await marks();
  // Announced on tabward's session; another hook ahead of Playwright's still holds it.
  session.emit('Network.requestWillBeSent', {
    requestId: 'r1',
    type: 'Fetch',
    frameId: 'main',
    request: { method: 'POST', url: 'https://site.test/save#x' },
  });
  let settled = false;
  const settling = settlePage(tab, 60_000, before).then(() => {
    settled = true;
  });
  await new Promise((done) => setTimeout(done, 300));
  assert.equal(settled, false, 'settled before the announced POST was reported');
  const request = {
    resourceType: () => 'fetch',
    method: () => 'POST',
    isNavigationRequest: () => false,
    url: () => 'https://site.test/save',
    frame: () => ({ page: () => page }),
  } as unknown as Request;
  page.emit('request', request);
  page.emit('requestfinished', request);
  await settling;
  assert.equal(tab.activity.writeSince(before.activity), 'POST https://site.test/save');

  // One that ends on tabward's session (a hook refused it) holds nothing more.
  const again = await marks();
  session.emit('Network.requestWillBeSent', {
    requestId: 'r2',
    type: 'Fetch',
    request: { method: 'PUT', url: 'https://site.test/refused' },
  });
  let ended = false;
  const ending = settlePage(tab, 60_000, again).then(() => {
    ended = true;
  });
  await new Promise((done) => setTimeout(done, 300));
  assert.equal(ended, false, 'settled before the announced PUT was reported or ended');
  session.emit('Network.loadingFailed', { requestId: 'r2' });
  await ending;
});
