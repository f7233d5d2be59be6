// The network backstop: every request of the agent's pages is seen before it leaves. The guard judges an
// action by what the page looks like it will do; pages decide for themselves (redirects, meta refresh, script,
// a renamed button), so here the requests themselves are judged:
// - tabward's own servers (the approval page, `mcp --http`) are unreachable from the browser the agent drives;
// - a request that changes state on a sensitive page, or a top-level navigation into one, passes only when a
//   human approval covers it (core/actionPasses.ts); anything else is stopped and reported.

import type { BrowserContext, CDPSession, Page, Request, Route } from 'playwright-core';
import type { ActionPasses, PassHandle, PassSpec } from '../core/actionPasses.ts';
import type { Backstop } from '../core/callPath.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';

export interface BlockedRequest {
  readonly seq: number;
  readonly page: Page | undefined;
  readonly method: string;
  readonly url: string;
  readonly reason: string;
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

interface PausedRequest {
  readonly requestId: string;
  readonly frameId: string;
  readonly request: { readonly url: string; readonly method: string };
}

export class NetworkGuard implements Backstop {
  private readonly blocked: BlockedRequest[] = [];
  private seq = 0;
  private readonly handler = (route: Route, request: Request) => this.handle(route, request);
  private readonly documentWatches = new WeakMap<Page, Promise<void>>();

  constructor(
    private readonly rules: RuleSet,
    readonly passes: ActionPasses,
    /** Ports of tabward's own local servers; filled in as they start. */
    readonly protectedPorts: Set<number>,
  ) {}

  /** Every page of a context the agent owns (isolated and remote browsers). */
  async watchContext(context: BrowserContext): Promise<void> {
    await context.route('**/*', this.handler);
    context.on('page', (page) => void this.ready(page).catch(() => undefined));
    await Promise.all(context.pages().map((page) => this.ready(page).catch(() => undefined)));
  }

  /** One agent tab in the user's Chrome, where the user's own tabs are not the agent's to police. */
  async watchPage(page: Page): Promise<void> {
    await page.route('**/*', this.handler);
    await this.ready(page);
  }

  /** Resolves once the tab's document requests are judged hop by hop: await it before navigating the tab. */
  ready(page: Page): Promise<void> {
    let watching = this.documentWatches.get(page);
    if (!watching) {
      watching = this.watchDocuments(page);
      this.documentWatches.set(page, watching);
    }
    return watching;
  }

  /**
   * Playwright's routes see only the first request of a redirect chain. Document requests of the tab's own
   * frames are also paused here, over CDP, hop by hop (a 302 into a sensitive page, a meta refresh, location=),
   * and judged like any other. Subresources stay with the route, so this costs one pause per navigation.
   */
  private async watchDocuments(page: Page): Promise<void> {
    const cdp = await page.context().newCDPSession(page);
    const tree = (await cdp.send('Page.getFrameTree')) as { frameTree: { frame: { id: string } } };
    const mainFrameId = tree.frameTree.frame.id;
    cdp.on('Fetch.requestPaused', (event) => {
      void this.onPausedDocument(cdp, event as PausedRequest, mainFrameId, page).catch(() => undefined);
    });
    await cdp.send('Fetch.enable', {
      patterns: [{ urlPattern: '*', resourceType: 'Document', requestStage: 'Request' }],
    });
  }

  private async onPausedDocument(
    cdp: CDPSession,
    event: PausedRequest,
    mainFrameId: string,
    page: Page,
  ): Promise<void> {
    const { url, method } = event.request;
    const reason = this.judgeRequest(url, method, true, event.frameId === mainFrameId);
    if (!reason) {
      await cdp.send('Fetch.continueRequest', { requestId: event.requestId });
      return;
    }
    this.record(page, method, url, reason);
    await cdp.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' });
  }

  /** A marker: the blocks recorded after it are the ones an action caused. */
  mark(): number {
    return this.seq;
  }

  since(mark: number): BlockedRequest[] {
    return this.blocked.filter((entry) => entry.seq > mark);
  }

  /** The Backstop side of the call path: what was stopped since a mark, one line each. */
  stoppedSince(mark: number): string[] {
    return this.since(mark).map((entry) => `${entry.method} ${entry.url}: ${entry.reason}`);
  }

  /** An approval's pass for the requests its action causes (core/actionPasses.ts). */
  open(spec: PassSpec, maxMs: number): PassHandle {
    return this.passes.open(spec, maxMs);
  }

  /** Why a request must not leave, or undefined when it may. */
  judge(request: Request): string | undefined {
    return this.judgeRequest(
      request.url(),
      request.method(),
      request.isNavigationRequest(),
      isMainFrame(request),
    );
  }

  private judgeRequest(
    url: string,
    rawMethod: string,
    navigation: boolean,
    mainFrame: boolean,
  ): string | undefined {
    const port = portOf(url);
    if (port !== undefined && this.protectedPorts.has(port))
      return "it goes to one of tabward's own local servers, which the agent's browser may never reach";
    const hit = this.rules.match(url);
    if (!hit) return undefined;
    const method = rawMethod.toUpperCase();
    if (!safeMethods.has(method)) {
      if (this.passes.covers(url, 'write')) return undefined;
      return `it would change state on a sensitive page (rule ${hit.rule}) and no approval covers it`;
    }
    if (navigation && mainFrame && !this.passes.covers(url, 'navigation'))
      return `it navigates the tab to a sensitive page (rule ${hit.rule}) that no approval covers`;
    return undefined;
  }

  private record(page: Page | undefined, method: string, url: string, reason: string): void {
    this.blocked.push({ seq: ++this.seq, page, method, url, reason });
    if (this.blocked.length > 200) this.blocked.shift();
  }

  private async handle(route: Route, request: Request): Promise<void> {
    const reason = this.judgeSafely(request);
    if (!reason) {
      await route.fallback().catch(() => undefined);
      return;
    }
    this.record(pageOf(request), request.method(), request.url(), reason);
    await route.abort('blockedbyclient').catch(() => undefined);
  }

  /** A request the guard cannot judge (a detached frame, a URL that does not parse) is stopped. */
  private judgeSafely(request: Request): string | undefined {
    try {
      return this.judge(request);
    } catch (error) {
      return `it could not be judged (${String(error)})`;
    }
  }
}

function portOf(url: string): number | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.port) return Number(parsed.port);
    if (parsed.protocol === 'http:' || parsed.protocol === 'ws:') return 80;
    if (parsed.protocol === 'https:' || parsed.protocol === 'wss:') return 443;
    return undefined;
  } catch {
    return undefined;
  }
}

function isMainFrame(request: Request): boolean {
  try {
    return request.frame().parentFrame() === null;
  } catch {
    // No frame yet: a popup's first navigation, issued before its frame exists, is a top-level one. (A service
    // worker's request has no frame either, and is no navigation.)
    return request.isNavigationRequest();
  }
}

function pageOf(request: Request): Page | undefined {
  try {
    return request.frame().page();
  } catch {
    return undefined;
  }
}
