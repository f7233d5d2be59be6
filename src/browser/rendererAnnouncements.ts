// What a tab's renderer says it has started (a request, a navigation, a new window), counted on tabward's own CDP
// session of the tab. Chromium sends those events on that session before its reply to any command sent there
// after they happened (measured on 156 for fetch, XHR, beacons, images, form submissions, location changes, link
// clicks, window.open, under load): once an evaluate there that waited one turn of the page's event loop has
// answered, everything the page started before that turn has been counted. TrackedPage.settle uses it to skip
// its quiet window after an action that set nothing off. The same session counts the main frame's new documents
// (cross-document commits, not pushState): once one has committed, the document the action ran in is no longer
// the one shown, and settling no longer waits on it (what it still sends is judged as a late request).

import type { CDPSession } from 'playwright-core';
import { AnnouncedRequests } from './announcedRequests.ts';
import { settledWithin } from './deadline.ts';

/** The events that announce something the renderer started. */
const announcing = ['Network.requestWillBeSent', 'Page.frameRequestedNavigation', 'Page.windowOpen'] as const;

/**
 * Runs in the page (source text: the Node tsconfig has no DOM types). A hidden document draws no frames: the wait
 * for one ends after 50 ms. A visible one draws one every 16 ms, but on a starved machine the next can come later
 * than 50 ms: what a handler put in it (a fetch in requestAnimationFrame) was then announced after the turn, settling
 * saw nothing started and returned, and the fetch reached the backstop as a late request (refused where a human
 * would have been asked). So a visible document's frame is waited for up to 250 ms; one that says it is visible and
 * draws nothing (a page that replaced requestAnimationFrame) costs each action that, bounded by the turn's own cap.
 */
const nextFrameAndTask = `new Promise((done) => {
  const after = () => setTimeout(done, 0);
  const fallback = setTimeout(after, document.visibilityState === 'visible' ? 250 : 50);
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

  constructor(private readonly session: Promise<CDPSession | undefined>) {}

  /**
   * The count now, for since(); the first call turns counting on (Network events on this session, with no
   * bodies kept). Undefined when counting cannot be on: the caller then assumes anything may have been started.
   */
  async mark(timeoutMs = 1_000): Promise<number | undefined> {
    this.counting ??= this.startCounting();
    const on = await settledWithin(this.counting, timeoutMs);
    return on === true ? this.count : undefined;
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
   * Waits, asked on this session, for the page's next frame (at most 250 ms, 50 if hidden: a hidden tab draws none)
   * and one task after it: what a handler set off through a timer of 0, a microtask, an animation frame or an effect
   * run after rendering (React's useEffect) has been started by then. True when the page answered in time.
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
        session.send('Network.enable', {
          maxTotalBufferSize: 0,
          maxResourceBufferSize: 0,
          maxPostDataSize: 0,
        }),
      ]);
      this.mainFrameId ??= tree?.frameTree?.frame?.id;
      return true;
    } catch {
      return false;
    }
  }
}
