// What ties the CDP hooks to the choke point (docs/architecture.md, "The choke point"). A hook that judged a request
// with everything only it knows (its tab, its frame, the action running, the human answering) and let it go puts a
// random single-use token on it (the x-tabward-request header); the egress proxy spends the token and sends the
// request on. A request that arrives with no live token for its own method and URL was judged by no hook (a frame
// tearing down after its session ended, a fetchLater, the browser process's own fetches): the proxy judges it alone,
// with nothing to tie it to an action, and nothing can let it through that needs a human's word.

import { randomBytes } from 'node:crypto';
import { swallowed } from '../core/debug.ts';

/** How long a token waits for its request to reach the proxy (a request paused longer is judged again). */
const tokenLifeMs = 120_000;
const maxTokens = 10_000;
/**
 * Live tokens of one method and URL. The HTTP cache answers a request after a hook judged it (keptHttpCache.ts), so
 * its token is never spent: a page fetching one cached script in a loop would otherwise fill the map in seconds and
 * push out the tokens of requests still on their way (then judged alone at the proxy, where no pass reaches).
 */
const maxTokensOfOneRequest = 32;
const socketLifeMs = 5_000;

interface Issued {
  readonly key: string;
  readonly until: number;
  /** The session's taint epoch when the hook judged it: grown since, the taint is judged again when it is spent. */
  readonly epoch: number;
}

/** What spending a token or a socket allowance tells the proxy. */
export interface Spent {
  readonly epoch: number;
}

export class RequestTags {
  private readonly issued = new Map<string, Issued>();
  /** The tokens issued for each request key, oldest first (some may be spent or pruned already). */
  private readonly byKey = new Map<string, string[]>();
  /**
   * Begins every token this instance issues: several clients attached to one user's Chrome each have a gate that
   * sees the others' tagged requests, and each judges only its own (the others' gates judge theirs).
   */
  private readonly prefix = randomBytes(4).toString('hex');
  /** WebSockets a page's route let through (Playwright's socket route can set no header): method-less keys. */
  private readonly sockets = new Map<string, { until: number; epoch: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A token for one request a hook let go, judged at the session's taint `epoch`. */
  issue(method: string, url: string, epoch: number): string {
    this.prune();
    const token = `${this.prefix}${randomBytes(16).toString('hex')}`;
    const key = keyOf(method, url);
    this.issued.set(token, { key, until: this.now() + tokenLifeMs, epoch });
    const ofKey = (this.byKey.get(key) ?? []).filter((each) => this.issued.has(each));
    ofKey.push(token);
    // The oldest of its own request makes room: a flood of one request never pushes out another's token.
    while (ofKey.length > maxTokensOfOneRequest) this.issued.delete(ofKey.shift() ?? '');
    this.byKey.set(key, ofKey);
    return token;
  }

  /** Whether `token` is one this instance issued (live, spent or expired), not another client's. */
  ours(token: string): boolean {
    return token.startsWith(this.prefix);
  }

  /** A hook's second look at a request another hook already judged (the route, then the tab's CDP session). */
  judged(token: string | undefined, method: string, url: string): boolean {
    if (!token) return false;
    const entry = this.issued.get(token);
    return entry !== undefined && entry.until > this.now() && entry.key === keyOf(method, url);
  }

  /** The proxy's: once for a live token of exactly this request, which is spent. */
  spend(token: string | undefined, method: string, url: string): Spent | undefined {
    if (!token || !this.judged(token, method, url)) return undefined;
    const entry = this.issued.get(token);
    this.issued.delete(token);
    return entry && { epoch: entry.epoch };
  }

  /**
   * A WebSocket the page's route let through, to be let through once by the proxy, within seconds: the page's own
   * socket follows its route's verdict at once, and an allowance left unspent (a constructor that threw) must not
   * wait for another socket to the same address (a worker's, later).
   */
  allowSocket(url: string, epoch: number): void {
    this.prune();
    this.sockets.set(keyOf('WEBSOCKET', url), { until: this.now() + socketLifeMs, epoch });
  }

  spendSocket(url: string): Spent | undefined {
    const key = keyOf('WEBSOCKET', url);
    const allowance = this.sockets.get(key);
    this.sockets.delete(key);
    return allowance && allowance.until > this.now() ? { epoch: allowance.epoch } : undefined;
  }

  private prune(): void {
    const now = this.now();
    if (this.issued.size >= maxTokens) {
      for (const [token, entry] of this.issued)
        if (entry.until <= now || this.issued.size >= maxTokens) this.issued.delete(token);
      for (const [key, tokens] of this.byKey) {
        const live = tokens.filter((token) => this.issued.has(token));
        if (live.length > 0) this.byKey.set(key, live);
        else this.byKey.delete(key);
      }
    }
    for (const [key, allowance] of this.sockets) if (allowance.until <= now) this.sockets.delete(key);
    if (this.sockets.size >= 1000) this.sockets.clear();
  }
}

/** One request's identity as both ends see it: its method and its URL without the fragment (never sent). */
function keyOf(method: string, url: string): string {
  let canonical = url;
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    canonical = parsed.href;
  } catch (error) {
    // compared as given
    swallowed('browser', 'requestTags.keyOf: compared as given', error);
  }
  return `${method.toUpperCase()} ${canonical}`;
}
