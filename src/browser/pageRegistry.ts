// The registry of the tabs tabward knows about: a stable id per tab (p1, p2, ... never reused), which tab is
// selected, which are the agent's (its own and their popups), and, for ids no longer in use, why (a tab of a
// browser that is gone, a retired tab). Each tab itself is a TrackedPage (browser/pages.ts).

import type { BrowserContext, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { TabwardError } from '../core/errors.ts';
import { TrackedPage } from './pages.ts';

export class PageRegistry {
  private readonly byPage = new Map<Page, TrackedPage>();
  /** Ids no longer in use, and why: a tab of a browser that is gone, or a retired tab. */
  private readonly gone = new Map<string, string>();
  private nextId = 1;
  selected: TrackedPage | undefined;

  /** Told of each popup of an agent tab, once: it is policed like the agent's tabs. */
  private onAgentPopup: ((page: Page) => Promise<void>) | undefined;
  private readonly adopted = new WeakSet<Page>();

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
      this.byPage.delete(page);
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
    return [...this.byPage.values()].filter((tracked) => !tracked.closed && !tracked.retired);
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
    this.selected = undefined;
  }
}

function goneWithBrowser(id: string, why: string): string {
  return `Tab ${id} belonged to a browser that is gone (${why}); tabs do not survive a browser restart.`;
}
