// Recipe runs spread over the endpoints of a browser grid. Each endpoint takes up to its concurrency; a run goes to
// the least loaded one (the least recently picked among equals); runs past every endpoint's share wait in one
// bounded queue, each for a bounded time. An endpoint whose browser would not start is taken out for a backoff
// (30 s, doubling up to 5 min) and the run's start moves to an endpoint it has not tried, ahead of the queue. Once
// its backoff is over an endpoint gets one run at a time, whose start is the probe: up again if it starts, out for
// twice as long if not. Only a start moves: once a run has a browser it stays there (its steps may write).
// Bookkeeping only, no I/O (gridBrowser.ts connects), so that it is testable without browsers. Each serve process
// keeps its own: nothing here is needed by another process.

import type { EndpointSpec } from './endpointSpec.ts';
import type { Refusal, RefusalAnswer, RunGate } from './runGate.ts';

/** A run's hold on one endpoint; its start may move it to another (failover) until it has begun. */
export interface Lease {
  /** The endpoint the run is to start on now. */
  readonly endpoint: EndpointSpec;
  /** The browser started here: the endpoint is up. */
  started(): void;
  /**
   * The browser would not start here: the endpoint goes down for its backoff and the run moves to an endpoint it
   * has not tried, waiting ahead of the queue for a free one; a refusal when none is left.
   */
  failover(reason: string): Promise<EndpointSpec | Refusal>;
  /** The browser went away after the run began: noted on the endpoint; the run is not moved. */
  lost(reason: string): void;
}

export interface PoolOptions {
  /** Runs that may wait for a free endpoint before new ones get 'full'. */
  readonly queue: number;
  /** How long a run waits in the queue before it gets 'waited'. */
  readonly queueWaitMs: number;
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly now?: () => number;
}

interface Endpoint {
  readonly spec: EndpointSpec;
  running: number;
  /** unknown: nothing started there yet (taken as up). */
  state: 'unknown' | 'up' | 'down';
  downUntil: number;
  consecutiveFailures: number;
  lastError: { message: string; at: number } | undefined;
  /** Runs whose browser started here, and starts that failed here. */
  runs: number;
  startFailures: number;
  lastPicked: number;
}

interface Waiter {
  readonly exclude: ReadonlySet<Endpoint>;
  grant(endpoint: Endpoint | Refusal): void;
}

export class EndpointPool implements RunGate<Lease> {
  private readonly endpoints: Endpoint[];
  private readonly waiting: Waiter[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private leases = 0;
  private picks = 0;
  private closed = false;
  private wake: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(
    specs: readonly EndpointSpec[],
    private readonly options: PoolOptions,
  ) {
    this.endpoints = specs.map((spec) => ({
      spec,
      running: 0,
      state: 'unknown',
      downUntil: 0,
      consecutiveFailures: 0,
      lastError: undefined,
      runs: 0,
      startFailures: 0,
      lastPicked: 0,
    }));
    this.now = options.now ?? Date.now;
    this.backoffMs = options.backoffMs ?? 30_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 300_000;
  }

  get running(): number {
    return this.leases;
  }

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(work: (lease: Lease) => Promise<T>): Promise<T | Refusal> {
    const first = await this.acquire(new Set(), false);
    if (typeof first === 'string') return first;
    this.leases++;
    const lease = this.lease(first);
    try {
      return await work(lease);
    } finally {
      lease.release();
      if (--this.leases === 0) for (const idle of this.idleWaiters.splice(0)) idle();
    }
  }

  close(): number {
    this.closed = true;
    const dropped = this.waiting.splice(0);
    for (const waiter of dropped) waiter.grant('closed');
    clearTimeout(this.wake);
    return dropped.length;
  }

  idle(): Promise<void> {
    if (this.leases === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  health(): Record<string, unknown> {
    const now = this.now();
    return {
      concurrency: this.endpoints.reduce((sum, endpoint) => sum + endpoint.spec.concurrency, 0),
      endpoints: this.endpoints.map((endpoint) => ({
        url: endpoint.spec.label,
        // A Selenium Grid or a Playwright server says so; a CDP endpoint as before.
        ...(endpoint.spec.kind === 'cdp' ? {} : { kind: endpoint.spec.kind }),
        // Which headers go with it, never their values.
        ...(Object.keys(endpoint.spec.headers).length > 0
          ? { headers: Object.fromEntries(Object.keys(endpoint.spec.headers).map((name) => [name, '***'])) }
          : {}),
        concurrency: endpoint.spec.concurrency,
        running: endpoint.running,
        up: endpoint.state !== 'down',
        state: endpoint.state,
        ...(endpoint.state === 'down' ? { retryInMs: Math.max(0, endpoint.downUntil - now) } : {}),
        consecutiveFailures: endpoint.consecutiveFailures,
        lastError: endpoint.lastError?.message ?? null,
        lastErrorAt: endpoint.lastError ? new Date(endpoint.lastError.at).toISOString() : null,
        runs: endpoint.runs,
        startFailures: endpoint.startFailures,
      })),
    };
  }

  answer(refusal: Refusal): RefusalAnswer {
    const total = this.endpoints.reduce((sum, endpoint) => sum + endpoint.spec.concurrency, 0);
    if (refusal === 'full')
      return {
        status: 429,
        message: `Busy: every browser endpoint is at its concurrency (${total} runs in all) and ${this.options.queue} runs are queued. Retry later.`,
      };
    if (refusal === 'waited')
      return {
        status: 503,
        message: `Busy: no browser endpoint had a free slot within ${this.options.queueWaitMs} ms (--queue-wait). Retry later.`,
      };
    if (refusal === 'closed')
      return { status: 503, message: 'tabward serve is shutting down and takes no more runs. Retry later.' };
    const down = this.endpoints.filter((endpoint) => endpoint.state === 'down');
    const soonest = Math.min(...down.map((endpoint) => endpoint.downUntil));
    const retryAfterS = Math.max(1, Math.ceil((soonest - this.now()) / 1000));
    return {
      status: 503,
      message: `Every browser endpoint is down: ${down.map(describeDown).join('; ')}. The first is tried again in ${retryAfterS} s; GET /health shows each.`,
      retryAfterS,
    };
  }

  /** One run's hold: which endpoint it is on, which it has tried, whether it has given its slot back. */
  private lease(first: Endpoint): Lease & { release(): void } {
    let bound: Endpoint | undefined = first;
    let probe = first.state === 'down';
    let released = false;
    const tried = new Set<Endpoint>([first]);
    return {
      get endpoint() {
        if (!bound) throw new Error('The run holds no browser endpoint.');
        return bound.spec;
      },
      started: () => {
        if (bound) this.started(bound);
      },
      failover: async (reason) => {
        const failed = bound;
        if (!failed || released) return 'closed';
        this.failed(failed, reason, probe);
        bound = undefined;
        this.unbind(failed);
        const next = await this.acquire(tried, true);
        if (typeof next === 'string') return next;
        // The run ended (its deadline) while this start waited: the slot goes straight back.
        if (released) {
          this.unbind(next);
          return 'closed';
        }
        bound = next;
        probe = next.state === 'down';
        tried.add(next);
        return next.spec;
      },
      lost: (reason) => {
        if (bound) bound.lastError = { message: reason, at: this.now() };
      },
      release: () => {
        released = true;
        const held = bound;
        bound = undefined;
        if (held) this.unbind(held);
      },
    };
  }

  /** An endpoint for a run that has not tried the ones in `exclude`; a moved start (`ahead`) waits first in line. */
  private acquire(exclude: ReadonlySet<Endpoint>, ahead: boolean): Promise<Endpoint | Refusal> {
    if (this.closed) return Promise.resolve('closed');
    if (ahead || this.waiting.length === 0) {
      const free = this.pick(exclude);
      if (free) return Promise.resolve(this.bind(free));
    }
    if (!this.worthWaiting(exclude)) return Promise.resolve('down');
    if (!ahead && this.waiting.length >= this.options.queue) return Promise.resolve('full');
    return new Promise((resolve) => {
      const waiter: Waiter = {
        exclude,
        grant: (endpoint) => {
          clearTimeout(timer);
          resolve(endpoint);
        },
      };
      const timer = setTimeout(() => {
        this.drop(waiter);
        resolve('waited');
      }, this.options.queueWaitMs);
      if (ahead) this.waiting.unshift(waiter);
      else this.waiting.push(waiter);
      this.dispatch();
    });
  }

  /** A slot given back (a run ended, or its start moved elsewhere): the queue goes on. */
  private unbind(endpoint: Endpoint): void {
    endpoint.running--;
    this.dispatch();
  }

  private started(endpoint: Endpoint): void {
    endpoint.state = 'up';
    endpoint.consecutiveFailures = 0;
    endpoint.runs++;
  }

  /**
   * A start failed. Runs that were already on their way when another one's failure took the endpoint out add no
   * backoff; a probe that fails doubles it.
   */
  private failed(endpoint: Endpoint, reason: string, probe: boolean): void {
    endpoint.startFailures++;
    endpoint.lastError = { message: reason, at: this.now() };
    if (endpoint.state === 'down' && !probe) return;
    endpoint.consecutiveFailures++;
    const backoff = Math.min(this.backoffMs * 2 ** (endpoint.consecutiveFailures - 1), this.maxBackoffMs);
    endpoint.state = 'down';
    endpoint.downUntil = this.now() + backoff;
  }

  private bind(endpoint: Endpoint): Endpoint {
    endpoint.running++;
    endpoint.lastPicked = ++this.picks;
    return endpoint;
  }

  /** The least loaded endpoint with room; one whose backoff is over counts, for one run (the probe). */
  private pick(exclude: ReadonlySet<Endpoint>): Endpoint | undefined {
    const now = this.now();
    const free = this.endpoints.filter(
      (endpoint) =>
        !exclude.has(endpoint) &&
        (endpoint.state === 'down'
          ? now >= endpoint.downUntil && endpoint.running === 0
          : endpoint.running < endpoint.spec.concurrency),
    );
    const load = (endpoint: Endpoint) => endpoint.running / endpoint.spec.concurrency;
    return free.sort((a, b) => load(a) - load(b) || a.lastPicked - b.lastPicked)[0];
  }

  /**
   * Whether a run may wait: an endpoint it has not tried is up (and busy), runs something, or is back from its
   * backoff. A run whose every endpoint is down is told so at once (with when to retry), not left waiting.
   */
  private worthWaiting(exclude: ReadonlySet<Endpoint>): boolean {
    const now = this.now();
    return this.endpoints.some(
      (endpoint) =>
        !exclude.has(endpoint) &&
        (endpoint.state !== 'down' || endpoint.running > 0 || now >= endpoint.downUntil),
    );
  }

  /** Hands free endpoints to the waiting runs in order; a run that nothing can serve any more is told so. */
  private dispatch(): void {
    for (const waiter of [...this.waiting]) {
      const free = this.pick(waiter.exclude);
      if (free) {
        this.drop(waiter);
        waiter.grant(this.bind(free));
      } else if (!this.worthWaiting(waiter.exclude)) {
        this.drop(waiter);
        waiter.grant('down');
      }
    }
    this.wakeWhenBack();
  }

  /** While runs wait, the queue is looked at again when the next endpoint's backoff ends (it may take one). */
  private wakeWhenBack(): void {
    clearTimeout(this.wake);
    this.wake = undefined;
    const now = this.now();
    const ends = this.endpoints
      .filter((endpoint) => endpoint.state === 'down' && endpoint.downUntil > now)
      .map((endpoint) => endpoint.downUntil);
    if (this.waiting.length === 0 || ends.length === 0) return;
    this.wake = setTimeout(() => this.dispatch(), Math.min(...ends) - now);
    this.wake.unref();
  }

  private drop(waiter: Waiter): void {
    const at = this.waiting.indexOf(waiter);
    if (at >= 0) this.waiting.splice(at, 1);
  }
}

function describeDown(endpoint: Endpoint): string {
  return `${endpoint.spec.label} (${endpoint.lastError?.message ?? 'no start yet'})`;
}
