// A bounded number of concurrent runs in tabward's own browser, with a bounded queue behind them; past both,
// callers are turned away at once rather than left waiting, and a queued run waits a bounded time. Closing (a
// server shutting down) turns away new and queued runs and lets the running ones finish.

import type { Refusal, RefusalAnswer, RunGate } from './runGate.ts';

export class Slots implements RunGate<undefined> {
  running = 0;
  private closed = false;
  /** Each queued run waits for a word: true to run in the slot handed over, a refusal otherwise. */
  private readonly waiting: ((go: true | Refusal) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueLimit: number,
    /** How long a queued run waits for a slot before it is turned away. */
    private readonly queueWaitMs = Number.POSITIVE_INFINITY,
  ) {}

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(work: (lease: undefined) => Promise<T>): Promise<T | Refusal> {
    if (this.closed) return 'closed';
    if (this.running < this.concurrency) {
      this.running++;
    } else {
      if (this.waiting.length >= this.queueLimit) return 'full';
      // The finishing run hands its slot straight to us: `running` already counts this run.
      const go = await this.wait();
      if (go !== true) return go;
    }
    try {
      return await work(undefined);
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
    for (const stop of dropped) stop('closed');
    return dropped.length;
  }

  /** Resolves once no run is running. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  health(): Record<string, unknown> {
    return { concurrency: this.concurrency };
  }

  answer(refusal: Refusal): RefusalAnswer {
    if (refusal === 'full')
      return {
        status: 429,
        message: `Busy: ${this.concurrency} runs and ${this.queueLimit} queued. Retry later.`,
      };
    if (refusal === 'waited')
      return {
        status: 503,
        message: `Busy: no run slot came free within ${this.queueWaitMs} ms (--queue-wait). Retry later.`,
      };
    return { status: 503, message: 'tabward serve is shutting down and takes no more runs. Retry later.' };
  }

  private wait(): Promise<true | Refusal> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const go = (word: true | Refusal) => {
        clearTimeout(timer);
        resolve(word);
      };
      this.waiting.push(go);
      if (Number.isFinite(this.queueWaitMs))
        timer = setTimeout(() => {
          const at = this.waiting.indexOf(go);
          if (at >= 0) this.waiting.splice(at, 1);
          go('waited');
        }, this.queueWaitMs);
    });
  }
}
