// One isolated browser process for several MCP clients, each in a browser context of its own (docs/architecture.md
// "Several clients"): its own cookies, storage and tabs, and its own egress proxy, judged by that client's own network
// guard. Chromium gives a context made with a proxy its own network stack, so everything the context sends goes to
// that proxy: its pages, workers, beacons of a tab being closed, what the browser process fetches for it (favicons,
// measured on Chromium 156). The choke point therefore knows whose request it holds without asking any hook. The
// browser's own profile serves no client: what it sends (the browser's own background requests) reaches a proxy
// that refuses everything, so nothing leaves unjudged and no client's taint is spent on the browser's traffic.

import type { BrowserContext, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import {
  type BrowserConfig,
  type Connection,
  type ContextSource,
  shuttingDown,
  startGuardedEgress,
} from './browserConnections.ts';
import { withDeadline } from './deadline.ts';
import type { EgressPolicy } from './egressProxy.ts';
import { makeHostCertificates } from './hostCertificates.ts';
import type { IsolatedBrowser } from './launchIsolated.ts';
import type { NetworkGuard } from './networkGuard.ts';
import { pagesWithDialogs, retiredPages } from './orphanDialogs.ts';
import { OwnBrowsers } from './ownBrowsers.ts';

/** Swallows an error on purpose, telling the debug channel (core/debug.ts) where and why. */
const swallowing = (why: string) => swallow('browser', `sharedIsolatedBrowser.${why}`);

/** The browser's own profile is no client's: nothing it sends is let out. */
const noClientsTraffic: EgressPolicy = {
  egressVerdict: async () =>
    "sent from the shared browser's own profile, which serves no client: only clients' contexts may send",
  socketMessageVerdict: () => 'sent from no client context',
  egressSent: () => undefined,
  socketStopped: () => undefined,
};

export class SharedIsolatedBrowser implements ContextSource {
  /** One key for every proxy of this browser: the browser trusts it by a switch given at launch. */
  private readonly certificates = makeHostCertificates();
  private current: Connection | undefined;
  private starting: Promise<Connection> | undefined;
  private readonly contexts = new Set<BrowserContext>();
  private readonly stopping = new AbortController();
  /** Launching the browser (once, or again after it crashed) and closing it however it ends. */
  private readonly own: OwnBrowsers;

  /** `config.network` protects tabward's own ports; it judges none of the clients' traffic. */
  constructor(private readonly config: BrowserConfig & { readonly network: NetworkGuard }) {
    this.own = new OwnBrowsers(config, this.stopping.signal, {
      egressPolicy: noClientsTraffic,
      certificates: this.certificates,
    });
  }

  /** How many clients have a context in the browser now. */
  get clients(): number {
    return this.contexts.size;
  }

  /** Starts the browser before a client needs it (a client listed its tools); no context is opened. */
  warmUp(): void {
    if (this.current || this.starting || this.stopping.signal.aborted) return;
    void this.browser().catch(swallowing('warmUp: the start failed; the first client call says why'));
  }

  /**
   * A context of the client's own, behind an egress proxy judged by `network` (the client's guard). Closing the
   * connection (its `release`) closes the context, then its proxy, and leaves the browser to the others.
   */
  async openContext(network: NetworkGuard): Promise<Connection> {
    const shared = await this.browser();
    const launched = shared.launched as IsolatedBrowser;
    const egress = await startGuardedEgress(this.config, network, this.certificates);
    let context: BrowserContext;
    try {
      context = await withDeadline(
        // viewport null: pages get the window's size, as in the browser's own profile. `<-loopback>` given here, not
        // left to Playwright: it adds it only when PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK is unset, and
        // with it set a page's socket to a loopback server went direct, unjudged (an attack review).
        shared.browser.newContext({
          proxy: { server: `http://127.0.0.1:${egress.port}`, bypass: '<-loopback>' },
          viewport: null,
        }),
        30_000,
        'Opening a browser context',
      );
    } catch (error) {
      egress.close();
      throw error;
    }
    this.contexts.add(context);
    network.behindEgressProxy(context);
    // The proxy outlives the context's last request: closed once the context (or the whole browser) is gone.
    const gone = () => {
      this.contexts.delete(context);
      egress.close();
    };
    context.once('close', gone);
    let released: Promise<void> | undefined;
    const release = () => {
      released ??= context.pages().some(unclosable)
        ? leaveRetired(context).finally(() => this.contexts.delete(context))
        : withDeadline(context.close(), 10_000, 'Closing a client context')
            .catch(swallowing('release: context.close()'))
            .finally(gone);
      return released;
    };
    return {
      mode: 'isolated',
      browser: shared.browser,
      context,
      endpoint: 'a pipe (a browser context of its own)',
      release,
      sharedBy: { pid: launched.pid, profile: launched.userDataDir, clients: () => this.contexts.size },
    };
  }

  /** The browser, started once; started again after it closed or crashed. */
  private async browser(): Promise<Connection> {
    if (this.stopping.signal.aborted) throw shuttingDown();
    if (this.current?.browser.isConnected()) return this.current;
    this.starting ??= this.launch().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async launch(): Promise<Connection> {
    const connection = await this.own.open();
    this.own.installed(connection);
    const started = connection.launched as IsolatedBrowser;
    connection.browser.on('disconnected', () => {
      if (this.current === connection) this.current = undefined;
      // What is left of it (helper processes, its profile) goes with it.
      void this.own.close(started);
    });
    if (this.stopping.signal.aborted) {
      await this.own.close(started);
      throw shuttingDown();
    }
    // The blank tab of the browser's own profile would only hold memory: no client uses that profile. A headed
    // browser keeps its first window (Chromium quits with its last one).
    if (this.config.headless && started.firstTab)
      await withDeadline(started.firstTab.close(), 5_000, 'Closing a tab').catch(
        swallowing('launch: closing the first tab'),
      );
    this.current = connection;
    return connection;
  }

  /** Closes the browser (the clients' sessions closed their contexts first), a start in flight included. */
  async close(): Promise<void> {
    this.stopping.abort();
    this.own.closeStarting();
    await this.starting?.catch(swallowing('close: a start in flight failed'));
    const launched = this.current?.launched;
    this.current = undefined;
    if (launched) await this.own.close(launched);
    await this.own.settled();
  }

  /** The browser's process and profile, for a shutdown that must kill it when closing takes too long. */
  status(): { pid?: number; profile?: string } {
    const launched = this.current?.launched;
    return launched ? { pid: launched.pid, profile: launched.userDataDir } : {};
  }
}

/** A tab retired, or with a dialog open (its frame may go any moment): closing it may crash the browser. */
const unclosable = (page: Page) => retiredPages.has(page) || pagesWithDialogs.has(page);

/**
 * A leaving client's context that holds a retired tab (or one with a dialog open) (browser/pages.ts): closing it would close that tab and crash
 * the browser every other client uses. Its other tabs are closed; the context stays, its retired tab frozen, and its
 * proxy with it (still judged by the client's guard), until the browser closes.
 */
async function leaveRetired(context: BrowserContext): Promise<void> {
  await Promise.all(
    context
      .pages()
      .filter((page) => !unclosable(page))
      .map((page) =>
        withDeadline(page.close(), 10_000, 'Closing a tab of a client that left').catch(
          swallowing('leaveRetired: page.close()'),
        ),
      ),
  );
}
