// What ties the CDP hooks to the choke point (docs/architecture.md, "The choke point"). A hook that judged a request
// with everything only it knows (its tab, its frame, the action running, the human answering) and let it go puts a
// random single-use token on it (the x-tabward-request header); the egress proxy spends the token and sends the
// request on. A request that arrives with no live token for its own method and URL was judged by no hook (a frame
// tearing down after its session ended, a fetchLater, the browser process's own fetches): the proxy judges it alone,
// with nothing to tie it to an action, and nothing can let it through that needs a human's word.

import { randomBytes } from 'node:crypto';

/** How long a token waits for its request to reach the proxy (a request paused longer is judged again). */
const tokenLifeMs = 120_000;
const maxTokens = 10_000;

interface Issued {
  readonly key: string;
  readonly until: number;
}

export class RequestTags {
  private readonly issued = new Map<string, Issued>();
  /** WebSockets a page's route let through (Playwright's socket route can set no header): method-less keys. */
  private readonly sockets = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A token for one request a hook let go. */
  issue(method: string, url: string): string {
    this.prune();
    const token = randomBytes(16).toString('hex');
    this.issued.set(token, { key: keyOf(method, url), until: this.now() + tokenLifeMs });
    return token;
  }

  /** A hook's second look at a request another hook already judged (the route, then the tab's CDP session). */
  judged(token: string | undefined, method: string, url: string): boolean {
    if (!token) return false;
    const entry = this.issued.get(token);
    return entry !== undefined && entry.until > this.now() && entry.key === keyOf(method, url);
  }

  /** The proxy's: true once for a live token of exactly this request, which is spent. */
  spend(token: string | undefined, method: string, url: string): boolean {
    if (!this.judged(token, method, url) || !token) return false;
    this.issued.delete(token);
    return true;
  }

  /** A WebSocket the page's route let through, to be let through once by the proxy. */
  allowSocket(url: string): void {
    this.prune();
    const key = keyOf('WEBSOCKET', url);
    this.sockets.set(key, this.now() + tokenLifeMs);
  }

  spendSocket(url: string): boolean {
    const key = keyOf('WEBSOCKET', url);
    const until = this.sockets.get(key);
    this.sockets.delete(key);
    return until !== undefined && until > this.now();
  }

  private prune(): void {
    const now = this.now();
    if (this.issued.size >= maxTokens)
      for (const [token, entry] of this.issued)
        if (entry.until <= now || this.issued.size >= maxTokens) this.issued.delete(token);
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
  } catch {
    // compared as given
  }
  return `${method.toUpperCase()} ${canonical}`;
}
