// A set of waiters woken together: "resolve on the next change, or after `ms`", for the tab's activity
// (browser/pageActivity.ts) and the requests its renderer announced (browser/announcedRequests.ts).

export class Wakeups {
  private readonly waiters = new Set<() => void>();

  /** Resolves at the next wake(), or after `ms`. */
  next(ms: number): Promise<void> {
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

  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
