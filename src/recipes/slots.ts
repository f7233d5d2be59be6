// A bounded number of concurrent runs, with a bounded queue behind them; past both, callers are turned away
// at once rather than left waiting. Closing (a server shutting down) turns away new and queued runs and lets
// the running ones finish.

export class Slots {
  running = 0;
  private closed = false;
  /** Each queued run waits for a word: true to run in the slot handed over, false when closed. */
  private readonly waiting: ((go: boolean) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueLimit: number,
  ) {}

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(work: () => Promise<T>): Promise<T | 'full' | 'closed'> {
    if (this.closed) return 'closed';
    if (this.running < this.concurrency) {
      this.running++;
    } else {
      if (this.waiting.length >= this.queueLimit) return 'full';
      // The finishing run hands its slot straight to us: `running` already counts this run.
      const go = await new Promise<boolean>((resolve) => this.waiting.push(resolve));
      if (!go) return 'closed';
    }
    try {
      return await work();
    } finally {
      const next = this.closed ? undefined : this.waiting.shift();
      if (next) next(true);
      else if (--this.running === 0) for (const idle of this.idleWaiters.splice(0)) idle();
    }
  }

  /** Takes no more runs and drops the queued ones; returns how many were queued. */
  close(): number {
    this.closed = true;
    const dropped = this.waiting.splice(0);
    for (const stop of dropped) stop(false);
    return dropped.length;
  }

  /** Resolves once no run is running. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
