// One recipe run's browser on a grid (endpointPool.ts says which endpoint): a CDP connection of the run's own to
// its endpoint, a context and a tab in it, all closed when the run ends. A connection per run is what grids expect
// (Browserless starts a browser per connection and counts its concurrency in connections; a load balancer in front
// of Chromium services spreads connections) and it leaves nothing another serve process would need. When the
// browser does not start, the endpoint is taken out and the start moves to another; once the run has its tab it
// stays there: if that browser goes away mid-run the run fails and says why it was not moved (a step may have
// written, and a write must not happen twice). Everything said about an endpoint names its label, never its URL.

import { withDeadline } from '../browser/deadline.ts';
import type { NetworkGuard } from '../browser/networkGuard.ts';
import type { RecipePage } from '../browser/recipePage.ts';
import { type BrowserConfig, BrowserSession } from '../browser/session.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import type { Lease } from './endpointPool.ts';
import { type EndpointSpec, scrubEndpoint } from './endpointSpec.ts';
import type { Refusal } from './runGate.ts';
import type { RecipeResult, RunBrowser } from './runRecipe.ts';

export interface GridSettings {
  /** The network backstop every run's context is watched by, as in tabward's own browser. */
  readonly network?: NetworkGuard;
  /** How long connecting to one endpoint may take before its start counts as failed. */
  readonly connectTimeoutMs: number;
  readonly log: (line: string) => void;
}

export class GridRunBrowser implements RunBrowser {
  readonly mode = 'remote' as const;
  /** What the run's call path reads: the backstop. Each attempt gets a session of its own with its endpoint. */
  readonly config: BrowserConfig;
  private readonly sessions: BrowserSession[] = [];
  private begun: { session: BrowserSession; endpoint: EndpointSpec } | undefined;
  private closed = false;

  constructor(
    private readonly lease: Lease,
    private readonly settings: GridSettings,
  ) {
    this.config = sessionConfig(undefined, settings);
  }

  /** The run's tab, on the lease's endpoint or, when that one's browser will not start, on another. */
  async openRunPage(timeoutMs: number): Promise<RecipePage> {
    const failures: string[] = [];
    let endpoint = this.lease.endpoint;
    for (;;) {
      if (this.closed) throw new TabwardError('timeout', 'The run ended before its browser started.');
      const session = new BrowserSession(sessionConfig(endpoint.url, this.settings));
      this.sessions.push(session);
      try {
        // Connecting, a context and a tab: bounded as a whole, however the endpoint misbehaves.
        const page = await withDeadline(
          session.openRunPage(timeoutMs),
          this.settings.connectTimeoutMs + 2 * timeoutMs,
          `Starting a browser at ${endpoint.label}`,
        );
        this.lease.started();
        this.begun = { session, endpoint };
        return page;
      } catch (error) {
        // Ended by the run's own deadline (the session closed under it): not the endpoint's fault.
        if (this.closed) throw error;
        void closeBounded(session);
        const reason = scrubEndpoint(asTabwardError(error).message, endpoint).replace(/\.$/, '');
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

  /** Closes every connection this run opened (the tab's context goes with it). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.sessions.map(closeBounded));
  }
}

function sessionConfig(wsEndpoint: string | undefined, settings: GridSettings): BrowserConfig {
  return {
    mode: 'remote',
    headless: true,
    chromeArgs: [],
    attach: wsEndpoint ? { wsEndpoint } : {},
    attachTimeoutMs: settings.connectTimeoutMs,
    // "Click Allow in Chrome" is for the user's own Chrome, not a grid.
    notify: () => undefined,
    ...(settings.network ? { network: settings.network } : {}),
  };
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
