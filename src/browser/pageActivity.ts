// What a tab is doing on the network, for settling after an action: the requests in flight, each numbered in the
// order it started, and a wake-up for whoever waits for that to change. Event-driven: nothing here polls or
// sleeps, so a settle after an action that set nothing off costs one round trip, not a fixed delay.

import type { Page, Request } from 'playwright-core';

/** Methods that only read: anything else may change state on the server. */
const readingMethods = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How many of the latest state-changing requests are remembered (an action asks about its own, just sent). */
const keptWrites = 20;

export class PageActivity {
  private seq = 0;
  private readonly inFlight = new Map<Request, number>();
  private readonly waiters = new Set<() => void>();
  private readonly writes: { readonly seq: number; readonly what: string }[] = [];

  constructor(page: Page) {
    page.on('request', (request) => {
      this.inFlight.set(request, ++this.seq);
      if (!readingMethods.has(request.method())) {
        this.writes.push({ seq: this.seq, what: `${request.method()} ${withoutQuery(request.url())}` });
        if (this.writes.length > keptWrites) this.writes.shift();
      }
      this.wake();
    });
    const done = (request: Request) => {
      if (this.inFlight.delete(request)) this.wake();
    };
    page.on('requestfinished', done);
    page.on('requestfailed', done);
    const wake = () => this.wake();
    page.on('framenavigated', wake);
    page.on('domcontentloaded', wake);
    page.on('dialog', wake);
    page.on('crash', wake);
    page.on('close', wake);
  }

  /** A marker: the requests started after it are the ones an action sent. */
  mark(): number {
    return this.seq;
  }

  /**
   * The first request started after `mark` that may change state (a form's POST, a fetch PUT...), as "METHOD
   * origin/path": what a saved recipe marks as a write, whatever the element's label says.
   */
  writeSince(mark: number): string | undefined {
    return this.writes.find((write) => write.seq > mark)?.what;
  }

  /** How many requests started after `mark` are still unanswered. */
  pendingSince(mark: number): number {
    let count = 0;
    for (const seq of this.inFlight.values()) if (seq > mark) count++;
    return count;
  }

  /** Resolves on the next request, answer, navigation or interruption of the tab, or after `ms`. */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.waiters.add(done);
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** A URL without its query and fragment: where a request went, without what it carried. */
function withoutQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url.replace(/[?#].*$/s, '');
  }
}
