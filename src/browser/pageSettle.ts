// Settling a tab after an action: waiting for what the action set off (a navigation, its document, the requests
// it sent), and only that, bounded; waiting for a document to be parsed; and, before a screenshot, for the images
// settling does not wait for. TrackedPage.settle, waitForDocument and passiveLoadsSettled (browser/pages.ts).

import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialog, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { settledWithin, withDeadline } from './deadline.ts';
import type { PageActivity } from './pageActivity.ts';
import type { RendererAnnouncements } from './rendererAnnouncements.ts';

/** How long the requests an action sent may keep the agent waiting after it (a stream never finishes). */
const settleRequestsMs = 500;
/** How long no new request must start after an action before it counts as settled. */
const quietMs = 60;
/** The bound on one turn of the page's event loop. */
const pageTurnMs = 1_000;

/** What settling reads of a tab (a TrackedPage). */
export interface SettlingTab {
  readonly page: Page;
  readonly documentSeq: number;
  readonly closed: boolean;
  readonly dialog: Dialog | undefined;
  readonly activity: PageActivity;
  readonly announcements: RendererAnnouncements;
  readonly interrupted: Promise<never>;
  /** Main-frame navigation requests not answered yet. */
  readonly pendingNavigations: number;
}

/**
 * After an action: waits for what it set off, and only that. One turn of the page's event loop lets a
 * navigation or request its handlers scheduled show itself; unless the renderer announced nothing since
 * `announcedSince` (a mark of its announcements taken before the action), a quiet window then lets what it
 * started reach the backstop; a navigation is followed until its document is parsed, and the requests sent since
 * `since` (an activity mark taken before the action) are given a brief window to answer, so that a stream or a
 * long poll never holds the agent. An action that set nothing off costs that one round trip, not a fixed delay.
 */
export async function settlePage(
  tab: SettlingTab,
  timeoutMs: number,
  since = tab.activity.mark(),
  announcedSince?: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const documentBefore = tab.documentSeq;
  const stopped = () => tab.closed || tab.dialog !== undefined || Date.now() >= deadline;
  const turnMs = Math.max(1, Math.min(pageTurnMs, deadline - Date.now()));
  // A dialog the page opens meanwhile stops the turn (the page answers nothing until the dialog is answered).
  const turned = () => Promise.race([tab.announcements.turn(turnMs), tab.interrupted.catch(() => false)]);
  const counted = announcedSince !== undefined && !tab.closed && !tab.dialog && (await turned());
  if (!counted) await pageTurn(tab, deadline);
  if (!counted || maySendUnannounced(tab, since, announcedSince)) await quietWindow(tab, deadline, stopped);
  const navigating = tab.pendingNavigations > 0;
  while (tab.pendingNavigations > 0 && !stopped()) await tab.activity.changed(deadline - Date.now());
  if (navigating || tab.documentSeq !== documentBefore)
    await waitForDocument(tab, Math.max(1, deadline - Date.now()));
  const quietBy = Math.min(deadline, Date.now() + settleRequestsMs);
  let waited = false;
  while (tab.activity.pendingSince(since) > 0 && !stopped() && Date.now() < quietBy) {
    waited = true;
    await tab.activity.changed(quietBy - Date.now());
  }
  // The answers' handlers update the page in a task of their own.
  if (waited) await pageTurn(tab, deadline);
}

/**
 * Whether something the action set off may still reach the backstop: the renderer announced a request, a
 * navigation or a window; a request was seen already; or the page has frames or workers whose renderers
 * announce on sessions of their own (an out-of-process frame, a worker), so that silence here proves nothing.
 */
function maySendUnannounced(tab: SettlingTab, since: number, announcedSince: number): boolean {
  return (
    tab.announcements.since(announcedSince) > 0 ||
    tab.activity.mark() !== since ||
    tab.page.frames().length > 1 ||
    tab.page.workers().length > 0
  );
}

/**
 * A request the action set off (a click handler's fetch, a beacon) can still be on its way to the network
 * backstop when the page's next task has run: wait until no new request has started for a short while, so it is
 * held and asked about as this action's doing rather than refused as a late one. Bounded. Passive loads starting
 * (a new document's images, one after another) do not extend it: one that reaches the backstop after the action
 * is judged as a late request, stopped where a human would have been asked (browser/pageActivity.ts).
 */
async function quietWindow(tab: SettlingTab, deadline: number, stopped: () => boolean): Promise<void> {
  const cap = Math.min(deadline, Date.now() + settleRequestsMs);
  let quietUntil = Math.min(cap, Date.now() + quietMs);
  while (Date.now() < quietUntil && !stopped()) {
    const seen = tab.activity.activeMark();
    await tab.activity.changed(quietUntil - Date.now());
    if (tab.activity.activeMark() !== seen) quietUntil = Math.min(cap, Date.now() + quietMs);
  }
}

/** One task of the page's event loop (bounded: a page may have replaced setTimeout, or be navigating). */
async function pageTurn(tab: SettlingTab, deadline: number): Promise<void> {
  if (tab.closed || tab.dialog) return;
  const ms = Math.max(1, Math.min(pageTurnMs, deadline - Date.now()));
  const turn = tab.page.evaluate('new Promise((done) => setTimeout(done, 0))');
  await withDeadline(turn, ms, 'settling', tab.interrupted).catch(
    swallow('browser', 'pageSettle.pageTurn: withDeadline(turn, ms, "settling", tab.interrupted)'),
  );
}

/**
 * What a screenshot waits for that settling did not: the tab's images, fonts and media still loading (a passive
 * load holds a settle only until the backstop decided it, browser/pageActivity.ts). Bounded: a stream never ends.
 */
export async function waitForPassiveLoads(tab: SettlingTab, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (tab.activity.passiveLoads() > 0 && !tab.closed && !tab.dialog && Date.now() < deadline)
    await tab.activity.changed(deadline - Date.now());
}

/**
 * Waits (bounded) until the current document is parsed. Polls document.readyState instead of waiting for load
 * events: a page restored from the back/forward cache fires none, and Playwright's load state then never
 * arrives.
 */
export async function waitForDocument(tab: SettlingTab, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !tab.closed && !tab.dialog) {
    const state = await settledWithin(tab.page.evaluate('document.readyState'), 1_000);
    if (state === 'interactive' || state === 'complete') return;
    await sleep(50);
  }
}
