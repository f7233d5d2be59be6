// Keeps the HTTP cache on in the browsers tabward drives over its own pipe (pipeTransport.ts: the isolated browser,
// recipe runs and `serve` on it). Playwright turns a page's cache off whenever a route is set on it
// (`Network.setCacheDisabled`), so that every request meets a route handler; the network backstop routes every agent
// page (networkGuard.ts), so every page fetched every script, style and image of its site anew on every visit, where
// a browser (and every other browser MCP server) takes them from its cache: measured, a site page with 72 cached
// assets took 2.4 times as long to navigate and read (bench/results.md, "large-pages").
//
// What the cache changes for the backstop (docs/architecture.md, "The choke point"): a request that reaches the
// browser process is still paused and judged by the hooks before the cache answers it; only what the renderer's own
// memory cache serves (a resource its process still holds) never leaves the renderer, and nothing the cache answers
// reaches the network, so the egress proxy sees exactly what leaves. Both are rewrites of the messages between
// Playwright and the browser, applied on the pipe tabward owns:
// - the command that turns the cache off is sent as one that keeps it on;
// - a memory-cache hit on a routed page is reported to Playwright as it is without a route. Playwright waits for a
//   routed request's pause before it reports the request; a memory-cache hit is never paused, so its first event
//   would be kept by Playwright until the page closes (memory that grows with each hit) and the request never shown
//   (list_network_requests would leave it out). Its response is marked as a service worker's, the one case in
//   which Playwright reports a request that was not paused.

/** A CDP message, as far as these rewrites read it. */
interface Message {
  readonly method?: string;
  readonly sessionId?: string;
  readonly params?: Record<string, unknown>;
}

/** Memory-cache hits told but not answered yet (a page that keeps loading from cache does not grow this past it). */
const maxPendingHits = 1_000;

export class KeptHttpCache {
  private readonly pendingHits = new Set<string>();

  /** A message Playwright sends: the cache stays on. */
  outgoing<T extends object>(message: T): T {
    const { method, params } = message as Message;
    if (method !== 'Network.setCacheDisabled' || params?.cacheDisabled !== true) return message;
    return { ...message, params: { ...params, cacheDisabled: false } };
  }

  /** A message the browser sends: a memory-cache hit's response reported as Playwright reports an unrouted one. */
  incoming(message: object): object {
    const { method, sessionId, params } = message as Message;
    if (method === 'Network.requestServedFromCache') {
      this.pendingHits.add(`${sessionId}/${String(params?.requestId)}`);
      for (const oldest of this.pendingHits) {
        if (this.pendingHits.size <= maxPendingHits) break;
        this.pendingHits.delete(oldest);
      }
      return message;
    }
    if (method !== 'Network.responseReceived' || !params) return message;
    if (!this.pendingHits.delete(`${sessionId}/${String(params.requestId)}`)) return message;
    const response = params.response as Record<string, unknown> | undefined;
    return { ...message, params: { ...params, response: { ...response, fromServiceWorker: true } } };
  }
}
