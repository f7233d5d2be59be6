// A tab for a recipe run, driven by CSS selectors: each method is one recipe step under its deadline, plus
// what the runner needs to judge a click and to extract data. Isolated and remote runs get a context of their
// own (fresh cookies, safe to run side by side); shared runs a tab in the user's profile.

import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { TabwardError } from '../core/errors.ts';
import type { FrameFact } from '../core/guard.ts';
import type { Connection } from './browserConnections.ts';
import { originOf } from './browserFetchGate.ts';
import { translateBrowserError, withDeadline } from './deadline.ts';
import { describeLocator, type FocusTarget, frameChain } from './elements.ts';
import { type Extracted, extractInPage, type FieldsSpec } from './extractFields.ts';
import { focusOn } from './focusedElement.ts';
import type { NetworkGuard } from './networkGuard.ts';
import { retiredPages, retireTab, watchOrphanDialogs } from './orphanDialogs.ts';
import { silencePage } from './tabSilence.ts';

export class RecipePage {
  /** tabward's CDP session of the tab, for reads out of the page's reach (opened on first use). */
  private session: Promise<CDPSession> | undefined;
  /** The windows the run's tab opened, and theirs: they go with it (see close). */
  private readonly popups = new Set<Page>();
  /** Closes the windows the tab opened that Playwright has not told of (user's Chrome; see guardedBy). */
  private closeUntoldWindows: (() => Promise<void>) | undefined;
  /** The origin of every document the run's tab, its frames and its popups loaded (see sitesLoaded). */
  private readonly origins = new Set<string>();

  private constructor(
    private readonly page: Page,
    private readonly closeTab: () => Promise<void>,
    private readonly timeoutMs: number,
  ) {
    this.follow(page);
  }

  private follow(tab: Page): void {
    tab.on('framenavigated', (frame) => {
      // Keyed as the browser-wide gate keys a worker by its script's origin.
      const origin = originOf(frame.url());
      if (origin) this.origins.add(origin);
    });
    tab.on('popup', (popup) => {
      this.popups.add(popup);
      this.follow(popup);
      void withDeadline(dismissingDialogs(popup), this.timeoutMs, 'Watching a window the run opened').catch(
        swallow('browser', 'recipePage.follow: a popup gone before its dialogs were watched'),
      );
    });
  }

  /**
   * The sites the run loaded, in its tab, its frames and its popups: their service and shared workers may hold what
   * the run typed or read after the run ends (browser/requestTaint.ts, retired).
   */
  sitesLoaded(): ReadonlySet<string> {
    return this.origins;
  }

  static async open(context: BrowserContext, ownContext: boolean, timeoutMs: number): Promise<RecipePage> {
    const page = await withDeadline(context.newPage(), timeoutMs, 'Opening a tab');
    // A dialog would block every later step; recipes cannot answer one, so it is dismissed, unless its frame is
    // gone: answering that one, or closing the tab, would crash the browser other runs share (an attack review:
    // a page's frames alerting and removed in waves took a concurrent job of `serve` down). Such a tab is retired
    // (browser/orphanDialogs.ts); the run fails at its next step, and the tab and its context stay.
    const session = await withDeadline(dismissingDialogs(page), timeoutMs, 'Opening a tab');
    const close = ownContext ? () => context.close() : () => page.close();
    const recipePage = new RecipePage(
      page,
      async () => {
        if (retiredPages.has(page)) return;
        await close().catch(swallow('browser', 'recipePage.open: closing a run’s tab'));
      },
      timeoutMs,
    );
    recipePage.session = Promise.resolve(session);
    return recipePage;
  }

  url(): string {
    return this.page.url();
  }

  /**
   * Silenced first (browser/tabSilence.ts), as the agent's tabs are: no `pagehide` beacon or keepalive leaves as the
   * tab goes, in the user's Chrome (where only the browser-wide gate judges it) as in tabward's browsers. The
   * windows it opened go with it: the run's taint stops counting once this returns, and a popup the page told what
   * was typed (or read) would send it on, judged by nobody's taint, for as long as the session (or `serve`) lasts.
   */
  async close(): Promise<void> {
    // Bounded short: the run is over, and a tab whose navigation hangs may never report its crash.
    const timeoutMs = Math.min(this.timeoutMs, 2_000);
    const silenced = new Set<Page>();
    const silence = (page: Page) => {
      silenced.add(page);
      return silencePage(page, timeoutMs, () => page.isClosed());
    };
    // A retired tab (and a retired popup) is left as it is, frozen: closing it would crash the browser. The windows
    // it opened still go: a tab retired on purpose must not keep them past the run, and the run's taint with them.
    const live = (page: Page) => !retiredPages.has(page);
    await Promise.all([this.page, ...this.popups].filter(live).map(silence));
    await this.closeTab();
    // The popups (a window opened while the others were silenced too, and the windows it opened).
    for (let round = 0; round < 3; round++) {
      const open = [...this.popups].filter((popup) => !popup.isClosed() && live(popup));
      if (open.length === 0) break;
      await Promise.all(open.filter((popup) => !silenced.has(popup)).map(silence));
      await Promise.all(
        open.map((popup) =>
          withDeadline(popup.close(), timeoutMs, 'Closing a window the run opened').catch(
            swallow('browser', 'recipePage.close: closing a window the run’s tab opened'),
          ),
        ),
      );
    }
    // A window Playwright never told of as a popup: its first document had not committed when the tab closed.
    if (this.closeUntoldWindows)
      await withDeadline(this.closeUntoldWindows(), timeoutMs, 'Closing the windows the run opened').catch(
        swallow('browser', 'recipePage.close: closing windows the run’s tab opened, not told yet'),
      );
  }

  async goto(url: string): Promise<number | undefined> {
    const response = await this.step(`goto ${url}`, this.timeoutMs * 2, () =>
      this.page.goto(url, { waitUntil: 'domcontentloaded', timeout: this.timeoutMs * 2 }),
    );
    return response?.status();
  }

  fill(selector: string, text: string): Promise<void> {
    return this.step(`type into ${selector}`, this.timeoutMs, () =>
      this.page.locator(selector).first().fill(text, { timeout: this.timeoutMs }),
    );
  }

  /** The element a step acts on, as the page shows it now: frames, name, tag and where it sends data. */
  element(selector: string, keyPress: boolean): Promise<FocusTarget & { fingerprint: string }> {
    return this.step(`find ${selector}`, this.timeoutMs, async () => {
      return describeLocator(this.page.locator(selector).first(), keyPress, this.timeoutMs);
    });
  }

  /** Where a key press without a selector lands: the deepest focused element. */
  async focused(): Promise<FocusTarget> {
    this.session ??= this.page.context().newCDPSession(this.page);
    return focusOn(this.page, await this.session, this.timeoutMs);
  }

  /** In the user's Chrome only this tab is policed by the network backstop. */
  async guardedBy(network: NetworkGuard): Promise<void> {
    const [, closer] = await Promise.all([network.watchPage(this.page), network.windowsCloser(this.page)]);
    this.closeUntoldWindows = closer;
  }

  /** Resolves once the backstop watches this tab's requests hop by hop: await it before the first navigation. */
  readyFor(network: NetworkGuard): Promise<void> {
    return network.ready(this.page);
  }

  /** The top document's frame chain, for steps that act on the page as a whole. */
  topFrames(): FrameFact[] {
    return frameChain(this.page.mainFrame());
  }

  /** Every frame's URL: what the run has seen, for taint. */
  frameUrls(): string[] {
    return this.page.frames().map((frame) => frame.url());
  }

  click(selector: string): Promise<void> {
    return this.step(`click ${selector}`, this.timeoutMs, async () => {
      await this.page.locator(selector).first().click({ timeout: this.timeoutMs });
      await this.page.waitForLoadState('domcontentloaded', { timeout: this.timeoutMs });
    });
  }

  /**
   * A download a click (or a navigation to `url`) starts, once complete: the name the site suggested and the file
   * Playwright keeps in the browser's temporary profile (the caller copies what it keeps). The navigation goes
   * through the browser like any other, so the choke point judges its request.
   */
  download(
    how: { selector?: string; url?: string },
    timeoutMs: number,
  ): Promise<{ suggested: string; path: string }> {
    const what = how.selector ? `download by clicking ${how.selector}` : `download ${how.url}`;
    return this.step(what, timeoutMs, async () => {
      const started = this.page.waitForEvent('download', { timeout: timeoutMs });
      started.catch(() => undefined);
      if (how.selector) await this.page.locator(how.selector).first().click({ timeout: timeoutMs });
      // A navigation that turns into a download ends with an error of its own ("Download is starting"): the
      // download event says whether it did.
      else if (how.url)
        await this.page
          .goto(how.url, { timeout: timeoutMs })
          .catch(
            swallow(
              'browser',
              'recipePage.download: the navigation a download URL starts (it aborts as the download begins)',
            ),
          );
      const download = await started;
      return { suggested: download.suggestedFilename(), path: await download.path() };
    });
  }

  async waitFor(
    selector: string,
    state: 'visible' | 'attached' | 'hidden',
    timeoutMs: number,
  ): Promise<void> {
    try {
      await this.step(`wait for ${selector}`, timeoutMs + 1000, () =>
        this.page.locator(selector).first().waitFor({ state, timeout: timeoutMs }),
      );
    } catch (error) {
      // A selector that matches nothing is the recipe's mistake, not a slow page: say so in the recipe's words.
      if (!(error instanceof TabwardError) || error.code !== 'timeout' || state === 'hidden') throw error;
      const count = await this.page
        .locator(selector)
        .count()
        .catch(() => -1);
      if (count !== 0) throw error;
      throw new TabwardError(
        'not_found',
        `waitFor ${selector}: nothing on the page matched it within ${timeoutMs} ms.`,
        "Check the selector against the page, or raise the step's timeoutMs if the page is slow.",
      );
    }
  }

  async select(selector: string, value: string): Promise<void> {
    // A string matches an option by value or by label.
    await this.step(`select in ${selector}`, this.timeoutMs, () =>
      this.page.locator(selector).first().selectOption(value, { timeout: this.timeoutMs }),
    );
  }

  press(key: string, selector: string | undefined): Promise<void> {
    return this.step(`press ${key}`, this.timeoutMs, async () => {
      if (selector) await this.page.locator(selector).first().press(key, { timeout: this.timeoutMs });
      else await this.page.keyboard.press(key);
      await this.page.waitForLoadState('domcontentloaded', { timeout: this.timeoutMs });
    });
  }

  scroll(selector: string | undefined, to: 'top' | 'bottom'): Promise<void> {
    return this.step('scroll', this.timeoutMs, async () => {
      if (selector)
        await this.page.locator(selector).first().scrollIntoViewIfNeeded({ timeout: this.timeoutMs });
      else await this.page.mouse.wheel(0, to === 'top' ? -1e6 : 1e6);
    });
  }

  waitForUrl(glob: string, timeoutMs: number): Promise<void> {
    return this.step(`wait for URL ${glob}`, timeoutMs + 1000, () =>
      this.page.waitForURL(glob, { timeout: timeoutMs }),
    );
  }

  waitForNetworkIdle(timeoutMs: number): Promise<void> {
    return this.step('wait for network idle', timeoutMs + 1000, () =>
      this.page.waitForLoadState('networkidle', { timeout: timeoutMs }),
    );
  }

  extract(spec: FieldsSpec): Promise<Extracted> {
    return this.step('extract', this.timeoutMs, () => this.page.evaluate(extractInPage, spec));
  }

  /** The page's visible text, for prompt extraction. */
  text(maxChars: number): Promise<string> {
    return this.step('read the page text', this.timeoutMs, async () =>
      (await this.page.locator('body').innerText({ timeout: this.timeoutMs })).slice(0, maxChars),
    );
  }

  /** Whether the selector matches an element that can be clicked (for pagination). */
  async has(selector: string): Promise<boolean> {
    const count = await this.step(`look for ${selector}`, this.timeoutMs, () =>
      this.page.locator(selector).count(),
    );
    return count > 0;
  }

  screenshot(): Promise<Buffer> {
    return this.step('screenshot', this.timeoutMs, () =>
      this.page.screenshot({
        type: 'png',
        fullPage: true,
        mask: [this.page.locator('input[type=password]')],
        timeout: this.timeoutMs,
      }),
    );
  }

  private async step<T>(what: string, timeoutMs: number, work: () => Promise<T>): Promise<T> {
    if (retiredPages.has(this.page))
      throw new TabwardError(
        'page_closed',
        `${what} was not done: a dialog of the run's tab was opened by a frame the page then removed, so the tab was retired (answering it or closing the tab would crash the browser); it stays frozen until the browser closes.`,
        'A page that does this cannot be run as a recipe.',
      );
    try {
      return await withDeadline(work(), timeoutMs, what);
    } catch (error) {
      if (error instanceof TabwardError) throw error;
      throw translateBrowserError(error, what);
    }
  }
}

/**
 * Dismisses each dialog of the tab, except one whose frame is gone, which retires the tab instead (see open);
 * resolves with the CDP session that watches it.
 */
async function dismissingDialogs(page: Page): Promise<CDPSession> {
  const session = await page.context().newCDPSession(page);
  const dialogs = await watchOrphanDialogs(page, session, () => void retireTab(page, session));
  page.on('dialog', (dialog) => {
    // Playwright's session may be told of the dialog before tabward's is: decided once tabward's has caught up
    // (one it was never told of retires the tab).
    void dialogs.reported().then(() => {
      if (dialogs.answerable())
        void dialog.dismiss().catch(swallow('browser', 'recipePage: dismissing a dialog of a run’s tab'));
    });
  });
  return session;
}

/** A tab for one recipe run in `connection`: in a context of its own, except in the user's Chrome, where logins live. */
export async function openRunPage(
  connection: Connection,
  network: NetworkGuard | undefined,
  timeoutMs: number,
): Promise<RecipePage> {
  if (connection.mode === 'shared') {
    const page = await RecipePage.open(connection.context, false, timeoutMs);
    if (network) await withDeadline(page.guardedBy(network), timeoutMs, 'Guarding the tab');
    return page;
  }
  const context = await withDeadline(connection.browser.newContext(), timeoutMs, 'Opening a browser context');
  if (network) await withDeadline(network.watchContext(context), timeoutMs, 'Guarding the browser');
  const page = await RecipePage.open(context, true, timeoutMs);
  // Until the backstop watches the new tab, its first navigation is held like a popup's (an empty 200 page, then
  // the real load behind the recipe's back): the start's HTTP status and connection errors would be lost.
  if (network) await withDeadline(page.readyFor(network), timeoutMs, 'Guarding the tab');
  return page;
}
