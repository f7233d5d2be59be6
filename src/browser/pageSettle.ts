// Settling a tab after an action: waiting for what the action set off (a navigation, its document, the requests
// it sent), and only that, bounded; waiting for a document to be parsed and its DOMContentLoaded handlers run; and,
// before a screenshot, for the images settling does not wait for. TrackedPage.settle, waitForDocument and
// passiveLoadsSettled (browser/pages.ts); docs/architecture.md, "Settling".

import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialog, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { settledWithin, withDeadline } from './deadline.ts';
import type { PageActivity } from './pageActivity.ts';
import type { RendererAnnouncements } from './rendererAnnouncements.ts';
import { NoOwnSession } from './snapshot/isolatedReads.ts';

/** How long the requests an action sent may keep the agent waiting after it (a stream never finishes). */
const settleRequestsMs = 500;
/** How long no new request must start after an action before it counts as settled. */
const quietMs = 60;
/** How long an announced request may take to reach Playwright's events (see announcedReported). */
const announcedWaitMs = 3_000;
/** The bound on one turn of the page's event loop. */
const pageTurnMs = 1_000;

/** What settling reads of a tab (a TrackedPage). */
export interface SettlingTab {
  readonly page: Page;
  /** Evaluates in tabward's isolated world of the main document, awaiting a promise (TrackedPage.readInDocument). */
  readInDocument<T>(expression: string): Promise<T>;
  readonly documentSeq: number;
  readonly closed: boolean;
  readonly dialog: Dialog | undefined;
  readonly activity: PageActivity;
  readonly announcements: RendererAnnouncements;
  readonly interrupted: Promise<never>;
  /** Main-frame navigation requests not answered yet. */
  readonly pendingNavigations: number;
}

/** What settling after an action is measured from, taken just before it (TrackedPage.markAction). */
export interface ActionMarks {
  /** The tab's activity (PageActivity.mark). */
  readonly activity: number;
  /** The renderer's announcements (RendererAnnouncements.mark): undefined when counting could not be turned on. */
  readonly announced: number | undefined;
  /** The main frame's new documents (RendererAnnouncements.documentsCommitted). */
  readonly documents: number;
}

/**
 * After an action: waits for what it set off, and only that. One turn of the page's event loop lets a
 * navigation or request its handlers scheduled show itself; unless the renderer announced nothing since the
 * action began, a quiet window then lets what it started reach the backstop; a navigation is followed until its
 * document is parsed, and the requests sent since the action began are given a brief window to answer, so that a
 * stream or a long poll never holds the agent. An action that set nothing off costs that one round trip, not a
 * fixed delay. Once the main frame has committed a new document, the one the action ran in is no longer shown:
 * nothing more is asked of it (the turn and the quiet window end there), and the new document is waited for as
 * navigate_page waits for one (parsed, its DOMContentLoaded handlers run). What the old document still sends (a
 * pagehide beacon) reaches the backstop as a late request.
 */
export async function settlePage(tab: SettlingTab, timeoutMs: number, marks: ActionMarks): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const documentBefore = tab.documentSeq;
  // Counted only once counting is on: a commit counted is one that came after the mark.
  const replacement = tab.announcements.documentCommitted(marks.documents);
  const replaced = () => tab.announcements.documentsCommitted() !== marks.documents;
  const stopped = () => tab.closed || tab.dialog !== undefined || Date.now() >= deadline;
  try {
    const turnMs = Math.max(1, Math.min(pageTurnMs, deadline - Date.now()));
    // A dialog the page opens meanwhile stops the turn (the page answers nothing until the dialog is answered), and
    // so does a new document (the turn was asked of the old one).
    const turned = () =>
      Promise.race([
        tab.announcements.turn(turnMs),
        tab.interrupted.catch(() => false),
        replacement.committed.then(() => false),
      ]);
    const counted =
      marks.announced !== undefined && !tab.closed && !tab.dialog && !replaced() && (await turned());
    if (!replaced()) {
      if (!counted) await pageTurn(tab, deadline);
      if (!counted || maySendUnannounced(tab, marks))
        await quietWindow(tab, deadline, () => stopped() || replaced(), replacement.committed);
      if (marks.announced !== undefined)
        await announcedReported(tab, marks, deadline, () => stopped() || replaced(), replacement.committed);
    }
    const navigating = tab.pendingNavigations > 0;
    while (tab.pendingNavigations > 0 && !stopped()) await tab.activity.changed(deadline - Date.now());
    if (navigating || tab.documentSeq !== documentBefore || replaced())
      await waitForDocument(tab, Math.max(1, deadline - Date.now()));
    const quietBy = Math.min(deadline, Date.now() + settleRequestsMs);
    let waited = false;
    while (tab.activity.pendingSince(marks.activity) > 0 && !stopped() && Date.now() < quietBy) {
      waited = true;
      await tab.activity.changed(quietBy - Date.now());
    }
    // The answers' handlers update the page in a task of their own.
    if (waited) await pageTurn(tab, deadline);
  } finally {
    replacement.cancel();
  }
}

/**
 * Whether something the action set off may still reach the backstop: the renderer announced a request, a
 * navigation or a window; a request was seen already; or the page has frames or workers whose renderers
 * announce on sessions of their own (an out-of-process frame, a worker), so that silence here proves nothing.
 */
function maySendUnannounced(tab: SettlingTab, marks: ActionMarks): boolean {
  return (
    marks.announced === undefined ||
    tab.announcements.since(marks.announced) > 0 ||
    tab.activity.mark() !== marks.activity ||
    tab.page.frames().length > 1 ||
    tab.page.workers().length > 0
  );
}

/**
 * A request the action set off (a click handler's fetch, a beacon) can still be on its way to the network
 * backstop when the page's next task has run: wait until no new request has started for a short while, so it is
 * held and asked about as this action's doing rather than refused as a late one. Bounded. Passive loads starting
 * (a new document's images, one after another) do not extend it: one that reaches the backstop after the action
 * is judged as a late request, stopped where a human would have been asked (browser/pageActivity.ts). It ends
 * when the main frame commits a new document (`committed`): nothing more is waited for from the one replaced.
 */
async function quietWindow(
  tab: SettlingTab,
  deadline: number,
  stopped: () => boolean,
  committed: Promise<void>,
): Promise<void> {
  const cap = Math.min(deadline, Date.now() + settleRequestsMs);
  let quietUntil = Math.min(cap, Date.now() + quietMs);
  while (Date.now() < quietUntil && !stopped()) {
    const seen = tab.activity.activeMark();
    await Promise.race([tab.activity.changed(quietUntil - Date.now()), committed]);
    if (tab.activity.activeMark() !== seen) quietUntil = Math.min(cap, Date.now() + quietMs);
  }
}

/**
 * The requests the renderer announced since the action began (and the navigation it asked for) reach
 * Playwright's events only once every hook ahead of Playwright's has let them on: under load that can be later
 * than the quiet window. Waits until each has been reported, has ended, or was given up, bounded by
 * `announcedWaitMs` (a stream begun just before the mark is reported before it, and never ends).
 */
async function announcedReported(
  tab: SettlingTab,
  marks: ActionMarks,
  deadline: number,
  stopped: () => boolean,
  committed: Promise<void>,
): Promise<void> {
  const announced = marks.announced ?? 0;
  const seen = (method: string | undefined, url: string) =>
    tab.activity.sawSince(marks.activity, method, url);
  const until = Math.min(deadline, Date.now() + announcedWaitMs);
  while (!stopped() && Date.now() < until && tab.announcements.unseenSince(announced, seen).length > 0) {
    const ms = until - Date.now();
    await Promise.race([tab.activity.changed(ms), tab.announcements.requestsChanged(ms), committed]);
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
 * Runs in tabward's isolated world of the main document (source text: the Node tsconfig has no DOM types), out of
 * the page's reach (a page that replaces addEventListener, setTimeout or performance in its own world changes
 * nothing here). Where the document is in its loading: 'loading', 'parsed' (its deferred scripts may still be
 * loading), or 'ready' (its DOMContentLoaded handlers have run, so what they fetch has been started). A page
 * restored from the back/forward cache fires no load events; its navigation entry says it was ready long ago.
 */
const documentState = `(() => {
  const entry = performance.getEntriesByType('navigation')[0];
  if (document.readyState === 'complete' || (entry ? entry.domContentLoadedEventEnd > 0 : document.readyState !== 'loading'))
    return 'ready';
  return document.readyState === 'loading' ? 'loading' : 'parsed';
})()`;

/**
 * Resolves with the document's state once it moves on: 'parsed' when the parser is done, 'ready' one task after its
 * DOMContentLoaded handlers (a message, which a background tab does not throttle as it does timers).
 */
const nextDocumentState = `new Promise((done) => {
  const state = ${documentState};
  if (state === 'ready') return done(state);
  addEventListener('DOMContentLoaded', () => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => done('ready');
    channel.port2.postMessage(null);
  }, { once: true });
  if (state === 'loading') document.addEventListener('readystatechange', () => done('parsed'), { once: true });
})`;

/**
 * Waits (bounded) until the current document is parsed and its DOMContentLoaded handlers have run, as
 * navigate_page waits for a document. A parsed document whose deferred scripts are still loading is waited for at
 * most `deferredMs` more (a hung script holds the agent no longer than a hung request would); the bounds are kept
 * here, not by timers in the page. Asked again when the document is replaced meanwhile (a redirect by script, a
 * reload), each ask bounded.
 */
export async function waitForDocument(
  tab: SettlingTab,
  timeoutMs: number,
  deferredMs = settleRequestsMs,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let parsedAt: number | undefined;
  while (!tab.closed && !tab.dialog) {
    const bound = Math.min(
      deadline,
      Date.now() + pageTurnMs,
      (parsedAt ?? Number.POSITIVE_INFINITY) + deferredMs,
    );
    if (Date.now() >= bound) return;
    // Without tabward's own session of the tab (it could not be opened), the page's world is asked: a page lying
    // there only changes how long the agent waits, and every wait is bounded here.
    const asked = tab
      .readInDocument<string>(nextDocumentState)
      .catch((error: unknown) =>
        error instanceof NoOwnSession ? tab.page.evaluate<string>(nextDocumentState) : Promise.reject(error),
      );
    const state = await settledWithin(asked, bound - Date.now());
    if (state === 'ready') return;
    if (state === 'parsed') parsedAt ??= Date.now();
    // No answer: the document went away before it answered (ask the one there now), or is still loading.
    else await sleep(20);
  }
}
