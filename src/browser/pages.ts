// The tabs tabward knows about: a stable id per tab (p1, p2, ... never reused), who opened it, which
// document it shows, its open dialog, crash state, the main document's HTTP status, the navigations it sent,
// and the refs of its last snapshot. A tab whose dialog vanished with the frame that opened it is retired
// (see watchDialogs); the ids of tabs of a browser that is gone are remembered, to say so.

import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserContext, CDPSession, Dialog, Frame, Locator, Page, Request } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import { settledWithin, withDeadline } from './deadline.ts';
import type { DownloadKeeper } from './downloads.ts';
import type { ElementAddress } from './frameScopes.ts';
import { IsolatedReads } from './isolatedReads.ts';
import { noteLoadedUrl } from './loadedUrls.ts';
import { PageActivity } from './pageActivity.ts';
import { RendererAnnouncements } from './rendererAnnouncements.ts';

export interface RefInfo {
  readonly role: string;
  readonly name: string;
  /** Where the element is: its document and node (the agent sees a short ref instead). */
  readonly target: ElementAddress;
}

export class TrackedPage {
  documentSeq = 0;
  status: number | undefined;
  dialog: Dialog | undefined;
  crashed = false;
  closed = false;
  refs = new Map<string, RefInfo>();
  /** Playwright ref → the short ref the agent sees, for the current document. */
  shortRefs = new Map<string, string>();
  /** The refs a snapshot of this document actually showed the agent: only these may be acted on. */
  handedOut = new Set<string>();
  refsDocumentSeq = -1;
  private idleWork: NodeJS.Timeout | undefined;
  /** The document Playwright's script was last prepared in (prepareActions). */
  private preparedDocumentSeq = -1;
  /** The fields a secret was typed into, in the document `secretDocumentSeq`. */
  secretFields = new Set<Locator>();
  secretDocumentSeq = -1;
  /** URLs whose document this tab loaded with a POST: reloading or going back to them posts again. */
  readonly postedUrls = new Set<string>();
  /** Why the tab may no longer be used at all (set once, never cleared). */
  retired: string | undefined;
  /** Told when the tab is retired (the registry stops listing it). */
  onRetire: (() => void) | undefined;
  /** Main-frame navigation requests sent so far, for "what did this action send" (see navigationsSince). */
  navigationSeq = 0;
  private readonly sent: { seq: number; request: Request }[] = [];
  /** Requests in flight, for settling after an action (see settle). */
  readonly activity: PageActivity;
  /** What the renderer says it started, on tabward's own session of the tab (see settle). */
  readonly announcements: RendererAnnouncements;
  /** tabward's own CDP session of the tab: dialogs' frames, the announcements, tabward's own reads. */
  private readonly ownSession: Promise<CDPSession | undefined>;
  private readonly isolatedReads: IsolatedReads;
  private interruptReject: ((error: TabwardError) => void) | undefined;
  private readonly navigations = new Set<Request>();
  /** The frame (CDP id) of the dialog open now, as Chromium reported it. */
  private dialogFrameId: string | undefined;
  interrupted: Promise<never>;

  constructor(
    readonly id: string,
    readonly page: Page,
    public ownedByAgent: boolean,
  ) {
    this.interrupted = this.armInterrupt();
    this.activity = new PageActivity(page);
    this.ownSession = page
      .context()
      .newCDPSession(page)
      .catch(() => undefined);
    this.announcements = new RendererAnnouncements(this.ownSession);
    this.isolatedReads = new IsolatedReads(this.ownSession);
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) this.documentSeq++;
    });
    page.on('response', (response) => {
      const request = response.request();
      if (!request.isNavigationRequest()) return;
      const frame = safeFrame(request);
      if (frame) noteLoadedUrl(frame, response.url());
      if (frame === page.mainFrame()) this.status = response.status();
    });
    page.on('request', (request) => {
      if (!request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
      this.navigations.add(request);
      this.sent.push({ seq: ++this.navigationSeq, request });
      if (this.sent.length > 5) this.sent.shift();
      if (request.method() === 'POST') this.postedUrls.add(request.url());
    });
    const settled = (request: Request) => this.navigations.delete(request);
    page.on('requestfinished', settled);
    page.on('requestfailed', settled);
    page.on('dialog', (dialog) => {
      this.dialog = dialog;
      this.interrupt(new TabwardError('dialog_open', dialogText(dialog), 'Answer it with handle_dialog.'));
    });
    page.on('crash', () => {
      this.crashed = true;
      this.interrupt(
        new TabwardError('page_crashed', `Tab ${id} crashed.`, 'Open the page again with new_page.'),
      );
    });
    page.on('close', () => {
      this.closed = true;
      this.interrupt(
        new TabwardError('page_closed', `Tab ${id} was closed.`, 'Use list_pages to see open tabs.'),
      );
    });
    void this.watchDialogs().catch(() => undefined);
  }

  /**
   * Chromium (measured on 156) keeps a dialog whose frame was removed: a cross-site iframe calls alert() and
   * its parent removes it. Answering that dialog, closing the tab, or any navigation of it (the page's own
   * included) then crashes the whole browser. Playwright does not say which frame a dialog came from; CDP does.
   * Such a tab is retired: its scripts are stopped (it cannot navigate itself) and tabward never touches it
   * again; it goes when the browser closes.
   */
  private async watchDialogs(): Promise<void> {
    const cdp = await this.ownSession;
    if (!cdp) return;
    cdp.on('Page.javascriptDialogOpening', (event: { frameId?: string }) => {
      this.dialogFrameId = event.frameId;
    });
    cdp.on('Page.frameDetached', (event: { frameId: string; reason?: string }) => {
      if (event.reason === 'remove' && event.frameId === this.dialogFrameId) void this.retire(cdp);
    });
    await cdp.send('Page.enable');
  }

  private async retire(cdp: CDPSession): Promise<void> {
    this.dialogFrameId = undefined;
    const what = this.dialog
      ? `the ${this.dialog.type()} dialog ${JSON.stringify(this.dialog.message().slice(0, 100))}`
      : 'a dialog';
    this.retired = `Tab ${this.id} was retired: ${what} was opened by a frame the page then removed. Chromium would crash the whole browser if this tab were navigated, closed or the dialog answered, so tabward stopped its scripts and leaves it alone. It was at ${this.page.url()}.`;
    await cdp.send('Emulation.setScriptExecutionDisabled', { value: true }).catch(() => undefined);
    this.interrupt(new TabwardError('page_closed', this.retired, retiredHint));
    this.onRetire?.();
  }

  /** A promise that fails with `error()` when the main frame commits its next document; stop() when done. */
  nextDocument(error: () => TabwardError): { promise: Promise<never>; stop(): void } {
    let stop: () => void = () => undefined;
    const promise = new Promise<never>((_, reject) => {
      const onNavigated = (frame: Frame) => {
        if (frame === this.page.mainFrame()) reject(error());
      };
      this.page.on('framenavigated', onNavigated);
      stop = () => this.page.off('framenavigated', onNavigated);
    });
    promise.catch(() => undefined);
    return { promise, stop };
  }

  /** The main-frame navigations sent since `mark` (a navigationSeq), with whether each is still unanswered. */
  navigationsSince(mark: number): { method: string; url: string; pending: boolean }[] {
    return this.sent
      .filter((entry) => entry.seq > mark)
      .map(({ request }) => ({
        method: request.method(),
        url: request.url(),
        pending: this.navigations.has(request),
      }));
  }

  /** Whether the current document holds a secret typed by tabward. */
  get holdsTypedSecret(): boolean {
    return this.secretDocumentSeq === this.documentSeq && this.secretFields.size > 0;
  }

  /** Told when a secret is typed into this tab (the network backstop's taint grows). */
  onSecretTyped: (() => void) | undefined;

  /** Remembers a field a secret was typed into: screenshots mask it, scripts on the page ask first. */
  noteSecretField(field: Locator): void {
    if (this.secretDocumentSeq !== this.documentSeq) this.secretFields = new Set();
    this.secretDocumentSeq = this.documentSeq;
    this.secretFields.add(field);
    this.onSecretTyped?.();
  }

  /**
   * The history entry back (-1), reload (0) or forward (+1) would load, or undefined when there is none, and
   * whether loading it posts a form again (the entry came from a form submission this tab sent as a POST). A
   * history move is a navigation like any other and is judged by where it goes.
   */
  async historyEntry(
    offset: -1 | 0 | 1,
    timeoutMs: number,
  ): Promise<{ url: string; reposts: boolean } | undefined> {
    const read = async () => {
      const cdp = await this.page.context().newCDPSession(this.page);
      try {
        const history = (await cdp.send('Page.getNavigationHistory')) as {
          currentIndex: number;
          entries: { url: string; transitionType: string }[];
        };
        const entry = history.entries[history.currentIndex + offset];
        if (!entry) return undefined;
        const reposts = entry.transitionType === 'form_submit' && this.postedUrls.has(entry.url);
        return { url: entry.url, reposts };
      } finally {
        await cdp.detach().catch(() => undefined);
      }
    };
    return withDeadline(read(), timeoutMs, 'reading the tab history', this.interrupted);
  }

  /**
   * Stops the page's renderer, so that no unload handler runs when the tab is closed next. Its out-of-process frames
   * live in other renderers (shared with other tabs of their site, so not crashed): their scripts are switched off
   * and their requests blocked first, so that no `pagehide` beacon leaves as they are torn down. In the browsers
   * tabward starts the egress proxy stops such a request anyway; in the user's Chrome this is all there is.
   */
  async silence(timeoutMs: number): Promise<void> {
    await withDeadline(this.freezeFrames(), timeoutMs / 2, 'Stopping the frames').catch(() => undefined);
    const crash = async () => {
      const cdp = await this.page.context().newCDPSession(this.page);
      // The renderer dies before it answers: the reply never comes, the crash event does.
      void cdp.send('Page.crash').catch(() => undefined);
      await new Promise<void>((resolve) => {
        if (this.crashed || this.closed) resolve();
        this.page.once('crash', () => resolve());
        this.page.once('close', () => resolve());
      });
    };
    await withDeadline(crash(), timeoutMs, 'Stopping the page').catch(() => undefined);
  }

  private async freezeFrames(): Promise<void> {
    const frames = this.page.frames().filter((frame) => frame !== this.page.mainFrame());
    await Promise.all(
      frames.map(async (frame) => {
        // Only an out-of-process frame has a session of its own; the others die with the main renderer.
        const cdp = await this.page
          .context()
          .newCDPSession(frame)
          .catch(() => undefined);
        if (!cdp) return;
        await Promise.all([
          cdp.send('Emulation.setScriptExecutionDisabled', { value: true }),
          cdp.send('Network.enable').then(() => cdp.send('Network.setBlockedURLs', { urls: ['*'] })),
        ]).catch(() => undefined);
      }),
    );
  }

  /** What a screenshot hides: password fields in every frame, and every field a secret was typed into. */
  secretMasks(): Locator[] {
    const passwords = this.page.frames().map((frame) => frame.locator('input[type=password]'));
    const typed = this.holdsTypedSecret ? [...this.secretFields] : [];
    return [...passwords, ...typed];
  }

  /** Fails fast when the tab cannot take work right now. */
  assertUsable(): void {
    if (this.retired) throw new TabwardError('page_closed', this.retired, retiredHint);
    if (this.closed) throw new TabwardError('page_closed', `Tab ${this.id} is closed.`, 'Use list_pages.');
    if (this.crashed)
      throw new TabwardError('page_crashed', `Tab ${this.id} has crashed.`, 'Open it again with new_page.');
    if (this.dialog)
      throw new TabwardError('dialog_open', dialogText(this.dialog), 'Answer it with handle_dialog first.');
  }

  /**
   * After an action: waits for what it set off, and only that. One turn of the page's event loop lets a
   * navigation or request its handlers scheduled show itself; unless the renderer announced nothing since
   * `announcedSince` (a mark of its announcements taken before the action), a quiet window then lets what it
   * started reach the backstop; a navigation is followed until its document is parsed, and the requests sent since
   * `since` (an activity mark taken before the action) are given a brief window to answer, so that a stream or a
   * long poll never holds the agent. An action that set nothing off costs that one round trip, not a fixed delay.
   */
  async settle(timeoutMs: number, since = this.activity.mark(), announcedSince?: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const documentBefore = this.documentSeq;
    const stopped = () => this.closed || this.dialog !== undefined || Date.now() >= deadline;
    const turnMs = Math.max(1, Math.min(pageTurnMs, deadline - Date.now()));
    // A dialog the page opens meanwhile stops the turn (the page answers nothing until the dialog is answered).
    const turned = () => Promise.race([this.announcements.turn(turnMs), this.interrupted.catch(() => false)]);
    const counted = announcedSince !== undefined && !this.closed && !this.dialog && (await turned());
    if (!counted) await this.pageTurn(deadline);
    if (!counted || this.maySendUnannounced(since, announcedSince)) await this.quietWindow(deadline, stopped);
    const navigating = this.navigations.size > 0;
    while (this.navigations.size > 0 && !stopped()) await this.activity.changed(deadline - Date.now());
    if (navigating || this.documentSeq !== documentBefore)
      await this.waitForDocument(Math.max(1, deadline - Date.now()));
    const quietBy = Math.min(deadline, Date.now() + settleRequestsMs);
    let waited = false;
    while (this.activity.pendingSince(since) > 0 && !stopped() && Date.now() < quietBy) {
      waited = true;
      await this.activity.changed(quietBy - Date.now());
    }
    // The answers' handlers update the page in a task of their own.
    if (waited) await this.pageTurn(deadline);
  }

  /**
   * Whether something the action set off may still reach the backstop: the renderer announced a request, a
   * navigation or a window; a request was seen already; or the page has frames or workers whose renderers
   * announce on sessions of their own (an out-of-process frame, a worker), so that silence here proves nothing.
   */
  private maySendUnannounced(since: number, announcedSince: number): boolean {
    return (
      this.announcements.since(announcedSince) > 0 ||
      this.activity.mark() !== since ||
      this.page.frames().length > 1 ||
      this.page.workers().length > 0
    );
  }

  /**
   * A request the action set off (a click handler's fetch, a beacon) can still be on its way to the network
   * backstop when the page's next task has run: wait until no new request has started for a short while, so it is
   * held and asked about as this action's doing rather than refused as a late one. Bounded.
   */
  private async quietWindow(deadline: number, stopped: () => boolean): Promise<void> {
    const cap = Math.min(deadline, Date.now() + settleRequestsMs);
    let quietUntil = Math.min(cap, Date.now() + quietMs);
    while (Date.now() < quietUntil && !stopped()) {
      const seen = this.activity.mark();
      await this.activity.changed(quietUntil - Date.now());
      if (this.activity.mark() !== seen) quietUntil = Math.min(cap, Date.now() + quietMs);
    }
  }

  /** One task of the page's event loop (bounded: a page may have replaced setTimeout, or be navigating). */
  private async pageTurn(deadline: number): Promise<void> {
    if (this.closed || this.dialog) return;
    const ms = Math.max(1, Math.min(pageTurnMs, deadline - Date.now()));
    const turn = this.page.evaluate('new Promise((done) => setTimeout(done, 0))');
    await withDeadline(turn, ms, 'settling', this.interrupted).catch(() => undefined);
  }

  /**
   * Waits (bounded) until the current document is parsed. Polls document.readyState instead of waiting for load
   * events: a page restored from the back/forward cache fires none, and Playwright's load state then never
   * arrives.
   */
  async waitForDocument(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !this.closed && !this.dialog) {
      const state = await settledWithin(this.page.evaluate('document.readyState'), 1_000);
      if (state === 'interactive' || state === 'complete') return;
      await sleep(50);
    }
  }

  /**
   * Once the tab has been idle a moment (the agent is reading a result), starts Playwright's script in the
   * document's utility world without waiting for it: the 20 to 30 ms the document's first action (a click, a
   * fill) would otherwise spend evaluating it, done while the agent thinks instead. A call that comes sooner does
   * that work itself, as before. It reads nothing the agent sees and sends nothing; a failure (the page moved on,
   * a dialog) is of no consequence.
   */
  prepareActions(): void {
    this.stopIdleWork();
    // Once a document is enough: the script stays for the document's life.
    if (this.preparedDocumentSeq === this.documentSeq) return;
    this.idleWork = setTimeout(() => {
      this.idleWork = undefined;
      if (this.closed || this.dialog || this.crashed || this.retired) return;
      this.preparedDocumentSeq = this.documentSeq;
      void this.page
        .locator(':root')
        .count()
        .catch(() => undefined);
    }, idleBeforePreparingMs);
    this.idleWork.unref();
  }

  /** tabward's own CDP session of the tab: the snapshot reads the browser's accessibility tree over it. */
  async cdpSession(): Promise<CDPSession> {
    const session = await this.ownSession;
    if (!session)
      throw new TabwardError(
        'page_closed',
        `tabward could not open its own connection to tab ${this.id}.`,
        'Open the page again with new_page.',
      );
    return session;
  }

  /** What tabward reads in the main document for itself (password values, login-wall facts), out of the page's reach. */
  readInDocument<T>(expression: string): Promise<T> {
    return this.isolatedReads.evaluate<T>(expression, this.documentSeq);
  }

  /** Actions of the agent's running in this tab now, and when the last one ended (a download it set off is its). */
  private acting = 0;
  private lastActedAt = Number.NEGATIVE_INFINITY;
  /** Where this tab's downloads are kept (browser/downloads.ts), when the session keeps them. */
  downloads: DownloadKeeper | undefined;

  /** An action of the agent's works in this tab until the returned function is called. */
  beginAction(): () => void {
    this.acting++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.acting--;
      this.lastActedAt = Date.now();
    };
  }

  /** Whether an action of the agent's runs in this tab, or ended less than `ms` ago. */
  actedWithin(ms: number): boolean {
    return this.acting > 0 || Date.now() - this.lastActedAt < ms;
  }

  /** A call is about to work in this tab: what was waiting for the tab to be idle is not started now. */
  stopIdleWork(): void {
    clearTimeout(this.idleWork);
    this.idleWork = undefined;
  }

  /** After a dialog is answered, later work must not see the old interruption. */
  rearm(): void {
    this.dialog = undefined;
    this.interrupted = this.armInterrupt();
  }

  private armInterrupt(): Promise<never> {
    const promise = new Promise<never>((_, reject) => {
      this.interruptReject = reject;
    });
    promise.catch(() => undefined);
    return promise;
  }

  private interrupt(error: TabwardError): void {
    this.interruptReject?.(error);
  }
}

function goneWithBrowser(id: string, why: string): string {
  return `Tab ${id} belonged to a browser that is gone (${why}); tabs do not survive a browser restart.`;
}

/** How long the requests an action sent may keep the agent waiting after it (a stream never finishes). */
const settleRequestsMs = 500;
/** How long no new request must start after an action before it counts as settled. */
const quietMs = 60;
/** How long a tab stays untouched before Playwright's script is prepared in its document. */
const idleBeforePreparingMs = 50;
/** The bound on one turn of the page's event loop. */
const pageTurnMs = 1_000;

const retiredHint = 'Open the page again with new_page; your other tabs are unaffected.';

function safeFrame(request: Request): Frame | undefined {
  try {
    return request.frame();
  } catch {
    return undefined;
  }
}

function dialogText(dialog: Dialog): string {
  return `A ${dialog.type()} dialog is open: ${JSON.stringify(dialog.message().slice(0, 200))}.`;
}

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
      })().catch(() => undefined);
    });
  }

  /** A popup of an agent tab: the agent's, and policed like its tabs (once). */
  private adopt(popup: Page): void {
    const tracked = this.track(popup, true);
    tracked.ownedByAgent = true;
    if (this.adopted.has(popup)) return;
    this.adopted.add(popup);
    void this.onAgentPopup?.(popup).catch(() => undefined);
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
