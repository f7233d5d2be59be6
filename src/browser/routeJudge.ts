// Playwright's context or page route as a hook of the network backstop, where one is set (the user's Chrome, remote
// browsers, and a browser of tabward's own with no pipe of tabward's to hook on; docs/architecture.md "Tags"): it
// sees the first request of each chain, judged with its tab, frame and action. And popups' first navigations, which
// come before a popup is watched: answered with an empty page (by the route, or behind the egress proxy by the
// browser-wide pause of browser/popupDocuments.ts) and loaded for real once the popup is watched (startPopup).
// A base of the network guard (browser/networkGuard.ts).

import type { BrowserContext, Frame, Page, Request, Route } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { withoutFragment } from './announcedRequests.ts';
import { settledWithin } from './deadline.ts';
import { tagHeader } from './egressProxy.ts';
import { bodyOfRequest, initiatorUrlOf, isMainFrame, pageOf } from './hookRequests.ts';
import { requestDecided } from './pageActivity.ts';
import type { PopupDocuments } from './popupDocuments.ts';
import { SocketJudge } from './socketJudge.ts';

/** Swallows an error on purpose, telling the debug channel (core/debug.ts) where and why. */
const swallowing = (why: string) => swallow('browser', `routeJudge.${why}`);

/** How long a held popup's empty page is waited for to commit before its real load (it is answered at once). */
const emptyPageMs = 2_000;

export abstract class RouteJudge extends SocketJudge {
  protected readonly handler = (route: Route, request: Request) => this.handle(route, request);
  /** First addresses of popups answered with an empty page until they are watched. */
  protected readonly heldPopups = new Set<string>();
  /** Tabs hooked on the pipe: their target's id (a popup held browser-wide is known by it). */
  protected readonly targetIds = new WeakMap<Page, string>();
  /** A popup loading its first address for real: told once its tab's hook judged that document. */
  protected readonly firstLoadJudged = new WeakMap<Page, () => void>();
  /** Behind the proxy, where no context route sees a popup's first navigation: the browser-wide document pause. */
  protected readonly popupGates = new WeakMap<BrowserContext, PopupDocuments>();

  /** Resolves once the tab's own hooks are in place. */
  abstract ready(page: Page): Promise<void>;
  protected abstract isWatched(page: Page | undefined): boolean;
  /** Hooks an out-of-process frame on a session of its own. */
  protected abstract watchFrame(page: Page, frame: Frame): Promise<void>;

  private async handle(route: Route, request: Request): Promise<void> {
    const headers = request.headers();
    // Judged already by the tab's CDP session (its token on it): the choke point spends the token.
    if (this.tags.judged(headers[tagHeader], request.method(), request.url())) {
      requestDecided(request);
      await route.fallback().catch(swallowing('handle: route.fallback()'));
      return;
    }
    const reason = await this.judgeSafely(request);
    // Settling stops waiting for a passive load (an image...) once it is decided (browser/pageActivity.ts).
    requestDecided(request);
    if (!reason) {
      if (request.isNavigationRequest() && isMainFrame(request) && !this.isWatched(pageOf(request))) {
        await this.popupFirstNavigation(route, request);
        return;
      }
      // Before a navigation goes on, the page (and an out-of-process frame) must have its hops watched: an
      // iframe's request may redirect before a watch set up later would see it.
      if (request.isNavigationRequest()) await this.hopsWatchedFor(request);
      const tag = this.tags.issue(request.method(), request.url(), this.taintEpoch);
      await route
        .fallback({ headers: { ...headers, [tagHeader]: tag } })
        .catch(swallowing('handle: route.fallback with its tag'));
      return;
    }
    this.record(pageOf(request), request.method(), request.url(), reason);
    await route.abort('blockedbyclient').catch(swallowing('handle: route.abort("blockedbyclient")'));
  }

  private async hopsWatchedFor(request: Request): Promise<void> {
    const page = pageOf(request);
    if (!page) return;
    const frame = request.frame();
    const watches = [this.ready(page), ...(frame === page.mainFrame() ? [] : [this.watchFrame(page, frame)])];
    await settledWithin(Promise.all(watches), 2_000);
  }

  /**
   * A popup's first navigation comes before its page is watched, so its redirect hops could not be seen. It is
   * answered with an empty page at the same address; once the popup is a page whose every request is watched,
   * it loads that address for real (startPopup), and every hop of it is judged. A popup opened by a form post
   * cannot be replayed that way, and is refused.
   */
  private async popupFirstNavigation(route: Route, request: Request): Promise<void> {
    if (request.method().toUpperCase() !== 'GET') {
      this.record(
        undefined,
        request.method(),
        request.url(),
        'a form posting into a new window cannot be watched',
      );
      await route
        .abort('blockedbyclient')
        .catch(swallowing('popupFirstNavigation: route.abort("blockedbyclient")'));
      return;
    }
    this.heldPopups.add(request.url());
    const body = '<!doctype html><title>Opening…</title>';
    await route
      .fulfill({ status: 200, contentType: 'text/html', headers: { 'cache-control': 'no-store' }, body })
      .catch(swallowing('popupFirstNavigation: the empty page'));
  }

  /** A request the guard cannot judge (a detached frame, a URL that does not parse) is stopped. */
  private async judgeSafely(request: Request): Promise<string | undefined> {
    try {
      const document = request.isNavigationRequest();
      const origin = request.headers().origin;
      const facts = {
        method: request.method(),
        url: request.url(),
        document,
        mainFrame: document && isMainFrame(request),
        hop: request.redirectedFrom() !== null,
        ...initiatorUrlOf(request),
        ...bodyOfRequest(request),
        ...(origin !== undefined ? { origin } : {}),
      };
      return await this.verdict(facts, pageOf(request));
    } catch (error) {
      return `it could not be judged (${String(error)})`;
    }
  }

  /** A new page: watched first; a popup held at its first address then goes there for real. */
  protected async startPopup(page: Page): Promise<void> {
    await this.ready(page);
    const targetId = this.targetIds.get(page);
    if (targetId !== undefined) {
      // Held browser-wide, by its target: its empty page may not have committed yet, and the address it was held at
      // has no fragment.
      const held = this.popupGates.get(page.context())?.takeHeld(targetId);
      if (!held) return;
      this.firstLoadJudged.set(page, held.judged);
      await this.loadForReal(page, held.url);
      return;
    }
    const url = withoutFragment(page.url());
    if (this.heldPopups.delete(url)) await this.loadForReal(page, url);
  }

  /**
   * Loads for real the address a popup was held at: a reload where its empty page is there (a fragment kept; a
   * replace to the same address and a fragment would only scroll), else a replace to it.
   */
  private async loadForReal(page: Page, url: string): Promise<void> {
    // The empty page is answered, but may not have committed yet (a blank popup navigated at once is still on its
    // about:blank): a replace run there is lost when the empty page commits over it, and the popup stays on
    // "Opening…" (seen under load in CI). So it is waited for first, briefly; a popup gone elsewhere is replaced.
    const there = await page
      .waitForURL((at) => withoutFragment(at.href) === url, { waitUntil: 'commit', timeout: emptyPageMs })
      .then(
        () => true,
        () => false,
      );
    await page
      .evaluate(there ? 'location.reload()' : `location.replace(${JSON.stringify(url)})`)
      .catch(swallowing('loadForReal: the popup went away'));
  }
}
