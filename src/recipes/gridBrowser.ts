// One recipe run's browser on a grid (endpointPool.ts says which endpoint): a connection of the run's own to its
// endpoint, a context and a tab in it, all closed when the run ends. A connection per run is what grids expect
// (Browserless starts a browser per connection and counts its concurrency in connections; a load balancer in front
// of Chromium services spreads connections; a Selenium Grid gives a WebDriver session per run, created here and
// deleted at the end: seleniumGrid.ts) and it leaves nothing another serve process would need. When the browser
// does not start, the endpoint is taken out and the start moves to another; a *busy* endpoint (Browserless's 429, a
// handshake it holds while its own queue waits, a Grid's full session queue) is not taken out: the run waits and
// tries it again, as long as its deadline allows. Once the run has its tab it stays there: if that browser goes
// away mid-run the run fails and says why it was not moved (a step may have written, and a write must not happen
// twice). Everything said about an endpoint names its label, never its URL or a header's value.

import { connect as tcpConnect } from 'node:net';
import { withDeadline } from '../browser/deadline.ts';
import type { NetworkGuard } from '../browser/networkGuard.ts';
import type { RecipePage } from '../browser/recipePage.ts';
import { type BrowserConfig, BrowserSession } from '../browser/session.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import type { Lease } from './endpointPool.ts';
import { type EndpointSpec, scrubEndpoint } from './endpointSpec.ts';
import type { Refusal } from './runGate.ts';
import type { RecipeResult, RunBrowser } from './runRecipe.ts';
import {
  createGridSession,
  deleteGridSession,
  GridBusy,
  type GridSession,
  gridHeaders,
} from './seleniumGrid.ts';

export interface GridSettings {
  /** The network backstop every run's context is watched by, as in tabward's own browser. */
  readonly network?: NetworkGuard;
  /** How long connecting to one endpoint may take before its start counts as failed. */
  readonly connectTimeoutMs: number;
  /** Chromium switches for the browsers a Selenium Grid starts for runs (goog:chromeOptions.args). */
  readonly chromeArgs?: readonly string[];
  readonly log: (line: string) => void;
}

export class GridRunBrowser implements RunBrowser {
  readonly mode = 'remote' as const;
  /** What the run's call path reads: the backstop. Each attempt gets a session of its own with its endpoint. */
  readonly config: BrowserConfig;
  private readonly sessions: BrowserSession[] = [];
  /** Selenium Grid sessions this run created: deleted when it ends. */
  private readonly gridSessions: { endpoint: EndpointSpec; session: GridSession }[] = [];
  private begun: { session: BrowserSession; endpoint: EndpointSpec } | undefined;
  private closed = false;
  /** Aborted when the run ends: a Grid session request or a busy endpoint's wait stops there. */
  private readonly ending = new AbortController();

  constructor(
    private readonly lease: Lease,
    private readonly settings: GridSettings,
  ) {
    this.config = sessionConfig(undefined, settings);
  }

  /**
   * The run's tab, on the lease's endpoint or, when that one's browser will not start, on another. A busy endpoint
   * is tried again after a pause (250 ms, doubling up to 2 s) until the run's deadline ends it (close()).
   */
  async openRunPage(timeoutMs: number): Promise<RecipePage> {
    const failures: string[] = [];
    let endpoint = this.lease.endpoint;
    let busyWait = 250;
    let busySaid = false;
    /** Handshakes held past the connect timeout so far: the first is busy, the next is down (see isBusy). */
    let held = 0;
    for (;;) {
      if (this.closed) throw new TabwardError('timeout', 'The run ended before its browser started.');
      try {
        const { page, session } = await this.startOn(endpoint, timeoutMs);
        this.lease.started();
        this.begun = { session, endpoint };
        return page;
      } catch (error) {
        // Ended by the run's own deadline (the session closed under it): not the endpoint's fault.
        if (this.closed) throw error;
        const reason = scrubEndpoint(asTabwardError(error).message, endpoint).replace(/\.$/, '');
        const busy = await isBusy(error, endpoint);
        if (busy === 'held') held++;
        if (busy === 'answered' || (busy === 'held' && held === 1)) {
          if (!busySaid)
            this.settings.log(
              `tabward: browser endpoint ${endpoint.label} is busy (${reason}); the run waits for it within its deadline.`,
            );
          busySaid = true;
          await pause(busyWait, this.ending.signal);
          busyWait = Math.min(busyWait * 2, 2_000);
          continue;
        }
        failures.push(`${endpoint.label}: ${reason}`);
        this.settings.log(
          `tabward: browser endpoint ${endpoint.label} did not start a run (${reason}); it is taken out for a while.`,
        );
        const next = await this.lease.failover(reason);
        if (typeof next === 'string') throw noStart(next, failures);
        endpoint = next;
      }
    }
  }

  /** A browser, a context and a tab at one endpoint; whatever was opened for a start that failed is closed. */
  private async startOn(
    endpoint: EndpointSpec,
    timeoutMs: number,
  ): Promise<{ page: RecipePage; session: BrowserSession }> {
    let grid: { endpoint: EndpointSpec; session: GridSession } | undefined;
    if (endpoint.kind === 'selenium') {
      // Waits in the Grid's session queue for as long as the run may: its deadline aborts the request.
      grid = {
        endpoint,
        session: await createGridSession(endpoint, this.settings.chromeArgs ?? [], this.ending.signal),
      };
      this.gridSessions.push(grid);
      // The run ended as the Grid answered: close() may have deleted the sessions it knew before this one.
      if (this.closed) {
        await this.deleteGridSession(grid);
        throw new TabwardError('timeout', 'The run ended before its browser started.');
      }
    }
    const session = new BrowserSession(sessionConfig(endpoint, this.settings, grid?.session.cdp));
    this.sessions.push(session);
    try {
      // Connecting, a context and a tab: bounded as a whole, however the endpoint misbehaves.
      const page = await withDeadline(
        session.openRunPage(timeoutMs),
        this.settings.connectTimeoutMs + 2 * timeoutMs,
        `Starting a browser at ${endpoint.label}`,
      );
      return { page, session };
    } catch (error) {
      void closeBounded(session);
      if (grid) void this.deleteGridSession(grid);
      throw error;
    }
  }

  /**
   * The result naming the endpoint that ran it. A run that failed because its browser or tab went away after it
   * began says why it was not moved to another endpoint.
   */
  finish(result: RecipeResult): RecipeResult {
    if (!this.begun) return result;
    const endpoint = this.begun.endpoint.label;
    const { error } = result;
    const gone = !this.begun.session.status().started;
    if (result.ok || !error || !(gone || error.code === 'page_closed' || error.code === 'page_crashed'))
      return { ...result, endpoint };
    if (gone) this.lease.lost(error.message);
    const what = gone ? `The browser at ${endpoint} went away` : "The run's tab went away";
    const stayed = ` ${what} after the run began; it was not moved to another endpoint, since a step that ran may have written (a write must not happen twice). Retry it only if that is safe.`;
    return { ...result, endpoint, error: { ...error, message: `${error.message}${stayed}` } };
  }

  /** Closes every connection this run opened (the tab's context goes with it), and deletes its Grid sessions. */
  async close(): Promise<void> {
    this.closed = true;
    this.ending.abort();
    await Promise.all(this.sessions.map(closeBounded));
    await Promise.all([...this.gridSessions].map((grid) => this.deleteGridSession(grid)));
  }

  private async deleteGridSession(grid: { endpoint: EndpointSpec; session: GridSession }): Promise<void> {
    const at = this.gridSessions.indexOf(grid);
    if (at < 0) return;
    this.gridSessions.splice(at, 1);
    if (!(await deleteGridSession(grid.endpoint, grid.session.id)))
      this.settings.log(
        `tabward: the Selenium Grid at ${grid.endpoint.label} did not confirm deleting session ${grid.session.id}; the Grid ends it after its --session-timeout.`,
      );
  }
}

function sessionConfig(
  endpoint: EndpointSpec | undefined,
  settings: GridSettings,
  /** A Grid session's se:cdp URL, which stands in for the endpoint's own. */
  cdp?: string,
): BrowserConfig {
  const wsEndpoint = cdp ?? endpoint?.url;
  const given = endpoint?.kind === 'selenium' ? gridHeaders(endpoint) : endpoint?.headers;
  const headers = given && Object.keys(given).length > 0 ? { headers: given } : {};
  return {
    mode: 'remote',
    headless: true,
    chromeArgs: [],
    attach: wsEndpoint
      ? { wsEndpoint, protocol: endpoint?.kind === 'playwright' ? 'playwright' : 'cdp', ...headers }
      : {},
    attachTimeoutMs: settings.connectTimeoutMs,
    // "Click Allow in Chrome" is for the user's own Chrome, not a grid.
    notify: () => undefined,
    ...(settings.network ? { network: settings.network } : {}),
  };
}

/**
 * Whether a start failed because the endpoint is busy rather than down: it said so (a 429 answer to the WebSocket
 * handshake, Browserless past its CONCURRENT and QUEUED; a Grid with no free slot), or it held the handshake past
 * the connect timeout while its host still takes connections ('held': a service queueing it, or a load balancer
 * whose browsers are gone, which is why only the first one in a run counts as busy). A 503 is down: it is what a
 * load balancer with no browser behind it answers. Down is everything else: refused, reset, no server, a browser
 * that would not start.
 */
async function isBusy(error: unknown, endpoint: EndpointSpec): Promise<'answered' | 'held' | false> {
  if (error instanceof GridBusy) return 'answered';
  const message = error instanceof Error ? error.message : String(error);
  if (/WebSocket error: \S+ 429\b/.test(message)) return 'answered';
  if (!/Timeout \d+ms exceeded/.test(message)) return false;
  return (await acceptsConnections(endpoint.url)) ? 'held' : false;
}

/** A TCP connection to the endpoint's host opens within a second. */
function acceptsConnections(url: string): Promise<boolean> {
  let host: string;
  let port: number;
  try {
    const parsed = new URL(url);
    host = parsed.hostname.replace(/^\[|\]$/g, '');
    const secure = parsed.protocol === 'wss:' || parsed.protocol === 'https:';
    port = parsed.port ? Number(parsed.port) : secure ? 443 : 80;
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port, timeout: 1_000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/** Waits `ms`, or less when the run ends. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A hung endpoint must not hold the run's end: closing is given a few seconds. */
async function closeBounded(session: BrowserSession): Promise<void> {
  await withDeadline(session.close(), 5_000, 'Closing the connection to a browser endpoint').catch(
    () => undefined,
  );
}

function noStart(refusal: Refusal, failures: readonly string[]): TabwardError {
  const tried = failures.join('; ');
  if (refusal === 'closed')
    return new TabwardError('timeout', `The run ended before a browser started for it (tried ${tried}).`);
  const why =
    refusal === 'down'
      ? 'and every other endpoint is down or was tried'
      : 'and no other endpoint had a free slot within --queue-wait';
  return new TabwardError(
    'browser_unavailable',
    `No browser endpoint could start this run: ${tried}; ${why}.`,
    'The run had not begun, so retrying it is safe; GET /health shows each endpoint.',
  );
}
