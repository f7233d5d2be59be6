// What a tab's renderer says it has started (a request, a navigation, a new window), counted on tabward's own CDP
// session of the tab. Chromium sends those events on that session before its reply to any command sent there
// after they happened (measured on 156 for fetch, XHR, beacons, images, form submissions, location changes, link
// clicks, window.open, under load): once an evaluate there that waited one turn of the page's event loop has
// answered, everything the page started before that turn has been counted. TrackedPage.settle uses it to skip
// its quiet window after an action that set nothing off. The same session counts the main frame's new documents
// (cross-document commits, not pushState): once one has committed, the document the action ran in is no longer
// the one shown, and settling no longer waits on it (what it still sends is judged as a late request).
//
// Requests are counted only while an action runs (from its mark to the end of its settling): the session's Network
// events are on just then. Left on, every event of every request the tab made (six or so a request: sent, extra
// info, response, data, finished) came to tabward twice, once for Playwright and once here, a second stream to
// parse and dispatch on tabward's one thread while a page loads (measured: a news page of 32 assets read 4-7%
// slower with it on; bench/results.md, the ninth pass).

import type { CDPSession } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { AnnouncedRequests } from './announcedRequests.ts';
import { settledWithin } from './deadline.ts';

/** The events that announce something the renderer started. */
const announcing = ['Network.requestWillBeSent', 'Page.frameRequestedNavigation', 'Page.windowOpen'] as const;

/** Runs in the page (source text: the Node tsconfig has no DOM types). */
const nextFrameAndTask = `new Promise((done) => {
  const after = () => setTimeout(done, 0);
  const fallback = setTimeout(after, 50);
  requestAnimationFrame(() => { clearTimeout(fallback); after(); });
})`;

/** A wait for the main frame's next commit; cancelled, it holds nothing (a tab that never navigates keeps no waiters). */
export interface CommitWait {
  readonly committed: Promise<void>;
  readonly cancel: () => void;
}

export class RendererAnnouncements {
  private count = 0;
  private documents = 0;
  /** Told at the main frame's next commit, then dropped. */
  private readonly commitWaiters = new Set<() => void>();
  private counting: Promise<boolean> | undefined;
  private mainFrameId: string | undefined;
  /** The requests announced and not ended yet, once counting is on (see unseenSince). */
  private requests: AnnouncedRequests | undefined;
  /** Actions marked and not ended: the session's Network events are on while there is one. */
  private actions = 0;
  /** Network events turned on for the actions running (resolves false when they could not be). */
  private networkOn: Promise<boolean> | undefined;

  constructor(private readonly session: Promise<CDPSession | undefined>) {}

  /**
   * Before an action: the count now, for since(), with requests counted until actionEnded() (Network events on
   * this session, with no bodies kept). Undefined when counting cannot be on: the caller then assumes anything may
   * have been started. Each mark is ended by one actionEnded(), whatever the action's outcome.
   */
  async mark(timeoutMs = 1_000): Promise<number | undefined> {
    this.counting ??= this.startCounting();
    this.actions++;
    const on = await settledWithin(
      this.counting.then((started) => started && this.networkEvents()),
      timeoutMs,
    );
    return on === true ? this.count : undefined;
  }

  /** An action marked has settled (or failed): with none left running, requests are no longer counted. */
  actionEnded(): void {
    this.actions = Math.max(0, this.actions - 1);
    if (this.actions > 0 || !this.networkOn) return;
    this.networkOn = undefined;
    // Requests still open are never told to end now: forgotten, as counted before any later mark.
    this.requests?.forget();
    void this.session.then((session) =>
      session?.send('Network.disable').catch(swallow('browser', 'rendererAnnouncements: Network.disable')),
    );
  }

  /** How many announcements came after `mark`. */
  since(mark: number): number {
    return this.count - mark;
  }

  /**
   * How many new documents the main frame has committed since counting began (a back/forward cache restore is
   * one; a same-document navigation is not). Counted only once mark() has turned counting on.
   */
  documentsCommitted(): number {
    return this.documents;
  }

  /**
   * The requests announced after `mark` that have not ended on this session and that `seen` (Playwright's
   * reports, browser/pageActivity.ts) has not reported: what settling still waits to see. Empty when counting
   * is off.
   */
  unseenSince(mark: number, seen: (method: string | undefined, url: string) => boolean): string[] {
    return this.requests?.unseenSince(mark, seen) ?? [];
  }

  /** Resolves when an announced request ends or an asked-for navigation is sent or given up, or after `ms`. */
  requestsChanged(ms: number): Promise<void> {
    return this.requests?.changed(ms) ?? new Promise((done) => setTimeout(done, ms));
  }

  /**
   * Resolves once the main frame has committed more documents than `mark` (a documentsCommitted() value); cancel
   * it when no longer waiting.
   */
  documentCommitted(mark: number): CommitWait {
    if (this.documents > mark) return { committed: Promise.resolve(), cancel: () => undefined };
    let waiter = () => {};
    const committed = new Promise<void>((resolve) => {
      waiter = resolve;
    });
    this.commitWaiters.add(waiter);
    return { committed, cancel: () => this.commitWaiters.delete(waiter) };
  }

  /**
   * Waits, asked on this session, for the page's next frame (at most 50 ms: a hidden tab draws none) and one task
   * after it: what a handler set off through a timer of 0, a microtask, an animation frame or an effect run after
   * rendering (React's useEffect) has been started by then. True when the page answered in time.
   */
  async turn(timeoutMs: number): Promise<boolean> {
    const session = await this.session;
    if (!session) return false;
    const turned = session
      .send('Runtime.evaluate', { expression: nextFrameAndTask, awaitPromise: true })
      .then(
        (reply) => !(reply as { exceptionDetails?: unknown }).exceptionDetails,
        () => false,
      );
    return (await settledWithin(turned, timeoutMs)) === true;
  }

  private async startCounting(): Promise<boolean> {
    const session = await this.session;
    if (!session) return false;
    for (const event of announcing) session.on(event, () => this.count++);
    this.requests = new AnnouncedRequests(
      session,
      () => this.count,
      () => this.mainFrameId,
    );
    session.on('Page.frameNavigated', (event) => {
      if ((event as { frame: { parentId?: string } }).frame.parentId) return;
      this.mainFrameId = event.frame.id;
      this.documents++;
      for (const waiter of this.commitWaiters) waiter();
      this.commitWaiters.clear();
    });
    try {
      const [tree] = await Promise.all([
        // Only for the main frame's id; a failure leaves it to the next commit.
        session.send('Page.getFrameTree').catch(() => undefined),
        session.send('Page.enable'),
      ]);
      this.mainFrameId ??= tree?.frameTree?.frame?.id;
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Network events on this session while an action runs. Commands on one session run in order, so an enable sent
   * after the last action's disable leaves them on; its reply comes after it took effect.
   */
  private networkEvents(): Promise<boolean> {
    if (this.actions === 0) return Promise.resolve(false);
    this.networkOn ??= this.session.then((session) =>
      session
        ? session
            .send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0, maxPostDataSize: 0 })
            .then(
              () => true,
              () => false,
            )
        : false,
    );
    return this.networkOn;
  }
}
