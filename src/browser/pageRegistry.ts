// The registry of the tabs tabward knows about: a stable id per tab (p1, p2, ... never reused), which tab is
// selected, which are the agent's (its own and their popups), and, for ids no longer in use, why (a tab of a
// browser that is gone, a retired tab). Each tab itself is a TrackedPage (browser/pages.ts).

import type { BrowserContext, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { TabwardError } from '../core/errors.ts';
import type { ClientTabs, TabOwner } from './clientTabs.ts';
import { TrackedPage } from './pages.ts';

export class PageRegistry implements TabOwner {
  private readonly byPage = new Map<Page, TrackedPage>();
  /** Ids no longer in use, and why: a tab of a browser that is gone, or a retired tab. */
  private readonly gone = new Map<string, string>();
  private nextId = 1;
  selected: TrackedPage | undefined;

  /** Told of each popup of an agent tab, once: it is policed like the agent's tabs. */
  private onAgentPopup: ((page: Page) => Promise<void>) | undefined;
  private readonly adopted = new WeakSet<Page>();
  /** Other clients of this process in the same browser (the user's Chrome): their tabs are not listed here. */
  private clientTabs: ClientTabs | undefined;
  /** Each tab's CDP target id, once read (only while sharing the browser with other clients). */
  private readonly targetIds = new Map<TrackedPage, Promise<string | undefined>>();
  private readonly knownTargetIds = new Map<TrackedPage, string>();
  /** For each tab first seen while other clients were opening tabs: those openings (the tab may be one of theirs). */
  private readonly seenDuring = new Map<TrackedPage, symbol[]>();
  /** Which tab opened which (target ids), as read with them. */
  private readonly openers = new Map<string, string>();

  /**
   * From now on, a tab another client of `clientTabs` owns is none of this registry's business: each tab's target
   * id is read as it is tracked, and until it is known a tab that is not this client's own is not listed.
   */
  shareBrowserWith(clientTabs: ClientTabs): () => void {
    this.clientTabs = clientTabs;
    for (const tracked of this.byPage.values()) void this.targetIdOf(tracked);
    return clientTabs.join(this);
  }

  /** Once the target id of every tab tracked now is read. */
  async identified(): Promise<void> {
    await Promise.all([...this.byPage.values()].map((tracked) => this.targetIdOf(tracked)));
  }

  ownsTarget(targetId: string): boolean {
    for (const [tracked, id] of this.knownTargetIds)
      if (id === targetId && tracked.ownedByAgent && !tracked.closed) return true;
    return false;
  }

  ownedTargets(): string[] {
    return [...this.knownTargetIds]
      .filter(([tracked]) => tracked.ownedByAgent && !tracked.closed)
      .map(([, id]) => id);
  }

  /** The tab's CDP target id (read once; undefined when the tab is gone before it could be read). */
  targetIdOf(tracked: TrackedPage): Promise<string | undefined> {
    let reading = this.targetIds.get(tracked);
    if (!reading) {
      reading = readTargetId(tracked.page).then((info) => {
        if (!info) return undefined;
        this.knownTargetIds.set(tracked, info.targetId);
        // Chromium names the opener of a popup opened with noopener too.
        if (info.openerId) this.openers.set(info.targetId, info.openerId);
        return info.targetId;
      });
      this.targetIds.set(tracked, reading);
    }
    return reading;
  }

  /**
   * Whether another client of this browser has the tab (or it is not yet known whose it is). A popup whose opener
   * (or its opener's, and so on) another client has is that client's before it has read the popup's id: its page
   * opened it, and it adopts it.
   */
  private anotherClients(tracked: TrackedPage): boolean {
    const { clientTabs } = this;
    if (!clientTabs || tracked.ownedByAgent) return false;
    const during = this.seenDuring.get(tracked);
    if (during) {
      if (clientTabs.stillOpening(during)) return true;
      this.seenDuring.delete(tracked);
    }
    const seen = new Set<string>();
    for (let id = this.knownTargetIds.get(tracked); ; id = this.openers.get(id)) {
      if (id === undefined) return seen.size === 0;
      if (seen.has(id)) return false;
      seen.add(id);
      if (clientTabs.ownedByAnother(this, id)) return true;
    }
  }

  /**
   * Tracks every current and future tab of a context. `ownedByDefault` applies to tabs nobody claimed. A popup is
   * the agent's when its opener is an agent tab: told by the opener's own popup event (which comes even when the
   * opener closes itself at once, and page.opener() then says none), by page.opener(), or by `isAgentTab` (the
   * browser-wide gate's view of who opened what, in the user's Chrome).
   */
  watch(
    context: BrowserContext,
    ownedByDefault: boolean,
    onAgentPopup?: (page: Page) => Promise<void>,
    isAgentTab?: (page: Page) => Promise<boolean>,
  ): void {
    this.onAgentPopup = onAgentPopup;
    for (const page of context.pages()) this.track(page, ownedByDefault);
    context.on('page', (page) => {
      this.track(page, ownedByDefault);
      void (async () => {
        const opener = await page.opener();
        const byOpener = opener !== null && this.byPage.get(opener)?.ownedByAgent === true;
        if (byOpener || (await isAgentTab?.(page))) this.adopt(page);
      })().catch(swallow('browser', 'pageRegistry.watch: telling whether a new page is an agent popup'));
    });
  }

  /** A popup of an agent tab: the agent's, and policed like its tabs (once). */
  private adopt(popup: Page): void {
    const tracked = this.track(popup, true);
    tracked.ownedByAgent = true;
    if (this.adopted.has(popup)) return;
    this.adopted.add(popup);
    void this.onAgentPopup?.(popup).catch(
      swallow('browser', 'pageRegistry.adopt: this.onAgentPopup?.(popup)'),
    );
  }

  /** Told of every tab as it is first tracked (the network backstop names its pages by tab id). */
  onTrack: ((tracked: TrackedPage) => void) | undefined;

  track(page: Page, ownedByAgent: boolean): TrackedPage {
    const existing = this.byPage.get(page);
    if (existing) return existing;
    const tracked = new TrackedPage(`p${this.nextId++}`, page, ownedByAgent);
    this.byPage.set(page, tracked);
    if (this.clientTabs) {
      const during = this.clientTabs.openingsBesides(this);
      if (during.length > 0) this.seenDuring.set(tracked, during);
      void this.targetIdOf(tracked);
    }
    tracked.onRetire = () => {
      this.byPage.delete(page);
      if (tracked.retired) this.gone.set(tracked.id, tracked.retired);
      if (this.selected === tracked) this.selected = undefined;
    };
    this.onTrack?.(tracked);
    page.on('popup', (popup) => {
      if (tracked.ownedByAgent) this.adopt(popup);
    });
    page.on('close', () => {
      const targetId = this.knownTargetIds.get(tracked);
      if (targetId && this.clientTabs) this.clientTabs.closed(this, targetId);
      this.byPage.delete(page);
      this.targetIds.delete(tracked);
      this.knownTargetIds.delete(tracked);
      this.seenDuring.delete(tracked);
      if (targetId) this.openers.delete(targetId);
      if (this.selected === tracked) this.selected = undefined;
      // Playwright closes every page of a browser that died just before it reports the disconnect: a moment
      // later, the browser says whether this tab was closed on its own or went with its browser.
      setTimeout(() => {
        if (this.gone.has(tracked.id) || page.context().browser()?.isConnected() !== false) return;
        this.gone.set(tracked.id, goneWithBrowser(tracked.id, 'it closed or crashed'));
      }, 0);
    });
    return tracked;
  }

  list(): TrackedPage[] {
    return [...this.byPage.values()].filter(
      (tracked) => !tracked.closed && !tracked.retired && !this.anotherClients(tracked),
    );
  }

  get(id: string): TrackedPage {
    const found = this.list().find((tracked) => tracked.id === id);
    if (!found) {
      const why = this.gone.get(id);
      if (why)
        throw new TabwardError('page_closed', why, 'Use list_pages; open the page again with new_page.');
      const known =
        this.list()
          .map((tracked) => tracked.id)
          .join(', ') || 'none';
      throw new TabwardError('not_found', `No open tab with id ${id} (open: ${known}).`, 'Use list_pages.');
    }
    return found;
  }

  /** Drops every tab (the browser is gone or replaced); their ids keep saying why. */
  forget(why: string): void {
    for (const tracked of this.list()) this.gone.set(tracked.id, goneWithBrowser(tracked.id, why));
    this.byPage.clear();
    this.targetIds.clear();
    this.knownTargetIds.clear();
    this.openers.clear();
    this.seenDuring.clear();
    this.selected = undefined;
  }
}

/** A tab's CDP target id and its opener's, over a CDP session of its own (closed at once). */
async function readTargetId(page: Page): Promise<{ targetId: string; openerId?: string } | undefined> {
  try {
    const cdp = await page.context().newCDPSession(page);
    try {
      const { targetInfo } = (await cdp.send('Target.getTargetInfo')) as {
        targetInfo: { targetId: string; openerId?: string };
      };
      return targetInfo;
    } finally {
      await cdp.detach().catch(swallow('browser', 'pageRegistry.readTargetId: cdp.detach()'));
    }
  } catch (error) {
    swallow('browser', 'pageRegistry.readTargetId: the tab went before its id was read')(error);
    return undefined;
  }
}

function goneWithBrowser(id: string, why: string): string {
  return `Tab ${id} belonged to a browser that is gone (${why}); tabs do not survive a browser restart.`;
}
