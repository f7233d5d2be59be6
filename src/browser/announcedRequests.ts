// The requests a tab's renderer announced on tabward's own CDP session that have not ended there, and the main
// frame's navigations it asked for that have no request yet: what settling after an action waits to see reach
// Playwright's events (and so the page's activity, the recipe's "write" and the backstop's accounting) before it
// lets the action return. Without it, an action whose request another hook still held when the quiet window
// ended (a key press that submits a form, its navigation paused by an interceptor) returned before its request
// was seen: the audit said it sent nothing and a saved recipe did not mark it `write` (docs/architecture.md,
// "Settling").

import type { CDPSession } from 'playwright-core';
import { Wakeups } from './wakeups.ts';

/** CORS preflights: Chromium sends them on its own, and Playwright reports none. */
const unreported = new Set(['Preflight']);
/** How many announced requests are remembered: an action waits for its own, just sent. */
const kept = 100;

interface Announced {
  /** The announcement count when it was announced (RendererAnnouncements' mark). */
  readonly seq: number;
  /** Absent for a navigation asked for and not yet sent: any method. */
  method: string | undefined;
  url: string;
}

export class AnnouncedRequests {
  private readonly open = new Map<string, Announced>();
  private readonly wakeups = new Wakeups();
  /** The navigation the main frame asked for, until its request is announced or its loading stops. */
  private asked: Announced | undefined;

  constructor(
    session: CDPSession,
    /** The announcement count now. */
    private readonly seq: () => number,
    /** The main frame's id (a page target's is its target id). */
    private readonly mainFrame: () => string | undefined,
  ) {
    session.on('Page.frameRequestedNavigation', (event) => {
      if (event.frameId !== this.mainFrame() || event.disposition !== 'currentTab') return;
      if (webAddress(event.url))
        this.asked = { seq: this.seq(), method: undefined, url: withoutFragment(event.url) };
    });
    session.on('Network.requestWillBeSent', (event) => {
      if (event.type === 'Document' && event.frameId === this.mainFrame()) this.settleAsked();
      const { url = '', method = 'GET' } = event.request ?? {};
      const known = this.open.get(event.requestId);
      // A redirect's next hop: the same request, at its new address and method (a 303 turns a POST into a GET);
      // Playwright reports each hop.
      if (known) {
        known.url = withoutFragment(url);
        known.method = method.toUpperCase();
      } else if (webAddress(url) && !unreported.has(event.type ?? '')) {
        this.open.set(event.requestId, {
          seq: this.seq(),
          method: method.toUpperCase(),
          url: withoutFragment(url),
        });
        if (this.open.size > kept) this.open.delete(this.open.keys().next().value as string);
      }
    });
    const ended = (event: { requestId: string }) => {
      if (this.open.delete(event.requestId)) this.wake();
    };
    session.on('Network.loadingFinished', ended);
    session.on('Network.loadingFailed', ended);
    const mainFrameMoved = (event: { frameId?: string; frame?: { id: string } }) => {
      if ((event.frameId ?? event.frame?.id) === this.mainFrame()) this.settleAsked();
    };
    session.on('Page.frameNavigated', mainFrameMoved);
    session.on('Page.navigatedWithinDocument', mainFrameMoved);
    session.on('Page.frameStoppedLoading', mainFrameMoved);
  }

  /**
   * The requests announced after `mark` that have not ended and that `seen` says were not reported yet, as
   * "METHOD url" (a navigation asked for and not sent yet: "navigation url").
   */
  unseenSince(mark: number, seen: (method: string | undefined, url: string) => boolean): string[] {
    const waiting = [...this.open.values(), ...(this.asked ? [this.asked] : [])];
    return waiting
      .filter((request) => request.seq > mark && !seen(request.method, request.url))
      .map((request) => `${request.method ?? 'navigation'} ${request.url}`);
  }

  /** Resolves when an announced request ends or an asked-for navigation is sent or given up, or after `ms`. */
  changed(ms: number): Promise<void> {
    return this.wakeups.next(ms);
  }

  private settleAsked(): void {
    if (this.asked === undefined) return;
    this.asked = undefined;
    this.wake();
  }

  private wake(): void {
    this.wakeups.wake();
  }
}

export function withoutFragment(url: string): string {
  const at = url.indexOf('#');
  return at < 0 ? url : url.slice(0, at);
}

function webAddress(url: string): boolean {
  return /^https?:/i.test(url);
}
