// The tabs tabward knows about: a stable id per tab (p1, p2, ... never reused), who opened it, which
// document it shows, its open dialog, crash state, the main document's HTTP status, the navigations it sent,
// and the refs of its last snapshot. A tab whose dialog vanished with the frame that opened it is retired
// (see watchDialogs). The registry of tabs: browser/pageRegistry.ts; settling after an action:
// browser/pageSettle.ts; silencing a tab before it closes: browser/tabSilence.ts.

import type { CDPSession, Dialog, Frame, Locator, Page, Request } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { quotedForDisplay } from '../core/displayText.ts';
import { TabwardError } from '../core/errors.ts';
import { settledWithin, withDeadline } from './deadline.ts';
import type { DownloadKeeper } from './downloads.ts';
import { noteLoadedUrl, noteNavigationRequested } from './loadedUrls.ts';
import { type ClosedDialog, type DialogWatch, retireTab, watchOrphanDialogs } from './orphanDialogs.ts';
import { PageActivity } from './pageActivity.ts';
import { type ActionMarks, settlePage, waitForDocument, waitForPassiveLoads } from './pageSettle.ts';
import { RendererAnnouncements } from './rendererAnnouncements.ts';
import type { ElementAddress } from './snapshot/frameScopes.ts';
import { IsolatedReads } from './snapshot/isolatedReads.ts';
import { type PipeReadSession, type ReadSession, tabSessionOnThePipe } from './snapshot/readSessions.ts';
import { silencePage } from './tabSilence.ts';

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
  /** tabward's own Playwright CDP session of the tab: dialogs' frames, the renderer's announcements (events). */
  private readonly ownSession: Promise<CDPSession | undefined>;
  /** What tells whether the open dialog may be answered; undefined where the tab could not be watched. */
  private readonly dialogWatch: Promise<DialogWatch | undefined>;
  /** The check that tabward's own session was told of the dialog open now (checkDialogSeen). */
  private dialogReported: Promise<void> | undefined;
  /** The session reads go over (cdpSession), once asked. */
  private readSession: Promise<PipeReadSession | undefined> | undefined;
  private readonly isolatedReads: IsolatedReads;
  private interruptReject: ((error: TabwardError) => void) | undefined;
  private readonly navigations = new Set<Request>();
  /** The frame (CDP id) of the dialog open now, as Chromium reported it. */
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
      .catch(swallow('browser', 'pages.constructor: opening tabward’s own CDP session of the tab'));
    this.announcements = new RendererAnnouncements(this.ownSession);
    this.isolatedReads = new IsolatedReads(() => this.cdpSession().catch(() => undefined));
    page.on('framenavigated', (frame) => {
      if (frame !== page.mainFrame()) return;
      this.documentSeq++;
      // The agent's navigation is read as soon as it is parsed (the login-wall facts): tabward's world is made now.
      if (this.acting > 0) this.isolatedReads.prepare(this.documentSeq);
    });
    page.on('response', (response) => {
      const request = response.request();
      if (!request.isNavigationRequest()) return;
      const frame = safeFrame(request);
      if (frame) noteLoadedUrl(frame, response.url());
      if (frame === page.mainFrame()) this.status = response.status();
    });
    page.on('request', (request) => {
      if (!request.isNavigationRequest()) return;
      const frame = safeFrame(request);
      if (frame) noteNavigationRequested(frame);
      if (frame !== page.mainFrame()) return;
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
      this.dialogReported = this.checkDialogSeen(dialog);
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
    // A dialog whose frame the page removed retires the tab (browser/orphanDialogs.ts).
    this.dialogWatch = this.ownSession
      .then(
        (cdp) =>
          cdp &&
          watchOrphanDialogs(
            page,
            cdp,
            () => void this.retire(cdp),
            (closed) => this.dialogClosedElsewhere(closed),
          ),
      )
      .catch(swallow('browser', 'pages.constructor: watching the tab’s dialogs'));
  }

  /**
   * The browser closed the open dialog without tabward (the user answered it in their Chrome, or the browser
   * dismissed it): Playwright still holds it, and the tab said "dialog open" to every call from then on, which no
   * answer could end (Chromium: "No dialog is showing"). Matched by what the dialog says, as Playwright does not say
   * which one it is; one that does not match is left as it is.
   */
  private dialogClosedElsewhere(closed: ClosedDialog): void {
    if (this.dialog?.message() !== closed.message || this.dialog.type() !== closed.type) return;
    this.dialogReported = undefined;
    this.rearm();
  }

  /** Resolves once the tab's dialogs are watched (bounded): before the tab is handed out, so none is missed. */
  async dialogsWatched(): Promise<void> {
    await settledWithin(this.dialogWatch, 5_000);
  }

  /** A dialog Playwright reports that tabward's own session missed has no known frame: the tab is retired. */
  private async checkDialogSeen(dialog: Dialog): Promise<void> {
    const watch = await this.dialogWatch;
    if (watch && this.dialog === dialog) await watch.reported();
  }

  /**
   * Whether the open dialog may be answered: never one of a frame outside the tab's own frame tree, nor of a tab
   * retired (answering would crash the browser); such a tab is retired (if it was not) and the call told why.
   */
  async assertDialogAnswerable(): Promise<void> {
    await this.dialogReported;
    // Fail closed: a dialog is answered only when tabward's own session knows its frame is the tab's own.
    const watch = await settledWithin(this.dialogWatch, 5_000);
    if (!watch)
      throw new TabwardError(
        'blocked',
        `tabward could not watch Tab ${this.id}'s dialogs, so it cannot tell which frame opened this one (answering a dialog whose frame is gone crashes the browser); it was left open.`,
        'Leave this tab; open the page again with new_page.',
      );
    if (watch.answerable() === undefined) await watch.reported();
    const answerable = watch.answerable();
    if (answerable === false)
      throw new TabwardError(
        'page_closed',
        this.retired ?? `Tab ${this.id}'s dialog cannot be answered.`,
        retiredHint,
      );
    if (answerable === undefined)
      throw new TabwardError(
        'blocked',
        `The browser did not answer in time, so tabward could not tell which frame opened Tab ${this.id}'s dialog; it was left open.`,
        'Call handle_dialog again.',
      );
  }

  private async retire(cdp: CDPSession): Promise<void> {
    const what = this.dialog
      ? `the ${this.dialog.type()} dialog ${quotedForDisplay(this.dialog.message(), 100)}`
      : 'a dialog';
    this.retired = `Tab ${this.id} was retired: ${what} was opened by a frame the page then removed, or by one inside another site's frame (which can remove it unseen). Chromium would crash the whole browser if this tab were navigated, closed or the dialog answered, so tabward stopped its scripts, froze it and leaves it alone. It was at ${this.page.url()}.`;
    await retireTab(this.page, cdp);
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
    promise.catch(() => undefined); // observed by whoever awaits it; this only marks it handled
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

  /**
   * Told when a secret is typed into this tab, with the origin of the document it was typed into (the network
   * backstop's taint grows, for the session: tabWatchers.ts).
   */
  onSecretTyped: ((origin: string) => void) | undefined;

  /**
   * Remembers a field a secret was typed into, in the document of `origin` (the field's own frame): screenshots
   * mask it, scripts on the page ask first, and the session's taint grows.
   */
  noteSecretField(field: Locator, origin: string): void {
    if (this.secretDocumentSeq !== this.documentSeq) this.secretFields = new Set();
    this.secretDocumentSeq = this.documentSeq;
    this.secretFields.add(field);
    this.onSecretTyped?.(origin);
  }

  /**
   * The history entry back (-1), reload (0) or forward (+1) would load, or undefined when there is none, and
   * whether loading it posts a form again (the entry came from a form submission this tab sent as a POST). A
   * history move is a navigation like any other and is judged by where it goes.
   */
  async historyEntry(
    offset: -1 | 0 | 1,
    timeoutMs: number,
  ): Promise<{ url: string; reposts: boolean; id: number } | undefined> {
    const read = async () => {
      const cdp = await this.page.context().newCDPSession(this.page);
      try {
        const history = (await cdp.send('Page.getNavigationHistory')) as {
          currentIndex: number;
          entries: { id: number; url: string; transitionType: string }[];
        };
        const entry = history.entries[history.currentIndex + offset];
        if (!entry) return undefined;
        const reposts = entry.transitionType === 'form_submit' && this.postedUrls.has(entry.url);
        return { url: entry.url, reposts, id: entry.id };
      } finally {
        await cdp.detach().catch(swallow('browser', 'pages.historyEntry: cdp.detach()'));
      }
    };
    return withDeadline(read(), timeoutMs, 'reading the tab history', this.interrupted);
  }

  /**
   * Moves the tab to the history entry `id` (a Page.getNavigationHistory id), over CDP: never through the page's
   * own `history`, which its script can redefine (a `back` that goes two entries back, to one nobody judged).
   */
  async goToHistoryEntry(id: number, timeoutMs: number): Promise<void> {
    const move = async () => {
      const cdp = await this.page.context().newCDPSession(this.page);
      try {
        await cdp.send('Page.navigateToHistoryEntry', { entryId: id });
      } finally {
        await cdp.detach().catch(swallow('browser', 'pages.goToHistoryEntry: cdp.detach()'));
      }
    };
    await withDeadline(move(), timeoutMs, 'moving in the tab history', this.interrupted);
  }

  /**
   * Stops the page's renderer, so that no unload handler runs when the tab is closed next (browser/tabSilence.ts).
   */
  async silence(timeoutMs: number): Promise<void> {
    await silencePage(this.page, timeoutMs, () => this.crashed || this.closed);
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

  /** Before an action: what settling after it is measured from (its first call turns the counting on). */
  async markAction(): Promise<ActionMarks> {
    const activity = this.activity.mark();
    const announced = await this.announcements.mark();
    return { activity, announced, documents: this.announcements.documentsCommitted() };
  }

  /** After an action: waits for what it set off, and only that, bounded (browser/pageSettle.ts). */
  async settle(timeoutMs: number, marks: ActionMarks): Promise<void> {
    await settlePage(this, timeoutMs, marks);
  }

  /** Before a screenshot: the images, fonts and media in flight, which settling does not wait for, bounded. */
  async passiveLoadsSettled(timeoutMs: number): Promise<void> {
    await waitForPassiveLoads(this, timeoutMs);
  }

  /**
   * Waits (bounded) until the current document is parsed and its DOMContentLoaded handlers have run, its deferred
   * scripts `deferredMs` at most (browser/pageSettle.ts).
   */
  async waitForDocument(timeoutMs: number, deferredMs?: number): Promise<void> {
    await waitForDocument(this, timeoutMs, deferredMs);
  }

  /** Main-frame navigation requests not answered yet. */
  get pendingNavigations(): number {
    return this.navigations.size;
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
        .catch(swallow('browser', 'pages.prepareActions: preparing Playwright’s script in the document'));
    }, idleBeforePreparingMs);
    this.idleWork.unref();
  }

  /**
   * tabward's own DevTools session of the tab, for its reads (the snapshot, refs, the focused element): one on the
   * browser's pipe where tabward started the browser (snapshot/readSessions.ts), else its Playwright session.
   */
  async cdpSession(): Promise<ReadSession> {
    const session = await this.ownSession;
    if (!session)
      throw new TabwardError(
        'page_closed',
        `tabward could not open its own connection to tab ${this.id}.`,
        'Open the page again with new_page.',
      );
    // A session on the pipe that ended while the tab lives (its renderer swapped under it) is opened anew.
    if ((await this.readSession)?.isClosed) this.readSession = undefined;
    this.readSession ??= session
      .send('Target.getTargetInfo')
      .then(({ targetInfo }) => tabSessionOnThePipe(this.page, targetInfo.targetId))
      .catch(swallow('browser', 'pages.cdpSession: a session on the pipe (Playwright’s is read on instead)'));
    return (await this.readSession) ?? session;
  }

  /**
   * What tabward reads in the main document for itself (password values, login-wall facts, where the document is
   * in its loading), out of the page's reach; a promise is awaited.
   */
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
    promise.catch(() => undefined); // observed by whoever awaits it; this only marks it handled
    return promise;
  }

  private interrupt(error: TabwardError): void {
    this.interruptReject?.(error);
  }
}

/** How long a tab stays untouched before Playwright's script is prepared in its document. */
const idleBeforePreparingMs = 50;
const retiredHint = 'Open the page again with new_page; your other tabs are unaffected.';

function safeFrame(request: Request): Frame | undefined {
  try {
    return request.frame();
  } catch {
    return undefined;
  }
}

function dialogText(dialog: Dialog): string {
  // The page's words, on one line with their quotes escaped: a message cannot add a line of its own to a result.
  return `A ${dialog.type()} dialog is open: ${quotedForDisplay(dialog.message(), 200)}.`;
}
