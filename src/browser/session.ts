// The browser session: which browser the agent drives (isolated, the user's shared Chrome, or a remote
// service), started on first need (or warmed up early, see warmUp) and switched in-process without the tool list
// changing. Detaching from the user's Chrome never closes it or the user's tabs (the agent's tabs close with the
// connection, see closeCurrent). A browser tabward launched is removed
// with its profile however it ends (closed, crashed, killed, or shut down while still starting), and a mode the
// agent did not choose (the user's Chrome gone, a fallback to isolated) is told to the agent with its next result.

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import type { BrowserMode } from '../core/kinds.ts';
import { type AttachTarget, connectCdp, connectPlaywright, resolveEndpoint } from './connect.ts';
import { translateBrowserError, withDeadline } from './deadline.ts';
import { DevtoolsRecorder } from './devtoolsLog.ts';
import { DownloadKeeper, type DownloadLimits } from './downloads.ts';
import { startEgressProxy } from './egressProxy.ts';
import { findChrome } from './findChrome.ts';
import { makeHostCertificates } from './hostCertificates.ts';
import { type IsolatedBrowser, launchIsolated } from './launchIsolated.ts';
import type { NetworkGuard } from './networkGuard.ts';
import { PageRegistry, type TrackedPage } from './pages.ts';
import { configuredProxy, hostMapperFrom, verifiesCertificates } from './proxySettings.ts';
import { RecipePage } from './recipePage.ts';

/** How long a browser started early (warmUp) may wait for its first call before it closes again. */
const unusedWarmBrowserMs = 5 * 60_000;

export interface BrowserConfig {
  readonly mode: BrowserMode;
  readonly executablePath?: string;
  readonly headless: boolean;
  readonly chromeArgs: readonly string[];
  readonly attach: AttachTarget;
  readonly attachTimeoutMs: number;
  readonly notify: (message: string) => void;
  /** The network backstop over the agent's pages; without it requests are not policed (recipes, tests). */
  readonly network?: NetworkGuard;
  /** Record what each tab logs and requests, for the devtools tools. */
  readonly devtools?: boolean;
  /** Keep what the agent's actions download (browser/downloads.ts); without it downloads are not kept. */
  readonly downloads?: DownloadLimits;
  /**
   * Off only to measure what the choke point costs (bench/chokePointOverhead.ts): with a network backstop, the
   * browsers tabward starts always send through the egress proxy. No command-line option reaches it.
   */
  readonly egressProxy?: false;
}

interface Connection {
  readonly mode: BrowserMode;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly endpoint: string;
  readonly launched?: IsolatedBrowser;
}

export interface SessionStatus {
  readonly mode: BrowserMode;
  readonly started: boolean;
  readonly browserVersion?: string;
  readonly endpoint?: string;
  readonly profile?: string;
  /** The process of a browser tabward launched. */
  readonly pid?: number;
  readonly tabs: { id: string; url: string; owner: 'agent' | 'user'; selected: boolean }[];
  readonly lastAttachError?: string;
}

export class BrowserSession {
  readonly pages = new PageRegistry();
  private current: Connection | undefined;
  private starting: Promise<Connection> | undefined;
  private wantedMode: BrowserMode;
  /** Why the last attempt to use the user's Chrome failed, for browser_status. */
  lastAttachError: string | undefined;
  private readonly modeListeners: ((mode: BrowserMode) => void)[] = [];
  /** Aborted by close(): a browser start in flight stops, and no new one begins. */
  private readonly stopping = new AbortController();
  /** Browsers launched whose connection is not installed yet. */
  private readonly launching = new Set<IsolatedBrowser>();
  /** What changed under the agent since it was last told (see takeNotices). */
  private notices: string[] = [];
  /** Said once per session: a proxy the user set keeps the WebSocket gate off. */
  private proxyNoticeGiven = false;
  /** What each tab logged and requested (devtools tools on), else undefined. */
  readonly devtools: DevtoolsRecorder | undefined;
  /** What the agent's actions downloaded, when this session keeps downloads. */
  readonly downloads: DownloadKeeper | undefined;
  /** Something other than warmUp asked for the browser. */
  private used = false;
  /** The first tab warmUp is opening: a call that comes meanwhile waits for it rather than opening a second. */
  private warmTab: Promise<unknown> | undefined;
  /** The tab warmUp opened, until a call takes it (new_page uses it rather than leaving a blank tab beside). */
  private spareTab: TrackedPage | undefined;
  /** A switch of browser in progress (attachShared, detach): a call meanwhile waits for it, see replaceCurrent. */
  private replacing: Promise<void> | undefined;
  /** Launched browsers still closing (the unused warm one, a crashed one's leftovers): close() waits for them. */
  private readonly closings = new Set<Promise<void>>();

  constructor(readonly config: BrowserConfig) {
    this.wantedMode = config.mode;
    const { network } = config;
    if (config.devtools) this.devtools = new DevtoolsRecorder();
    this.downloads = config.downloads ? new DownloadKeeper(config.downloads) : undefined;
    const { devtools, downloads } = this;
    this.pages.onTrack = (tracked) => {
      network?.label(tracked.page, tracked.id);
      // From the moment a tab is tracked: a user's tab as tabward attaches, a new tab before it navigates.
      devtools?.attach(tracked);
      downloads?.watch(tracked);
      // A secret typed into a tab grows the session's taint: requests to other hosts are judged from then on.
      if (network) tracked.onSecretTyped = () => network.taintGrew();
    };
    // Where downloads are taken at their response (no egress proxy: the user's Chrome), they are kept here too.
    if (network && downloads)
      network.responseDownloads = (page) => {
        const tracked = this.pages.list().find((each) => each.page === page);
        return tracked ? (download) => downloads.takeBody(tracked, download) : undefined;
      };
    // While a tab holds a secret tabward typed, the choke point judges every request as after a sensitive read.
    if (network)
      network.secretHolders = () =>
        this.pages
          .list()
          .filter((tracked) => tracked.holdsTypedSecret)
          .flatMap((tracked) => originsOf(tracked.page.url()));
  }

  get mode(): BrowserMode {
    return this.current?.mode ?? this.wantedMode;
  }

  onModeChange(listener: (mode: BrowserMode) => void): void {
    this.modeListeners.push(listener);
  }

  /** The live connection, started on first need. Concurrent callers share one start. */
  async ensure(): Promise<Connection> {
    this.used = true;
    return this.connect();
  }

  /**
   * Starts an isolated headless browser and its first tab before the agent needs them (the client has its tool
   * list; the model is thinking): the first page read then waits for neither (about half a second here). Nothing
   * else warms up: a window would appear on the user's screen, the user's Chrome would ask to allow the
   * connection, a browser service would hold a slot. A browser warmed up and still unused after `idleMs` closes
   * again (it holds memory in every agent session that never browses); the next call starts one as before.
   * Says whether it started one.
   */
  warmUp(idleMs = unusedWarmBrowserMs): boolean {
    if (this.used || this.current || this.starting || this.wantedMode !== 'isolated' || !this.config.headless)
      return false;
    const opening = this.connect().then(async (connection) => {
      // A call that came meanwhile waits for this tab (target, newPage) rather than opening its own. Only in this
      // browser: one the agent switched to meanwhile (the user's Chrome) gets no tab of tabward's choosing.
      if (this.current !== connection) return connection;
      if (this.pages.list().length === 0) {
        const tab = await this.openTab(connection);
        if (this.current === connection) this.spareTab = tab;
      }
      // Runs Playwright's script once in the blank tab: its code, in tabward and in the tab's renderer, is
      // compiled before the first page's first action needs it.
      this.spareTab?.prepareActions();
      return connection;
    });
    this.warmTab = opening
      .then(
        (connection) => {
          setTimeout(() => {
            if (!this.used && this.current === connection) void this.closeCurrent();
          }, idleMs).unref();
        },
        // A browser that cannot start now fails the call that needs it, with its own error.
        () => undefined,
      )
      .finally(() => {
        this.warmTab = undefined;
      });
    return true;
  }

  private async connect(): Promise<Connection> {
    // A call during a switch uses the browser switched to, and starts none that would land over it.
    while (this.replacing) await this.replacing;
    if (this.stopping.signal.aborted) throw shuttingDown();
    if (this.current?.browser.isConnected()) return this.current;
    if (this.current) this.lost(this.current);
    this.starting ??= this.open(this.wantedMode).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Switches to the user's Chrome. On failure the current session stays as it was. */
  async attachShared(target: AttachTarget = this.config.attach): Promise<void> {
    this.used = true;
    let next: Connection;
    try {
      next = await this.openShared(target);
    } catch (error) {
      this.lastAttachError = error instanceof TabwardError ? error.describe() : String(error);
      throw error;
    }
    this.lastAttachError = undefined;
    await this.replaceCurrent(() => this.install(next)).catch(async (error: unknown) => {
      // Shut down meanwhile: the connection to the user's Chrome is not left open behind.
      if (this.current !== next) await next.browser.close().catch(() => undefined);
      throw error;
    });
  }

  /** Leaves the user's Chrome (or remote browser) untouched and returns to an isolated browser, lazily. */
  async detach(): Promise<void> {
    this.used = true;
    await this.replaceCurrent(async () => {
      this.wantedMode = 'isolated';
      this.emitMode('isolated');
    });
  }

  /**
   * Closes the browser in use, then `next` puts another in its place. A start in flight (the warm-up's, another
   * call's) lands first and is closed too: installed after the switch, it would take the agent back to the
   * browser it left while the user's Chrome stayed attached behind, its new tabs tracked in a mode that does not
   * protect them. Switches run one after another; a call meanwhile waits for them (connect).
   */
  private replaceCurrent(next: () => Promise<void>): Promise<void> {
    const previous = this.replacing;
    const replacing = (async () => {
      await previous;
      await this.starting?.catch(() => undefined);
      await this.closeCurrent();
      if (this.stopping.signal.aborted) throw shuttingDown();
      await next();
    })();
    const gate = replacing
      .catch(() => undefined)
      .finally(() => {
        if (this.replacing === gate) this.replacing = undefined;
      });
    this.replacing = gate;
    return replacing;
  }

  /** Closes the browser, a start in flight included: that one is stopped and awaited, never left running. */
  async close(): Promise<void> {
    this.stopping.abort();
    for (const launched of this.launching) void this.closeLaunched(launched);
    await this.starting?.catch(() => undefined);
    await this.replacing;
    await this.closeCurrent();
    // tabward exits once this resolves: a close begun earlier must not leave a browser or its profile behind.
    await Promise.all([...this.closings]);
  }

  /** What changed under the agent since it was last told: the user's Chrome gone, a fallback, a restart. */
  takeNotices(): string[] {
    const taken = this.notices;
    this.notices = [];
    return taken;
  }

  async newPage(): Promise<TrackedPage> {
    this.used = true;
    // Started first: a browser started now comes with its blank tab, which is the one to hand out.
    await this.connect();
    const spare = await this.takeSpareTab();
    if (spare) {
      this.config.network?.treatAsNew(spare.page);
      this.pages.selected = spare;
      return spare;
    }
    return this.openTab();
  }

  /** The tab warmUp opened (once it has), if it is still blank, open and alive; once only. */
  private async takeSpareTab(): Promise<TrackedPage | undefined> {
    await this.warmTab;
    // A switch in progress (browser_connect) closes the warm browser, its tab with it: not one to hand out.
    while (this.replacing) await this.replacing;
    const spare = this.spareTab;
    this.spareTab = undefined;
    if (!spare || spare.closed) return undefined;
    // Its renderer gone while it waited (killed for memory, say): the first call would get a tab that cannot
    // load. Nobody used it, so it goes, and the call gets a tab of its own.
    if (spare.crashed) {
      await withDeadline(spare.page.close(), 5_000, 'Closing a crashed tab').catch(() => undefined);
      return undefined;
    }
    return !spare.retired && spare.page.url() === 'about:blank' ? spare : undefined;
  }

  /** A new agent tab; in `only` (the warm-up's browser) or not at all, else in the browser in use. */
  private async openTab(only?: Connection): Promise<TrackedPage> {
    for (let attempt = 0; ; attempt++) {
      const connection = only ?? (await this.connect());
      try {
        const page = await withDeadline(connection.context.newPage(), 30_000, 'Opening a tab');
        // In the user's Chrome only the agent's own tabs are policed; elsewhere the whole context is.
        const { network } = this.config;
        if (network) {
          const guarding = connection.mode === 'shared' ? network.watchPage(page) : network.ready(page);
          await withDeadline(guarding, 30_000, 'Guarding the tab');
        }
        // Switched away from meanwhile (browser_connect, shutdown): the tab belongs to a browser that is closing.
        if (this.current !== connection)
          throw new TabwardError('page_closed', 'Opening a tab failed: the browser was replaced meanwhile.');
        const tracked = this.pages.track(page, true);
        tracked.ownedByAgent = true;
        this.pages.selected = tracked;
        return tracked;
      } catch (error) {
        const failure = translateBrowserError(error, 'Opening a tab');
        // The browser died under us (its disconnect may not have been reported yet): start afresh, once. Only the
        // browser this tab was to open in: one switched to meanwhile is left alone, and used by the retry.
        if (only || attempt > 0 || failure.code !== 'page_closed') throw failure;
        if (this.current === connection) await this.closeCurrent();
      }
    }
  }

  /** A tab for one recipe run: in a context of its own, except in the user's Chrome, where logins live. */
  async openRunPage(timeoutMs: number): Promise<RecipePage> {
    const connection = await this.ensure();
    const { network } = this.config;
    // Runs open contexts of their own: the blank tab the browser started with would only hold memory.
    const spare = await this.takeSpareTab();
    if (spare) await withDeadline(spare.page.close(), 5_000, 'Closing a tab').catch(() => undefined);
    if (connection.mode === 'shared') {
      const page = await RecipePage.open(connection.context, false, timeoutMs);
      if (network) await withDeadline(page.guardedBy(network), timeoutMs, 'Guarding the tab');
      return page;
    }
    const context = await withDeadline(
      connection.browser.newContext(),
      timeoutMs,
      'Opening a browser context',
    );
    if (network) await withDeadline(network.watchContext(context), timeoutMs, 'Guarding the browser');
    const page = await RecipePage.open(context, true, timeoutMs);
    // Until the backstop watches the new tab, its first navigation is held like a popup's (an empty 200 page, then
    // the real load behind the recipe's back): the start's HTTP status and connection errors would be lost.
    if (network) await withDeadline(page.readyFor(network), timeoutMs, 'Guarding the tab');
    return page;
  }

  /** The tab a call acts on: the one named, else the selected one, else a new agent tab. */
  async target(pageId?: string): Promise<TrackedPage> {
    await this.ensure();
    // Any call that reaches a tab ends the warm tab's time as new_page's spare.
    await this.takeSpareTab();
    if (pageId) return this.pages.get(pageId);
    const selected = this.pages.selected;
    if (selected && !selected.closed) return selected;
    const owned = this.pages.list().find((tracked) => tracked.ownedByAgent);
    if (owned) {
      this.pages.selected = owned;
      return owned;
    }
    return this.newPage();
  }

  status(): SessionStatus {
    const connection = this.current;
    const launched = connection?.launched ?? [...this.launching][0];
    return {
      mode: this.mode,
      started: connection !== undefined,
      ...(connection ? { browserVersion: connection.browser.version(), endpoint: connection.endpoint } : {}),
      ...(launched ? { profile: launched.userDataDir, pid: launched.pid } : {}),
      ...(this.lastAttachError ? { lastAttachError: this.lastAttachError } : {}),
      tabs: this.pages.list().map((tracked) => ({
        id: tracked.id,
        url: tracked.page.url(),
        owner: tracked.ownedByAgent ? 'agent' : 'user',
        selected: tracked === this.pages.selected,
      })),
    };
  }

  private async open(mode: BrowserMode): Promise<Connection> {
    const connection =
      mode === 'shared'
        ? await this.openSharedOrIsolated()
        : mode === 'remote'
          ? await this.openRemote()
          : await this.openIsolated();
    try {
      await this.install(connection);
    } catch (error) {
      // Never installed, so nothing else would close it: a browser tabward launched goes now, not at exit.
      if (connection.launched) await this.closeLaunched(connection.launched);
      else await connection.browser.close().catch(() => undefined);
      throw error;
    } finally {
      if (connection.launched) this.launching.delete(connection.launched);
    }
    // Shut down while starting: close() closes what was installed once this start has settled.
    if (this.stopping.signal.aborted) throw shuttingDown();
    return connection;
  }

  /** Started in shared mode but the user's Chrome is not reachable: say how to fix it, and work isolated. */
  private async openSharedOrIsolated(): Promise<Connection> {
    try {
      return await this.openShared(this.config.attach);
    } catch (error) {
      this.lastAttachError = error instanceof TabwardError ? error.describe() : String(error);
      this.config.notify(`tabward: could not use your Chrome, continuing isolated. ${this.lastAttachError}`);
      this.notices.push(
        `Mode changed: your Chrome could not be reached, so this now runs in an isolated browser (no logins, none of the user's tabs). ${this.lastAttachError}`,
      );
      return this.openIsolated();
    }
  }

  private async openIsolated(): Promise<Connection> {
    const { network } = this.config;
    // Before the gate starts: a browser that cannot be found must not leave its server holding the process open.
    const executablePath = findChrome(this.config.executablePath);
    // Everything the browser sends goes through the choke point, where the backstop judges it
    // (browser/egressProxy.ts); a proxy of the user's would take its place, so it is refused, not guessed at.
    const proxy = configuredProxy(this.config.chromeArgs, {});
    if (network && proxy)
      throw new TabwardError(
        'bad_input',
        `The browser switch ${proxy} would send the browser's traffic past tabward's egress proxy, where every request is judged.`,
        'Drop the --chrome-arg proxy switch; tabward starts its browser with its own proxy.',
      );
    const direct = configuredProxy([], process.env);
    if (network && direct && !this.proxyNoticeGiven) {
      this.proxyNoticeGiven = true;
      this.config.notify(
        `tabward: ${direct} is set, but the browser's traffic goes through tabward's egress proxy, which connects directly.`,
      );
    }
    const egress =
      network && this.config.egressProxy !== false
        ? await startEgressProxy({
            policy: network,
            certificates: makeHostCertificates(),
            mapHost: hostMapperFrom(this.config.chromeArgs),
            verifyUpstream: verifiesCertificates(this.config.chromeArgs),
          })
        : undefined;
    if (egress) network?.protectedPorts.add(egress.port);
    // Over a pipe: nothing to attach to, nobody asked to allow the connection.
    const launched = await launchIsolated({
      executablePath,
      headless: this.config.headless,
      extraArgs: [...withOwnBrowserFeatures(this.config.chromeArgs), ...(egress?.chromeArgs ?? [])],
      signal: this.stopping.signal,
    }).catch((error: unknown) => {
      egress?.close();
      throw error;
    });
    // The proxy outlives the browser's last request: closed once the browser is gone, never before. While it runs,
    // a grown taint cuts its connections to the hosts that taint now covers.
    if (egress && network) {
      const stopCutting = network.addCutter((crosses) => egress.cut(crosses));
      launched.browser.on('disconnected', () => {
        stopCutting();
        egress.close();
      });
    }
    this.launching.add(launched);
    const { browser, context } = launched;
    return { mode: 'isolated', browser, context, endpoint: 'a pipe', launched };
  }

  private async openShared(target: AttachTarget): Promise<Connection> {
    const endpoint = await resolveEndpoint(target, this.config.attachTimeoutMs);
    const browser = await connectCdp(endpoint, this.config.attachTimeoutMs, this.config.notify);
    const context = browser.contexts()[0];
    if (!context) {
      await browser.close().catch(() => undefined);
      throw new TabwardError('attach_failed', `The browser at ${endpoint} has no default profile to share.`);
    }
    return { mode: 'shared', browser, context, endpoint };
  }

  private async openRemote(): Promise<Connection> {
    const endpoint = this.config.attach.wsEndpoint ?? this.config.attach.browserUrl;
    if (!endpoint) {
      throw new TabwardError(
        'bad_input',
        'Remote mode needs --ws-endpoint (or --browser-url) of the browser service.',
      );
    }
    const { attach, attachTimeoutMs } = this.config;
    const resolved = await resolveEndpoint({ ...attach }, attachTimeoutMs);
    const browser =
      attach.protocol === 'playwright'
        ? await connectPlaywright(resolved, attachTimeoutMs, attach.headers)
        : await connectCdp(resolved, attachTimeoutMs, this.config.notify, undefined, attach.headers);
    // A fresh context: the service's other sessions are not the agent's to see.
    const context = await browser.newContext();
    return { mode: 'remote', browser, context, endpoint: resolved };
  }

  private async install(connection: Connection): Promise<void> {
    const { network } = this.config;
    // A browser with no egress proxy of tabward's is paused browser-wide, so that what an agent frame sends after
    // its own CDP session ended is still judged (browser/browserFetchGate.ts); it fails closed.
    if (network && connection.mode !== 'isolated')
      await withDeadline(network.guardBrowser(connection.browser), 30_000, 'Guarding the browser').catch(
        async (error: unknown) => {
          await connection.browser.close().catch(() => undefined);
          throw new TabwardError(
            'attach_failed',
            `tabward could not hold the requests of the browser at ${connection.endpoint} until judged (${translateBrowserError(error, 'Guarding the browser').message}), so it does not use it.`,
            'Use an isolated browser, or an endpoint that allows a browser-wide CDP session.',
          );
        },
      );
    // Before any tab is used: no request of the agent's pages may leave unjudged.
    if (network && connection.mode !== 'shared')
      await withDeadline(network.watchContext(connection.context), 30_000, 'Guarding the browser');
    const firstTab = await this.usableFirstTab(connection);
    this.current = connection;
    this.wantedMode = connection.mode;
    this.pages.forget('the browser was replaced');
    // In the user's Chrome the tabs already open are theirs; elsewhere every tab is the agent's.
    const onAgentPopup =
      network && connection.mode === 'shared' ? (page: Page) => network.watchPage(page) : undefined;
    this.pages.watch(
      connection.context,
      connection.mode !== 'shared',
      onAgentPopup,
      network && connection.mode === 'shared' ? (page: Page) => network.isAgentTab(page) : undefined,
    );
    if (firstTab) {
      const tracked = this.pages.track(firstTab, true);
      tracked.ownedByAgent = true;
      this.pages.selected = tracked;
      this.spareTab = tracked;
    }
    connection.browser.on('disconnected', () => {
      if (this.current === connection) this.lost(connection);
    });
    this.emitMode(connection.mode);
  }

  /**
   * The blank tab a headless browser of tabward's own started with (its renderer started while playwright-core
   * loaded) becomes the agent's first tab, handed out as warmUp's tab is: the first call uses it, or new_page does.
   * A headed browser's first window stays as it was. A tab the backstop could not take under watch is closed, not used.
   */
  private async usableFirstTab(connection: Connection): Promise<Page | undefined> {
    const first = connection.launched?.firstTab;
    if (!first || !this.config.headless || first.isClosed()) return undefined;
    const { network } = this.config;
    const guarded = network
      ? await withDeadline(network.ready(first), 30_000, 'Guarding the tab').then(
          () => true,
          () => false,
        )
      : true;
    if (guarded) return first;
    await withDeadline(first.close(), 5_000, 'Closing a tab').catch(() => undefined);
    return undefined;
  }

  private dropConnection(why: string): void {
    this.current = undefined;
    this.spareTab = undefined;
    this.pages.forget(why);
  }

  /** The browser went away under us (killed, crashed, the user quit their Chrome): clean up and say so. */
  private lost(connection: Connection): void {
    const tabs = this.pages.list().map((tracked) => tracked.id);
    const why = connection.mode === 'shared' ? 'your Chrome went away' : 'it closed or crashed';
    this.dropConnection(why);
    void this.config.network?.releaseBrowser(connection.browser, 0);
    // What is left of a browser we launched (helper processes, its profile) goes with it.
    if (connection.launched) void this.closeLaunched(connection.launched);
    // A browser warmed up that no call has used yet: nothing the agent knew of changed.
    if (!this.used) return;
    const gone = tabs.length > 0 ? ` Tabs ${tabs.join(', ')} are gone.` : '';
    this.notices.push(
      connection.mode === 'shared'
        ? `Mode changed: the connection to your Chrome was lost (it was closed or crashed).${gone} The next call uses your Chrome again if it can be reached, else an isolated browser.`
        : `The browser closed or crashed; the next call starts a new one.${gone}`,
    );
  }

  private async closeCurrent(): Promise<void> {
    const connection = this.current;
    const agentTabs = this.pages.list().filter((tracked) => tracked.ownedByAgent);
    this.dropConnection('the browser was closed');
    if (!connection) return;
    // A browser tabward launched: CDP Browser.close first (Chromium quits as for a user, removing its own temp
    // files), then its process group and profile.
    if (connection.launched) return this.closeLaunched(connection.launched);
    // The agent's tabs do not outlive tabward's watch: left open in the user's Chrome, their pages could send what
    // they saw with nobody judging. They close while the browser-wide gate still judges what their frames send as
    // they tear down; the user's own tabs stay as they are.
    if (connection.mode === 'shared') await closeTabs(agentTabs);
    if (connection.mode === 'remote') await connection.context.close().catch(() => undefined);
    await this.config.network?.releaseBrowser(connection.browser);
    // For a CDP connection, Browser.close() disconnects and leaves the user's browser and tabs open.
    await connection.browser.close().catch(() => undefined);
  }

  private closeLaunched(launched: IsolatedBrowser): Promise<void> {
    const closing: Promise<void> = launched
      .close()
      .catch(() => undefined)
      .finally(() => this.closings.delete(closing));
    this.closings.add(closing);
    return closing;
  }

  private emitMode(mode: BrowserMode): void {
    for (const listener of this.modeListeners) listener(mode);
  }
}

function shuttingDown(): TabwardError {
  return new TabwardError('browser_unavailable', 'tabward is shutting down; its browser is closing.');
}

/**
 * Chromium features the browsers tabward starts run without, merged into any --disable-features given (Chromium
 * reads only the last one):
 * - IsolateSandboxedIframes: a sandboxed iframe (srcdoc, allow-scripts) gets a process of its own in Chromium 156,
 *   whose first request neither the context's route nor the tab's CDP interception sees in time; without it such
 *   frames stay in their page's process, where every request is paused.
 * - WebUIOmniboxPopup, WebUIOmniboxAimPopup: Chromium 156 loads two WebUI renderers for the address bar's popup
 *   with the first window, headless too; they compete with the first tab for the CPU (its start and first load
 *   about 0.1 s slower here, bench/results.md). The address bar falls back to its native popup.
 */
export function withOwnBrowserFeatures(args: readonly string[] = []): string[] {
  const features = ['IsolateSandboxedIframes', 'WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'].join(',');
  const given = args.findLastIndex((arg) => arg.startsWith('--disable-features='));
  if (given < 0) return [...args, `--disable-features=${features}`];
  return args.map((arg, index) => (index === given ? `${arg},${features}` : arg));
}

/**
 * Closes tabs of the user's Chrome that are the agent's, bounded. Each is silenced first, as close_page does (its
 * frames' scripts off, its renderer stopped), so that no unload handler runs to send anything as it goes: a request
 * sent then could be answered by a redirect after tabward has left.
 */
async function closeTabs(tabs: readonly TrackedPage[]): Promise<void> {
  await Promise.all(
    tabs.map(async (tracked) => {
      if (!tracked.dialog) await tracked.silence(4_000);
      await withDeadline(tracked.page.close(), 5_000, 'Closing an agent tab').catch(() => undefined);
    }),
  );
}

function originsOf(url: string): string[] {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? [] : [origin];
  } catch {
    return [];
  }
}
