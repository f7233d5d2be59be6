// The browser session: which browser the agent drives (isolated, the user's shared Chrome, or a remote
// service), started on first need (or warmed up early, see warmUp) and switched in-process without the tool list
// changing. Detaching from the user's Chrome never closes it or the user's tabs (the agent's tabs close with the
// connection, see closeCurrent). A browser tabward launched is removed
// with its profile however it ends (closed, crashed, killed, or shut down while still starting), and a mode the
// agent did not choose (the user's Chrome gone, a fallback to isolated) is told to the agent with its next result.
// Opening and guarding one connection: browser/browserConnections.ts (the isolated ones: browser/ownBrowsers.ts);
// the agent's tabs in it: browser/agentTabs.ts; what every tracked tab is watched by: browser/tabWatchers.ts;
// browser_status and notices: browser/sessionStatus.ts; beside other clients in the user's Chrome: otherClients.ts.

import { swallow } from '../core/debug.ts';
import { TabwardError } from '../core/errors.ts';
import type { BrowserMode } from '../core/kinds.ts';
import { openGuardedTab, stillSpare, watchConnectionTabs } from './agentTabs.ts';
import {
  type BrowserConfig,
  type Connection,
  closeAttached,
  guardConnection,
  openRemote,
  openShared,
  shuttingDown,
  usableFirstTab,
} from './browserConnections.ts';
import type { AttachTarget } from './connect.ts';
import { translateBrowserError, withDeadline } from './deadline.ts';
import { DevtoolsRecorder } from './devtoolsLog.ts';
import { DownloadKeeper } from './downloads.ts';
import { OtherClients } from './otherClients.ts';
import { OwnBrowsers } from './ownBrowsers.ts';
import { PageRegistry } from './pageRegistry.ts';
import type { TrackedPage } from './pages.ts';
import { openRunPage, type RecipePage } from './recipePage.ts';
import { fallbackNotice, lostNotice, type SessionStatus, sessionStatus } from './sessionStatus.ts';
import { watchTrackedTabs } from './tabWatchers.ts';

/** Swallows an error on purpose, telling the debug channel (core/debug.ts) where and why. */
const swallowing = (why: string) => swallow('browser', `session.${why}`);

export { type BrowserConfig, withOwnBrowserFeatures } from './browserConnections.ts';
export type { SessionStatus } from './sessionStatus.ts';

/** How long a browser started early (warmUp) may wait for its first call before it closes again. */
const unusedWarmBrowserMs = 5 * 60_000;

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
  /** What changed under the agent since it was last told (see takeNotices). */
  private notices: string[] = [];
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
  /** The other clients of this tabward in the same user's Chrome, while attached to it. */
  private readonly others: OtherClients;
  /** The isolated browsers this session launches, and those still starting or closing: close() waits for them. */
  private readonly own: OwnBrowsers;

  constructor(readonly config: BrowserConfig) {
    this.others = new OtherClients(config);
    this.own = new OwnBrowsers(config, this.stopping.signal);
    this.wantedMode = config.mode;
    const { network } = config;
    if (config.devtools) this.devtools = new DevtoolsRecorder();
    this.downloads = config.downloads ? new DownloadKeeper(config.downloads) : undefined;
    watchTrackedTabs(this.pages, network, this.devtools, this.downloads);
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
      next = await openShared(this.config, target);
    } catch (error) {
      this.lastAttachError = error instanceof TabwardError ? error.describe() : String(error);
      throw error;
    }
    this.lastAttachError = undefined;
    await this.replaceCurrent(() => this.install(next)).catch(async (error: unknown) => {
      // Shut down meanwhile: the connection to the user's Chrome is not left open behind.
      if (this.current !== next)
        await next.browser.close().catch(swallowing('attachShared: closing the connection left behind'));
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
      await this.starting?.catch(swallowing('replaceCurrent: a start in flight failed'));
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
    this.own.closeStarting();
    await this.starting?.catch(swallowing('close: a start in flight failed'));
    await this.replacing;
    await this.closeCurrent();
    // tabward exits once this resolves: a close begun earlier must not leave a browser or its profile behind.
    await this.own.settled();
  }

  /** What changed under the agent since it was last told: the user's Chrome gone, a fallback, a restart. */
  takeNotices(): string[] {
    return this.notices.splice(0);
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
    return spare && stillSpare(spare);
  }

  /** A new agent tab; in `only` (the warm-up's browser) or not at all, else in the browser in use. */
  private async openTab(only?: Connection): Promise<TrackedPage> {
    for (let attempt = 0; ; attempt++) {
      const connection = only ?? (await this.connect());
      // Beside other clients in the user's Chrome: hidden from them from its creation, not once known as this one's.
      const opened = this.others.opening(this.pages);
      try {
        const page = await openGuardedTab(connection, this.config.network);
        // Switched away from meanwhile (browser_connect, shutdown): the tab belongs to a browser that is closing.
        if (this.current !== connection)
          throw new TabwardError('page_closed', 'Opening a tab failed: the browser was replaced meanwhile.');
        const tracked = this.pages.track(page, true);
        tracked.ownedByAgent = true;
        // Its dialogs watched before anything loads in it: one opened before would have no known frame.
        await tracked.dialogsWatched();
        this.pages.selected = tracked;
        // Known as this client's before it is handed out: other clients in the same Chrome do not list it.
        if (this.others.joined) await this.pages.targetIdOf(tracked);
        return tracked;
      } catch (error) {
        const failure = translateBrowserError(error, 'Opening a tab');
        // The browser died under us (its disconnect may not have been reported yet): start afresh, once. Only the
        // browser this tab was to open in: one switched to meanwhile is left alone, and used by the retry.
        if (only || attempt > 0 || failure.code !== 'page_closed') throw failure;
        if (this.current === connection) await this.closeCurrent();
      } finally {
        opened?.();
      }
    }
  }

  /** A tab for one recipe run: in a context of its own, except in the user's Chrome, where logins live. */
  async openRunPage(timeoutMs: number): Promise<RecipePage> {
    const connection = await this.ensure();
    // Runs open contexts of their own: the blank tab the browser started with would only hold memory.
    const spare = await this.takeSpareTab();
    if (spare)
      await withDeadline(spare.page.close(), 5_000, 'Closing a tab').catch(
        swallowing('openRunPage: closing the spare tab'),
      );
    return openRunPage(connection, this.config.network, timeoutMs);
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
    const launched = this.current?.launched ?? this.own.starting();
    return sessionStatus(this.mode, this.current, launched, this.lastAttachError, this.pages, this.config);
  }

  private async open(mode: BrowserMode): Promise<Connection> {
    const connection =
      mode === 'shared'
        ? await this.openSharedOrIsolated()
        : mode === 'remote'
          ? await openRemote(this.config)
          : await this.own.open();
    try {
      await this.install(connection);
    } catch (error) {
      await this.own.discard(connection);
      throw error;
    } finally {
      this.own.installed(connection);
    }
    // Shut down while starting: close() closes what was installed once this start has settled.
    if (this.stopping.signal.aborted) throw shuttingDown();
    return connection;
  }

  /** Started in shared mode but the user's Chrome is not reachable: say how to fix it, and work isolated. */
  private async openSharedOrIsolated(): Promise<Connection> {
    try {
      return await openShared(this.config, this.config.attach);
    } catch (error) {
      this.lastAttachError = error instanceof TabwardError ? error.describe() : String(error);
      this.config.notify(`tabward: could not use your Chrome, continuing isolated. ${this.lastAttachError}`);
      this.notices.push(fallbackNotice(this.lastAttachError));
      return this.own.open();
    }
  }

  private async install(connection: Connection): Promise<void> {
    const { network } = this.config;
    await guardConnection(network, connection);
    const firstTab = await usableFirstTab(connection, this.config.headless, network);
    this.current = connection;
    this.wantedMode = connection.mode;
    this.pages.forget('the browser was replaced');
    // Other clients of this tabward in the same Chrome: each tab's owner is known before any is listed.
    this.others.join(connection, this.pages, network);
    watchConnectionTabs(this.pages, connection, network);
    await this.others.identified(this.pages);
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

  private dropConnection(why: string): void {
    this.others.leave();
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
    // What is left of a browser we launched (helper processes, its profile) goes with it; of a context in a shared
    // browser, its proxy.
    if (connection.launched) void this.own.close(connection.launched);
    void connection.release?.();
    // A browser warmed up that no call has used yet: nothing the agent knew of changed.
    if (!this.used) return;
    this.notices.push(lostNotice(connection.mode, tabs));
  }

  private async closeCurrent(): Promise<void> {
    const connection = this.current;
    const agentTabs = this.pages.list().filter((tracked) => tracked.ownedByAgent);
    this.dropConnection('the browser was closed');
    if (!connection) return;
    // A context of this client's own in a browser others share: it closes, the browser stays.
    if (connection.release) return connection.release();
    // A browser tabward launched: CDP Browser.close first (Chromium quits as for a user, removing its own temp
    // files), then its process group and profile.
    if (connection.launched) return this.own.close(connection.launched);
    await closeAttached(connection, agentTabs, this.config.network);
  }

  private emitMode(mode: BrowserMode): void {
    for (const listener of this.modeListeners) listener(mode);
  }
}
