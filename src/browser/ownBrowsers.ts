// The isolated browsers one browser session launches (browser/session.ts): starting one (or, when several clients
// share one browser, a context of this client's in it), the ones launched whose connection is not installed yet,
// and closing them however the session ends (a start in flight, an unused warm browser, a crashed one's leftovers).

import { swallow } from '../core/debug.ts';
import {
  type BrowserConfig,
  type Connection,
  type IsolatedHooks,
  LaunchedClosings,
  openIsolated,
} from './browserConnections.ts';
import type { IsolatedBrowser } from './launchIsolated.ts';

export class OwnBrowsers {
  /** Browsers launched whose connection is not installed yet. */
  private readonly launching = new Set<IsolatedBrowser>();
  /** Launched browsers still closing: close() of the session waits for them. */
  private readonly closings = new LaunchedClosings();
  /** Said once per session: a proxy the user set keeps the WebSocket gate off. */
  private proxyNoticeGiven = false;

  /** `launch`: what judges the browser's own profile and the key its proxies share (sharedIsolatedBrowser.ts). */
  constructor(
    private readonly config: BrowserConfig,
    private readonly signal: AbortSignal,
    private readonly launch: Pick<IsolatedHooks, 'egressPolicy' | 'certificates'> = {},
  ) {}

  /** An isolated browser of the session's own, or a context of its own in the browser clients share. */
  open(): Promise<Connection> {
    const { sharedBrowser, network } = this.config;
    if (sharedBrowser && network) return sharedBrowser.openContext(network);
    return openIsolated(this.config, {
      signal: this.signal,
      firstProxyNotice: () => {
        if (this.proxyNoticeGiven) return false;
        this.proxyNoticeGiven = true;
        return true;
      },
      onLaunched: (launched) => this.launching.add(launched),
      ...this.launch,
    });
  }

  /** The connection is installed (or given up): its browser is no longer one still starting. */
  installed(connection: Connection): void {
    if (connection.launched) this.launching.delete(connection.launched);
  }

  /** A browser launched and not installed yet, for browser_status while it starts. */
  starting(): IsolatedBrowser | undefined {
    return [...this.launching][0];
  }

  /** Closes a browser launched (its process group and profile too); never fails. */
  close(launched: IsolatedBrowser): Promise<void> {
    return this.closings.close(launched);
  }

  /**
   * A connection never installed, which nothing else would close, goes now: a browser launched (not at exit), a
   * context in the browser clients share (never their browser), a connection to a browser tabward did not start.
   */
  async discard(connection: Connection): Promise<void> {
    if (connection.launched) await this.close(connection.launched);
    else if (connection.release) await connection.release();
    else
      await connection.browser
        .close()
        .catch(swallow('browser', 'ownBrowsers.discard: a connection never installed'));
  }

  /** Shutting down: every browser still starting is closed (not awaited here; see settled). */
  closeStarting(): void {
    for (const launched of this.launching) void this.closings.close(launched);
  }

  /** Once every close begun so far has ended. */
  settled(): Promise<void> {
    return this.closings.settled();
  }
}
