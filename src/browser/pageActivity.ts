// What a tab is doing on the network, for settling after an action: the requests in flight, each numbered in the
// order it started, and a wake-up for whoever waits for that to change. Event-driven: nothing here polls or
// sleeps, so a settle after an action that set nothing off costs one round trip, not a fixed delay.

import type { Page, Request } from 'playwright-core';

export class PageActivity {
  private seq = 0;
  private readonly inFlight = new Map<Request, number>();
  private readonly waiters = new Set<() => void>();

  constructor(page: Page) {
    page.on('request', (request) => {
      this.inFlight.set(request, ++this.seq);
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
