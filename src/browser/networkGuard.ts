// The network backstop: the CDP hooks over the agent's pages (a context route, a CDP Fetch pause per tab and per
// out-of-process frame) and the verdict of the choke point every request of tabward's own browsers passes
// (browser/egressProxy.ts, docs/architecture.md "The choke point"). The hooks know what only they can (which tab,
// which frame, which action is running and which human answers for it) and judge a request with all of it:
// - tabward's own servers (the approval page, `mcp --http`) are unreachable from the browser the agent drives;
// - a request that changes state on a sensitive page, or a top-level navigation into one, passes only under a
//   human approval's pass naming it (core/actionPasses.ts);
// - after a sensitive read, or while a page holds a typed secret, a request to a host outside the session's
//   allowed set is judged whoever sent it (core/networkHolds.ts);
// - such a request is held and put to the human of the action running in its tab; with none running, stopped.
// A request a hook let go carries a single-use token (browser/requestTags.ts); the choke point spends it. One that
// arrives there without a token was seen by no hook, and is judged there alone, where no pass and no human reach.

import type {
  BrowserContext,
  CDPSession,
  Frame,
  Page,
  Request,
  Route,
  WebSocketRoute,
} from 'playwright-core';
import type { ActionPasses, PassHandle, PassSpec } from '../core/actionPasses.ts';
import type { Attendance, Backstop, TaintView, UntiedStop } from '../core/callPath.ts';
import { type Attendant, type RequestFacts, taintReason, webAddress } from '../core/networkHolds.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import { settledWithin } from './deadline.ts';
import { type EgressPolicy, type EgressRequest, tagHeader } from './egressProxy.ts';
import { RequestTags } from './requestTags.ts';

export interface BlockedRequest {
  readonly seq: number;
  readonly page: Page | undefined;
  readonly method: string;
  readonly url: string;
  readonly reason: string;
}

/** A request the choke point let out that the audit names: a write into a sensitive page, a send after a read. */
export interface SentRequest {
  readonly seq: number;
  readonly line: string;
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How long after an action its tab's requests still count as its doing. */
const graceMs = 2_000;
/** Data-carrying actions remembered per document (a script's timers go on after it returns). */
const maxLingering = 20;

interface AttendantEntry {
  readonly attendant: Attendant;
  readonly since: number;
  readonly pending: Set<Promise<unknown>>;
  /**
   * Set when the action returned: nobody is asked for it any more. A data-carrying action in a known tab stays
   * until its document goes (what its script scheduled still carries its data); any other for the grace.
   */
  endedAt: number | undefined;
}

interface PausedRequest {
  readonly requestId: string;
  readonly frameId: string;
  readonly resourceType: string;
  /** Set when this request is a redirect hop of an earlier one. */
  readonly redirectedRequestId?: string;
  readonly request: {
    readonly url: string;
    readonly method: string;
    readonly headers: Readonly<Record<string, string>>;
  };
}

/**
 * Whether the page that sent a request can read its answer: a read (GET, HEAD, OPTIONS: counted as before,
 * whoever sent it), a document, or a write from the same origin. A write another site's page sent (a no-cors POST)
 * gets an opaque answer, unless the sensitive site allows that origin by CORS (not known here). With neither the
 * sender nor its tab known (a worker's request), readable: fail closed.
 */
function answerReadable(facts: RequestFacts, page: Page | undefined): boolean {
  if (safeMethods.has(facts.method.toUpperCase()) || facts.document) return true;
  const sender = facts.frameUrl ?? page?.url();
  if (!sender) return true;
  try {
    return new URL(sender).origin === new URL(facts.url).origin;
  } catch {
    return true;
  }
}

interface TaintWatcher {
  readonly view: () => TaintView;
  readonly recordRead: (origin: string) => void;
  readonly recordUntied: ((stop: UntiedStop) => void) | undefined;
}

export class NetworkGuard implements Backstop, EgressPolicy {
  private readonly blocked: BlockedRequest[] = [];
  private readonly sentLog: SentRequest[] = [];
  /** The tokens that tie a hook's verdict to the request the choke point sees (browser/requestTags.ts). */
  readonly tags = new RequestTags();
  /**
   * Origins of the agent's pages that hold a secret tabward typed: while one does, requests to other hosts are
   * judged as after a sensitive read (set by the session, which knows its tabs).
   */
  secretHolders: () => readonly string[] = () => [];
  private readonly reads: { seq: number; origin: string }[] = [];
  private seq = 0;
  private readonly handler = (route: Route, request: Request) => this.handle(route, request);
  private readonly documentWatches = new WeakMap<Page, Promise<void>>();
  private readonly frameWatches = new WeakMap<Frame, Promise<void>>();
  private readonly watched = new WeakSet<Page>();
  /** First addresses of popups answered with an empty page until they are watched. */
  private readonly heldPopups = new Set<string>();
  /** Which tab a page is, so that an approval's pass covers the tab it was given for and no other. */
  private readonly scopes = new WeakMap<Page, string>();
  /** When each page was first seen, so a new_page action answers for the tabs opened after it began. */
  private readonly seenAt = new WeakMap<Page, number>();
  private readonly openers = new WeakMap<Page, Page>();
  private readonly attendants: AttendantEntry[] = [];
  /**
   * The sessions judged over this backstop (one for tabward mcp; one per recipe run at once for run and serve):
   * what each has read and allowed, and where each sensitive read is told as it goes through.
   */
  private readonly taintWatchers = new Set<TaintWatcher>();

  constructor(
    private readonly rules: RuleSet,
    readonly passes: ActionPasses,
    /** Ports of tabward's own local servers; filled in as they start. */
    readonly protectedPorts: Set<number>,
  ) {}

  /** Every page of a context the agent owns (isolated and remote browsers). */
  async watchContext(context: BrowserContext): Promise<void> {
    await context.route('**/*', this.handler);
    context.on('page', (page) => {
      this.seen(page);
      void page.opener().then(
        (opener) => opener && this.openers.set(page, opener),
        () => undefined,
      );
      void this.startPopup(page).catch(() => undefined);
    });
    // A tab already open (the blank one a browser of tabward's own starts with) is first seen now, before any
    // action: unseen, every later new_page would count as the action that opened it, its page's requests held for
    // that call's human as the new tab's doing.
    for (const page of context.pages()) this.seen(page);
    await Promise.all(context.pages().map((page) => this.ready(page).catch(() => undefined)));
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

  private isWatched(page: Page | undefined): boolean {
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
      if (frame !== page.mainFrame()) void this.watchFrame(page, frame);
      else this.forgetDocument(page);
    });
    // Both are set up side by side (a new tab's first navigation waits for them): the tab is navigated only once
    // ready() resolves, that is once both are in place.
    const hops = async () => {
      const cdp = await page.context().newCDPSession(page);
      const tree = (await cdp.send('Page.getFrameTree')) as { frameTree: { frame: { id: string } } };
      await this.interceptHops(cdp, page, tree.frameTree.frame.id);
    };
    // A WebSocket's handshake is a request like any other (its URL can carry data); neither routes nor Fetch
    // pause it, so it is judged here, and refused or let through to its server.
    await Promise.all([hops(), page.routeWebSocket(/.*/, (socket) => void this.onWebSocket(page, socket))]);
  }

  private async onWebSocket(page: Page, socket: WebSocketRoute): Promise<void> {
    if (!(await this.judgeHandshake(socket.url(), page))) {
      // Its handshake reaches the choke point with no header of ours: let through there once, as judged here.
      this.tags.allowSocket(socket.url());
      socket.connectToServer();
      return;
    }
    await socket.close({ code: 1008, reason: 'tabward stopped this connection' }).catch(() => undefined);
  }

  /**
   * A WebSocket handshake, judged by its http(s) address like any request (its URL can carry data); resolves with
   * the reason it is stopped, recorded like any other stop.
   */
  private async judgeHandshake(url: string, page: Page | undefined): Promise<string | undefined> {
    const facts = {
      method: 'WEBSOCKET',
      url: url.replace(/^ws/i, 'http'),
      document: false,
      mainFrame: false,
      hop: false,
      ...(page ? { frameUrl: page.url() } : {}),
    };
    const reason = await this.verdict(facts, page).catch(
      (error) => `it could not be judged (${String(error)})`,
    );
    if (reason) this.record(page, 'WEBSOCKET', url, reason);
    return reason;
  }

  /** A new document in a tab: the data-carrying actions that ran in the old one are over. */
  private forgetDocument(page: Page): void {
    const scope = this.scopes.get(page);
    if (scope === undefined) return;
    for (const entry of [...this.attendants])
      if (entry.attendant.scope === scope && entry.endedAt !== undefined) this.drop(entry);
  }

  private drop(entry: AttendantEntry): void {
    const at = this.attendants.indexOf(entry);
    if (at >= 0) this.attendants.splice(at, 1);
  }

  private async interceptHops(cdp: CDPSession, page: Page, mainFrameId: string | undefined): Promise<void> {
    cdp.on('Fetch.requestPaused', (event) => {
      void this.onPaused(cdp, event as PausedRequest, mainFrameId, page).catch(() => undefined);
    });
    await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] });
  }

  private async onPaused(
    cdp: CDPSession,
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
    const facts = { method, url, document, mainFrame, hop: event.redirectedRequestId !== undefined };
    const reason = await this.verdict(facts, page);
    if (!reason) {
      const tagged = { ...headers, [tagHeader]: this.tags.issue(method, url) };
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

  /** A marker: the blocks recorded after it are the ones an action caused. */
  mark(): number {
    return this.seq;
  }

  since(mark: number, scope?: string): BlockedRequest[] {
    return this.blocked.filter(
      (entry) =>
        entry.seq > mark &&
        (scope === undefined || (entry.page !== undefined && this.scopes.get(entry.page) === scope)),
    );
  }

  /** The Backstop side of the call path: what was stopped since a mark (in one tab, when given), one line each. */
  stoppedSince(mark: number, scope?: string): string[] {
    return this.since(mark, scope).map((entry) => `${entry.method} ${entry.url}: ${entry.reason}`);
  }

  /** An approval's pass for the requests its action causes (core/actionPasses.ts). */
  open(spec: PassSpec, maxMs: number): PassHandle {
    return this.passes.open(spec, maxMs, this.seq);
  }

  /**
   * A session's taint, until the returned function is called. A read is told to every session watching: which of
   * two recipe runs at once a request belongs to is not known here, and tainting both fails closed.
   */
  watchTaint(
    view: () => TaintView,
    recordRead: (origin: string) => void,
    recordUntied?: (stop: UntiedStop) => void,
  ): () => void {
    const watcher = { view, recordRead, recordUntied };
    this.taintWatchers.add(watcher);
    return () => this.taintWatchers.delete(watcher);
  }

  /** For a request no action answers for: read by any session, allowed by every one. */
  private taintView(): TaintView {
    const views = [...this.taintWatchers].map((watcher) => watcher.view());
    const tainted = [...new Set(views.flatMap((view) => view.tainted))];
    const [first, ...others] = views;
    const allowed = new Set(
      [...(first?.allowed ?? [])].filter((host) => others.every((view) => view.allowed.has(host))),
    );
    return { tainted, allowed };
  }

  /**
   * The Backstop side of the call path: the running action's human answers for its tab's requests. Once the
   * action is over its tab's requests are still its doing for a short grace (a fetch right after a dialog
   * closes); with nobody left to ask, what would be held then is refused.
   */
  attend(attendant: Attendant): Attendance {
    const entry: AttendantEntry = { attendant, since: this.seq, pending: new Set(), endedAt: undefined };
    this.attendants.push(entry);
    return {
      settled: async () => {
        while (entry.pending.size > 0) await Promise.allSettled([...entry.pending]);
      },
      detach: () => {
        entry.endedAt = Date.now();
        const { scope, carriesData } = entry.attendant;
        if (carriesData && scope !== undefined) {
          const lingering = this.attendants.filter(
            (other) => other.attendant.scope === scope && other.endedAt,
          );
          for (const old of lingering.slice(0, Math.max(0, lingering.length - maxLingering))) this.drop(old);
          return;
        }
        setTimeout(() => this.drop(entry), graceMs).unref();
      },
    };
  }

  /**
   * Why a request must not leave, or undefined when it may. A request a rule or the taint would stop is held
   * for the human of the action running in its tab, when there is one.
   */
  private async verdict(facts: RequestFacts, page: Page | undefined): Promise<string | undefined> {
    const reason = await this.judge(facts, page);
    // Whatever lets a request to a sensitive page go (a read, a pass, a human's yes), its answer is within the
    // agent's reach now: a token page's POST a human approved taints like a GET.
    if (reason === undefined && this.rules.match(facts.url) && answerReadable(facts, page))
      this.noteSensitiveRead(facts.url);
    return reason;
  }

  /** The verdict itself: a rule, a pass, the taint, a human asked through the action running in the tab. */
  private async judge(facts: RequestFacts, page: Page | undefined): Promise<string | undefined> {
    const scope = page ? this.scopes.get(page) : undefined;
    const seenAt = page ? this.seenAt.get(page) : undefined;
    const ruled = this.judgeRequest(facts, { scope, seenAt });
    if (ruled?.final) return ruled.reason;
    // The actions this request may be the doing of; only one still running can be asked.
    const candidates = this.attendantsFor(page, scope);
    const asker = candidates.findLast((candidate) => candidate.endedAt === undefined);
    const nobody =
      candidates.length > 0
        ? '; it came after the action had returned, with nobody left to ask'
        : page
          ? "; no action of the agent's was running in its tab to ask about it"
          : " (from a worker, with no action of the agent's behind it)";
    if (ruled) return asker ? this.hold(asker, facts, ruled.reason, false) : `${ruled.reason}${nobody}`;
    // After a sensitive read (or while a page holds a typed secret) every request of the agent's pages to a host
    // outside the allowed set is judged, whoever caused it: a page that watched the agent read may send what it saw.
    const tainted =
      candidates.map((candidate) => candidate.attendant.taintReason(facts)).find(Boolean) ??
      this.sessionTaint(facts);
    if (!tainted) return undefined;
    return asker ? this.hold(asker, facts, tainted, true) : `${tainted}${nobody}`;
  }

  /**
   * The session's own taint, for any request: after a sensitive read, or while a page of the agent's holds a typed
   * secret, a request to a host that is neither one read, nor one holding the secret, nor one the human allowed.
   */
  private sessionTaint(facts: RequestFacts): string | undefined {
    const { tainted, allowed } = this.taintView();
    const holders = this.secretHolders();
    return taintReason(facts, {
      tainted: [...tainted, ...holders],
      allowed,
      acting: [],
      navigationOnly: false,
    });
  }

  private async hold(
    entry: AttendantEntry,
    facts: RequestFacts,
    reason: string,
    taint: boolean,
  ): Promise<string | undefined> {
    if (entry.endedAt !== undefined)
      return `${reason}; it came after the action had returned, with nobody left to ask`;
    // Each request its own question: one yes lets exactly one request go.
    const asked = entry.attendant.ask(facts, reason, taint).catch(() => false);
    entry.pending.add(asked);
    void asked.finally(() => entry.pending.delete(asked));
    return (await asked) ? undefined : `${reason}; the human did not let it go`;
  }

  /**
   * The choke point's verdict (browser/egressProxy.ts). A request a hook judged carries its token and goes as that
   * hook decided. One with none was judged by no hook (a frame tearing down after its session ended, a fetchLater,
   * the browser process's own fetches, a worker's socket): judged here alone, where no pass and no human can reach.
   */
  async egressVerdict(request: EgressRequest): Promise<string | undefined> {
    const socket = request.method === 'WEBSOCKET';
    if (
      socket ? this.tags.spendSocket(request.url) : this.tags.spend(request.tag, request.method, request.url)
    )
      return undefined;
    const facts: RequestFacts = {
      method: request.method,
      url: request.url.replace(/^ws/i, 'http'),
      document: request.navigation,
      mainFrame: request.navigation,
      hop: false,
    };
    const untied =
      "; no hook of tabward's could tie it to a tab and an action (a frame tearing down, a worker, the browser itself), so nobody can be asked";
    const ruled = this.judgeRequest(facts, { untied: true });
    const tainted = ruled ? undefined : this.sessionTaint(facts);
    const reason = ruled?.final
      ? ruled.reason
      : (ruled?.reason ?? tainted) && `${ruled?.reason ?? tainted}${untied}`;
    if (reason) {
      // Told to no tab (none sent it that a hook saw): an event of its own in every watching session's audit.
      for (const watcher of this.taintWatchers)
        watcher.recordUntied?.({ method: request.method, url: request.url, reason });
      return reason;
    }
    if (this.rules.match(facts.url) && answerReadable(facts, undefined)) this.noteSensitiveRead(facts.url);
    return undefined;
  }

  /** A message of an open WebSocket: after a sensitive read a socket opened before may not carry it off. */
  socketMessageVerdict(request: EgressRequest): string | undefined {
    const facts = {
      method: 'WEBSOCKET',
      url: request.url.replace(/^ws/i, 'http'),
      document: false,
      mainFrame: false,
      hop: false,
    };
    const tainted = this.sessionTaint(facts);
    return (
      tainted &&
      `${tainted}; the socket was opened before and its messages are not judged one by one, so it is closed`
    );
  }

  socketStopped(request: EgressRequest, reason: string): void {
    for (const watcher of this.taintWatchers)
      watcher.recordUntied?.({ method: 'WEBSOCKET MESSAGE', url: request.url, reason });
  }

  /** What left that the audit names: writes into sensitive pages, and requests to other hosts after a read. */
  egressSent(request: EgressRequest, status: number): void {
    const url = request.url.replace(/^ws/i, 'http');
    const write = !safeMethods.has(request.method) && this.rules.match(url) !== undefined;
    const crossing = this.sessionTaint({
      method: request.method,
      url,
      document: false,
      mainFrame: false,
      hop: false,
    });
    if (!write && !crossing && !(request.method !== 'GET' && this.taintView().tainted.length > 0)) return;
    const answer = status === 0 ? 'no answer (the connection failed)' : `answered ${status}`;
    this.sentLog.push({ seq: ++this.seq, line: `${request.method} ${request.url}: sent, ${answer}` });
    if (this.sentLog.length > 200) this.sentLog.shift();
  }

  /** "METHOD URL: sent, answered N" for each such request that left since the mark. */
  sentSince(mark: number): string[] {
    return this.sentLog.filter((entry) => entry.seq > mark).map((entry) => entry.line);
  }

  /**
   * The actions a page's request may be the doing of, oldest first: those of its tab (and of the tab that
   * opened it) still running, in their grace or lingering on its document, and the latest new_page begun
   * before the page appeared.
   */
  private attendantsFor(page: Page | undefined, scope: string | undefined): AttendantEntry[] {
    const opener = page ? this.openers.get(page) : undefined;
    const scopes = [scope, opener ? this.scopes.get(opener) : undefined].filter((id) => id !== undefined);
    const firstSeen = page ? (this.seenAt.get(page) ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY;
    const creator = this.attendants.findLast(
      (entry) => entry.attendant.scope === undefined && firstSeen > entry.since,
    );
    return this.attendants.filter(
      (entry) =>
        entry.attendant.live() &&
        (entry === creator ||
          (entry.attendant.scope !== undefined && scopes.includes(entry.attendant.scope))),
    );
  }

  private seen(page: Page): void {
    if (!this.seenAt.has(page)) this.seenAt.set(page, ++this.seq);
  }

  private judgeRequest(
    facts: RequestFacts,
    where: { scope?: string | undefined; seenAt?: number | undefined; untied?: boolean },
  ): { reason: string; final?: true } | undefined {
    const { url } = facts;
    if (webAddress(url) && !parses(url))
      return { reason: 'its address cannot be read, so it cannot be judged', final: true };
    const port = portOf(url);
    if (port !== undefined && this.protectedPorts.has(port))
      return {
        reason: "it goes to one of tabward's own local servers, which the agent's browser may never reach",
        final: true,
      };
    const hit = this.rules.match(url);
    if (!hit) return undefined;
    const method = facts.method.toUpperCase();
    // A request no hook tied to a tab rides no pass: a pass is for requests of the tab its human was asked about.
    const covered = (kind: 'write' | 'navigation') =>
      !where.untied && this.passes.covers(url, kind, where.scope, where.seenAt);
    if (!safeMethods.has(method)) {
      if (covered('write')) return undefined;
      return {
        reason: `it would change state on a sensitive page (rule ${hit.rule}) and no approval covers it`,
      };
    }
    if (facts.document && facts.mainFrame && !covered('navigation'))
      return {
        reason: `it navigates the tab to a sensitive page (rule ${hit.rule}) that no approval covers`,
      };
    return undefined;
  }

  /**
   * A request to a sensitive page that goes through (a script's fetch of a settings page from another page of the
   * same site, say) brings its content within the agent's reach: the session is tainted by it at once, whenever it
   * comes (during an action, after one returned, between calls), and the action running is told (its holds).
   */
  private noteSensitiveRead(url: string): void {
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      return; // an unparsable URL matched no rule
    }
    this.reads.push({ seq: ++this.seq, origin });
    if (this.reads.length > 200) this.reads.shift();
    for (const watcher of this.taintWatchers) watcher.recordRead(origin);
  }

  /** Origins of the sensitive pages requested since the mark. */
  sensitiveReadsSince(mark: number): string[] {
    return [...new Set(this.reads.filter((entry) => entry.seq > mark).map((entry) => entry.origin))];
  }

  private record(page: Page | undefined, method: string, url: string, reason: string): void {
    this.blocked.push({ seq: ++this.seq, page, method, url, reason });
    if (this.blocked.length > 200) this.blocked.shift();
  }

  private async handle(route: Route, request: Request): Promise<void> {
    const headers = request.headers();
    // Judged already by the tab's CDP session (its token on it): the choke point spends the token.
    if (this.tags.judged(headers[tagHeader], request.method(), request.url())) {
      await route.fallback().catch(() => undefined);
      return;
    }
    const reason = await this.judgeSafely(request);
    if (!reason) {
      if (request.isNavigationRequest() && isMainFrame(request) && !this.isWatched(pageOf(request))) {
        await this.popupFirstNavigation(route, request);
        return;
      }
      // Before a navigation goes on, the page (and an out-of-process frame) must have its hops watched: an
      // iframe's request may redirect before a watch set up later would see it.
      if (request.isNavigationRequest()) await this.hopsWatchedFor(request);
      const tag = this.tags.issue(request.method(), request.url());
      await route.fallback({ headers: { ...headers, [tagHeader]: tag } }).catch(() => undefined);
      return;
    }
    this.record(pageOf(request), request.method(), request.url(), reason);
    await route.abort('blockedbyclient').catch(() => undefined);
  }

  private async hopsWatchedFor(request: Request): Promise<void> {
    const page = pageOf(request);
    if (!page) return;
    const frame = request.frame();
    const watches = [this.ready(page), ...(frame === page.mainFrame() ? [] : [this.watchFrame(page, frame)])];
    await settledWithin(Promise.all(watches), 2_000);
  }

  /** A cross-site iframe runs in a process of its own, with requests its tab's session never sees. */
  private watchFrame(page: Page, frame: Frame): Promise<void> {
    let watching = this.frameWatches.get(frame);
    if (!watching) {
      watching = page
        .context()
        .newCDPSession(frame)
        .then((frameSession) => this.interceptHops(frameSession, page, undefined))
        .catch(() => {
          // In the parent's process (for now): the tab's session covers it. Asked again once it moves.
          this.frameWatches.delete(frame);
        });
      this.frameWatches.set(frame, watching);
    }
    return watching;
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
      await route.abort('blockedbyclient').catch(() => undefined);
      return;
    }
    this.heldPopups.add(request.url());
    const body = '<!doctype html><title>Opening…</title>';
    await route
      .fulfill({ status: 200, contentType: 'text/html', headers: { 'cache-control': 'no-store' }, body })
      .catch(() => undefined);
  }

  /** A new page: watched first; a popup held at its first address then goes there for real. */
  private async startPopup(page: Page): Promise<void> {
    await this.ready(page);
    const url = page.url();
    if (!this.heldPopups.delete(url)) return;
    await page.evaluate('location.replace(location.href)').catch(() => undefined);
  }

  /** A request the guard cannot judge (a detached frame, a URL that does not parse) is stopped. */
  private async judgeSafely(request: Request): Promise<string | undefined> {
    try {
      const document = request.isNavigationRequest();
      const facts = {
        method: request.method(),
        url: request.url(),
        document,
        mainFrame: document && isMainFrame(request),
        hop: request.redirectedFrom() !== null,
        ...initiatorUrlOf(request),
      };
      return await this.verdict(facts, pageOf(request));
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

/** The document that made the request: its frame's, or for a frame's own navigation, the frame holding it. */
function initiatorUrlOf(request: Request): { frameUrl?: string } {
  try {
    const frame = request.frame();
    if (!request.isNavigationRequest()) return { frameUrl: frame.url() };
    const parent = frame.parentFrame();
    return parent ? { frameUrl: parent.url() } : {};
  } catch {
    return {};
  }
}

function parses(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

function pageOf(request: Request): Page | undefined {
  try {
    return request.frame().page();
  } catch {
    return undefined;
  }
}
