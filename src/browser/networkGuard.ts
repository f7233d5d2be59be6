// The network backstop: the CDP hooks over the agent's pages (a CDP Fetch pause per tab and per out-of-process frame:
// on tabward's own sessions of the browser's pipe and narrow until the session is tainted behind the egress proxy,
// browser/pipeHooks.ts and hookPatterns.ts, with popups' first navigations paused browser-wide, popupDocuments.ts;
// elsewhere Playwright's sessions and its context or page route) and the verdict of the choke point every request
// of tabward's own browsers passes (browser/egressProxy.ts, docs/architecture.md "The choke point"). The hooks know what only they can (which tab,
// which frame, which action is running and which human answers for it) and judge a request with all of it:
// - tabward's own servers (the approval page, `mcp --http`) are unreachable from the browser the agent drives;
// - a request that changes state on a sensitive page, or a top-level navigation into one, passes only under a
//   human approval's pass naming it (core/actionPasses.ts);
// - after a sensitive read, or while a page holds a typed secret, a request to a host outside the session's
//   allowed set is judged whoever sent it (core/networkHolds.ts);
// - such a request is held and put to the human of the action running in its tab; with none running, stopped.
// A request a hook let go carries a single-use token (browser/requestTags.ts); the choke point spends it. One that
// arrives there without a token was seen by no hook, and is judged there alone, where no pass and no human reach.
// The verdict: browser/requestJudge.ts (and its stop log and taint); what the hooks read of a request:
// browser/hookRequests.ts; Playwright's route and popups' first navigations: browser/routeJudge.ts; sockets where a
// hook judges them: browser/socketJudge.ts (both bases of this class).

import type { Browser, BrowserContext, CDPSession, Frame, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { BrowserFetchGate } from './browserFetchGate.ts';
import { answerDocumentResponse, type ResponseDownloads } from './documentResponses.ts';
import { type EgressRequest, tagHeader } from './egressProxy.ts';
import {
  type FetchPattern,
  type HookSession,
  HookWidth,
  hookSessionOf,
  sensitiveHostPatterns,
} from './hookPatterns.ts';
import { bodyOf, type FrameTree, headerOf, type PausedRequest } from './hookRequests.ts';
import { watchNativeSockets } from './nativeSockets.ts';
import { decidedAtSight } from './pageActivity.ts';
import { hookTabOnThePipe } from './pipeHooks.ts';
import { pipeOfContext } from './pipeSession.ts';
import { PopupDocuments } from './popupDocuments.ts';
import { RouteJudge } from './routeJudge.ts';
import { watchSpeculativeLoads } from './speculativeLoads.ts';

/** Swallows an error on purpose, telling the debug channel (core/debug.ts) where and why. */
const swallowing = (why: string) => swallow('browser', `networkGuard.${why}`);

export class NetworkGuard extends RouteJudge {
  private readonly documentWatches = new WeakMap<Page, Promise<void>>();
  private readonly frameWatches = new WeakMap<Frame, Promise<void>>();
  private readonly watched = new WeakSet<Page>();
  /**
   * Where a download of an agent tab taken at its response goes (set by the session that keeps downloads): in a
   * browser with no egress proxy, the agent's downloads never reach the browser's own download folder.
   */
  responseDownloads: ((page: Page) => ResponseDownloads | undefined) | undefined;
  /** Browsers with no egress proxy (the user's Chrome, remote ones): their browser-wide pause, while attached. */
  private readonly gates = new Map<Browser, BrowserFetchGate>();
  /** Tabs hooked on the browser's pipe (hopsOnThePipe): their out-of-process frames are hooked there too. */
  private readonly onThePipe = new WeakSet<Page>();
  /** Browsers and contexts whose every request goes through an egress proxy this guard judges. */
  private readonly proxied = new WeakSet<Browser | BrowserContext>();
  /** Which requests the tab and frame hooks pause: narrow behind the proxy until the session is tainted. */
  private readonly width = new HookWidth(sensitiveHostPatterns(this.rules));

  /**
   * Every request of this browser (or context) reaches an egress proxy judged by this guard: its WebSocket
   * handshakes and messages are judged there, so no socket route is set on its pages (watchDocuments).
   */
  behindEgressProxy(target: Browser | BrowserContext): void {
    this.proxied.add(target);
  }

  private isProxied(page: Page): boolean {
    return this.contextProxied(page.context());
  }

  private contextProxied(context: BrowserContext): boolean {
    const browser = context.browser();
    return this.proxied.has(context) || (browser !== null && this.proxied.has(browser));
  }

  /**
   * The session holds something a request could carry off (a sensitive read, a typed secret): from now on every hook
   * pauses every request (browser/hookPatterns.ts). Each time the taint grows, and whenever a request is judged
   * with the session tainted (a read recorded elsewhere first).
   */
  override taintGrew(): void {
    super.taintGrew();
    void this.width.widen();
  }

  private widenIfTainted(): Promise<void> | undefined {
    if (this.width.wide) return undefined;
    const { tainted, secrets = [] } = this.taintView();
    return tainted.length > 0 || secrets.length > 0 ? this.width.widen() : undefined;
  }

  override async egressVerdict(request: EgressRequest): Promise<string | undefined> {
    void this.widenIfTainted();
    return super.egressVerdict(request);
  }

  /**
   * A browser tabward did not start and cannot proxy: every request it sends is paused browser-wide until judged,
   * so that an agent frame's requests are judged after its own session is gone (browser/browserFetchGate.ts).
   * Before any agent tab is opened in it.
   */
  async guardBrowser(browser: Browser): Promise<void> {
    await this.releaseBrowser(browser);
    this.gates.set(browser, await BrowserFetchGate.start(browser, this));
  }

  /** Leaving that browser: what is paused is answered first (bounded), then the browser is let go. */
  async releaseBrowser(browser: Browser, timeoutMs = 2_000): Promise<void> {
    const gate = this.gates.get(browser);
    this.gates.delete(browser);
    await gate?.close(timeoutMs);
  }

  /** Whether the browser-wide gate saw this tab opened by an agent tab or frame (its opener may be gone). */
  async isAgentTab(page: Page): Promise<boolean> {
    const gate = this.gateOf(page);
    if (!gate) return false;
    const cdp = await page.context().newCDPSession(page);
    try {
      const { targetInfo } = (await cdp.send('Target.getTargetInfo')) as { targetInfo: { targetId: string } };
      return gate.isAgentTarget(targetInfo.targetId);
    } finally {
      await cdp.detach().catch(swallowing('isAgentTab: cdp.detach()'));
    }
  }

  /**
   * Closes the windows `page` opened (and theirs) that are still open, told or not yet told to Playwright: a recipe
   * run's end (browser/recipePage.ts). Resolves with a function that does it, read while the tab is still open.
   */
  async windowsCloser(page: Page): Promise<(() => Promise<void>) | undefined> {
    const gate = this.gateOf(page);
    if (!gate) return undefined;
    const cdp = await page.context().newCDPSession(page);
    try {
      const { targetInfo } = (await cdp.send('Target.getTargetInfo')) as { targetInfo: { targetId: string } };
      return () => gate.closeWindowsOpenedFrom(targetInfo.targetId);
    } finally {
      await cdp.detach().catch(swallowing('windowsCloser: cdp.detach()'));
    }
  }

  protected gateOf(page: Page): BrowserFetchGate | undefined {
    const browser = page.context().browser();
    return browser ? this.gates.get(browser) : undefined;
  }

  /** Every page of a context the agent owns (isolated and remote browsers). */
  async watchContext(context: BrowserContext): Promise<void> {
    // Behind the proxy no route pauses every request: the hooks pause what needs them (browser/hookPatterns.ts)
    // and a popup's first navigation is caught browser-wide (browser/popupDocuments.ts).
    const pipe = pipeOfContext(context);
    if (this.contextProxied(context) && pipe) {
      const gate = await PopupDocuments.start(pipe, {
        refused: (method, url) =>
          this.record(undefined, method, url, 'a form posting into a new window cannot be watched'),
        opening: (judged) => this.holdRunningActions(judged),
      });
      this.popupGates.set(context, gate);
      context.once('close', () => void gate.close());
    } else await context.route('**/*', this.handler);
    context.on('page', (page) => {
      this.seen(page);
      void page.opener().then(
        (opener) => opener && this.openers.set(page, opener),
        () => undefined,
      );
      void this.startPopup(page).catch(swallowing('watchContext: this.startPopup(page)'));
    });
    // A tab already open (the blank one a browser of tabward's own starts with) is first seen now, before any
    // action: unseen, every later new_page would count as the action that opened it, its page's requests held for
    // that call's human as the new tab's doing.
    for (const page of context.pages()) this.seen(page);
    await Promise.all(
      context.pages().map((page) => this.ready(page).catch(swallowing('watchContext: ready'))),
    );
  }

  /** One agent tab in the user's Chrome, where the user's own tabs are not the agent's to police. */
  async watchPage(page: Page): Promise<void> {
    this.seen(page);
    await page.route('**/*', this.handler);
    await this.ready(page);
  }

  /** Resolves once the tab's document requests are judged hop by hop: await it before navigating the tab. */
  ready(page: Page): Promise<void> {
    let watching = this.documentWatches.get(page);
    if (!watching) {
      watching = this.watchDocuments(page).then(() => {
        this.watched.add(page);
      });
      this.documentWatches.set(page, watching);
    }
    return watching;
  }

  protected isWatched(page: Page | undefined): boolean {
    return page !== undefined && this.watched.has(page);
  }

  /**
   * Playwright's routes see only the first request of a redirect chain. Every request of the tab (and of its
   * out-of-process frames) is also paused here, over CDP: a redirect hop (a 302 into a sensitive page, a 307 that
   * re-posts there, a hop to tabward's own port), every document request (meta refresh, location=) and any
   * request the route did not see is judged like a first request.
   */
  private async watchDocuments(page: Page): Promise<void> {
    page.on('framenavigated', (frame) => {
      if (frame !== page.mainFrame() && !this.onThePipe.has(page)) void this.watchFrame(page, frame);
      else this.forgetDocument(page);
    });
    // Both are set up side by side (a new tab's first navigation waits for them): the tab is navigated only once
    // ready() resolves, that is once both are in place.
    const hops = async () => {
      if (await this.hopsOnThePipe(page)) return;
      const cdp = await page.context().newCDPSession(page);
      const tree = await this.noteFrames(cdp, page, true);
      await this.interceptHops(cdp, page, tree.frame.id);
      this.popupGates.get(page.context())?.watching(tree.frame.id);
    };
    // No route decides a passive load behind the proxy: a settle waits for it no longer than for its being seen.
    if (this.isProxied(page) && !this.gateOf(page)) decidedAtSight(page);
    // A WebSocket's handshake is a request like any other (its URL can carry data); neither routes nor Fetch
    // pause it. Behind tabward's egress proxy it is judged there, as a request no hook tied to a tab (no human is
    // asked; what a hook would hold is refused): Playwright's socket route puts a script and a binding into every
    // document of every frame, which every page load waits for. With no proxy, it is judged here, and refused
    // or let through to its server.
    const sockets =
      this.isProxied(page) && !this.gateOf(page)
        ? undefined
        : page.routeWebSocket(/.*/, (socket) => void this.onWebSocket(page, socket));
    await Promise.all([hops(), sockets]);
  }

  /**
   * Behind the proxy, on a browser tabward started: the tab's hook, and its out-of-process frames', are sessions of
   * tabward's own on the pipe (browser/pipeHooks.ts). Resolves false where there is no such pipe (the hook is then
   * Playwright's session, as with no proxy).
   */
  private async hopsOnThePipe(page: Page): Promise<boolean> {
    const pipe = pipeOfContext(page.context());
    if (!pipe || !this.isProxied(page) || this.gateOf(page)) return false;
    this.onThePipe.add(page);
    const mainFrameId = await hookTabOnThePipe(pipe, page, this.width, (session, event, mainFrame) =>
      this.onPaused(session, event, mainFrame, page),
    );
    this.targetIds.set(page, mainFrameId);
    this.popupGates.get(page.context())?.watching(mainFrameId);
    return true;
  }

  private async interceptHops(cdp: CDPSession, page: Page, mainFrameId: string | undefined): Promise<void> {
    cdp.on('Fetch.requestPaused', (event) => {
      const paused = event as PausedRequest;
      // A frame that sends is the agent's: its requests stay so at the browser-wide gate once its session is gone.
      this.gateOf(page)?.noteAgentFrame(
        paused.frameId,
        paused.resourceType === 'Document' ? paused.request.url : undefined,
      );
      const stage =
        paused.responseStatusCode !== undefined || paused.responseErrorReason !== undefined
          ? answerDocumentResponse(cdp, paused, this.responseDownloads?.(page)).then((refused) => {
              if (refused) this.record(page, paused.request.method, paused.request.url, refused);
            })
          : this.onPaused(hookSessionOf(cdp), paused, mainFrameId, page);
      void stage.catch(swallowing('interceptHops: a paused request’s stage (tab or session gone)'));
    });
    // With no egress proxy, the agent's documents also pause at their response (browser/documentResponses.ts), and
    // its tabs and frames bypass service workers: a document a service worker answers (made up, or passed on from
    // its own fetch) reaches no response stage, and kept the headers that hand the browser reports (measured).
    const gated = this.gateOf(page) !== undefined;
    const responses: FetchPattern[] = gated
      ? [{ urlPattern: '*', resourceType: 'Document', requestStage: 'Response' }]
      : [];
    if (gated) {
      // A socket the page opened past the socket route, or a message it sent on one, is seen here as it goes.
      watchNativeSockets(
        cdp,
        (url) => this.socketMessageVerdict({ method: 'WEBSOCKET', url, tag: undefined, navigation: false }),
        (what, url, reason) => this.wentPastHooks(page, cdp, what, url, reason),
      );
      // So is a speculative load (speculation rules) Chrome makes for the page past every hook.
      await watchSpeculativeLoads(
        cdp,
        (url) => this.speculativeLoadVerdict(url),
        (what, url, reason) => this.wentPastHooks(page, cdp, what, url, reason),
      );
      // The bypass holds only while the session's network domain is on (measured); nothing of it is buffered.
      await cdp.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
      await cdp.send('Network.setBypassServiceWorker', { bypass: true });
    }
    await this.width.enable(page, hookSessionOf(cdp), this.isProxied(page) && !gated, responses);
  }

  /**
   * Where there is a browser-wide gate: every frame of this session's tree (and each frame attached to it later) is
   * the agent's, so that a frame that never sent a request while it lived is still known when it tears down.
   * Resolves with the tree's root.
   */
  private async noteFrames(cdp: CDPSession, page: Page, tab: boolean): Promise<FrameTree> {
    const { frameTree } = (await cdp.send('Page.getFrameTree')) as { frameTree: FrameTree };
    const gate = this.gateOf(page);
    if (!gate) return frameTree;
    const root = frameTree.frame.id;
    if (tab) gate.noteAgentTab(root, frameTree.frame.url);
    const walk = (tree: FrameTree, within: string) => {
      gate.noteAgentFrame(tree.frame.id, tree.frame.url, within);
      for (const child of tree.childFrames ?? []) walk(child, tree.frame.id);
    };
    walk(frameTree, root);
    cdp.on('Page.frameAttached', (event) => {
      const { frameId, parentFrameId } = event as { frameId: string; parentFrameId?: string };
      gate.noteAgentFrame(frameId, undefined, parentFrameId ?? root);
    });
    cdp.on('Page.frameNavigated', (event) => {
      const { frame } = event as { frame: { id: string; parentId?: string; url: string } };
      gate.noteAgentFrame(frame.id, frame.url, frame.parentId ?? root);
    });
    // A link opened in a new tab (a modifier click): Chromium gives that tab no opener (browserFetchGate.ts).
    cdp.on('Page.frameRequestedNavigation', (event) => {
      const { frameId, disposition, url } = event as { frameId: string; disposition?: string; url: string };
      if (disposition === 'newTab' || disposition === 'newWindow') gate.expectWindowFrom(frameId, url);
    });
    await cdp.send('Page.enable');
    // Attached meanwhile: read again, now that attachments are told.
    walk(((await cdp.send('Page.getFrameTree')) as { frameTree: FrameTree }).frameTree, root);
    return frameTree;
  }

  private async onPaused(
    cdp: HookSession,
    event: PausedRequest,
    mainFrameId: string | undefined,
    page: Page,
  ): Promise<void> {
    const { url, method, headers } = event.request;
    // Already judged by the route (its token on it): passed on as it is, for the choke point to spend the token.
    if (this.tags.judged(headers[tagHeader], method, url)) {
      await cdp.send('Fetch.continueRequest', { requestId: event.requestId });
      return;
    }
    // A redirect hop, and a request the route never saw, are only seen here.
    const document = event.resourceType === 'Document';
    const mainFrame = document && event.frameId === mainFrameId;
    const origin = headerOf(headers, 'origin');
    const facts = {
      method,
      url,
      document,
      mainFrame,
      hop: event.redirectedRequestId !== undefined,
      ...(origin !== undefined ? { origin } : {}),
      ...bodyOf(event.request),
      ...(event.networkId !== undefined ? { chain: event.networkId } : {}),
    };
    const reason = await this.verdict(facts, page);
    if (mainFrame) {
      this.firstLoadJudged.get(page)?.();
      this.firstLoadJudged.delete(page);
    }
    // A read this request's verdict recorded widens every hook before its answer reaches the page.
    await this.widenIfTainted();
    if (!reason) {
      const tagged = { ...headers, [tagHeader]: this.tags.issue(method, url, this.taintEpoch) };
      await cdp.send('Fetch.continueRequest', {
        requestId: event.requestId,
        headers: Object.entries(tagged).map(([name, value]) => ({ name, value })),
      });
      return;
    }
    this.record(page, method, url, reason);
    await cdp.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' });
  }

  /** Names a page by the tab id the guard knows it as (TrackedPage ids, a recipe run's id). */
  label(page: Page, scope: string): void {
    this.scopes.set(page, scope);
  }

  /**
   * A blank tab tabward opened ahead of need (BrowserSession.warmUp), handed out now by new_page: from here on it is
   * judged as a tab first seen now, so that the approved new_page's pass and settling cover it as they cover a tab
   * opened during the call. Only for a tab nothing has used: no page, no call has reached it.
   */
  treatAsNew(page: Page): void {
    this.seenAt.set(page, ++this.seq);
  }

  /** A cross-site iframe runs in a process of its own, with requests its tab's session never sees. */
  protected watchFrame(page: Page, frame: Frame): Promise<void> {
    let watching = this.frameWatches.get(frame);
    if (!watching) {
      watching = page
        .context()
        .newCDPSession(frame)
        .then(async (frameSession) => {
          await Promise.all([
            this.gateOf(page) ? this.noteFrames(frameSession, page, false) : undefined,
            this.interceptHops(frameSession, page, undefined),
          ]);
        })
        .catch(() => {
          // In the parent's process (for now): the tab's session covers it. Asked again once it moves.
          this.frameWatches.delete(frame);
        });
      this.frameWatches.set(frame, watching);
    }
    return watching;
  }
}
