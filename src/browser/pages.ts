// The tabs tabward knows about: a stable id per tab (p1, p2, ... never reused), who opened it, which
// document it shows, its open dialog, crash state, the main document's HTTP status, and the refs of its
// last snapshot.

import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserContext, Dialog, Frame, Locator, Page, Request } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import { withDeadline } from './deadline.ts';
import { noteLoadedUrl } from './loadedUrls.ts';

export interface RefInfo {
  readonly role: string;
  readonly name: string;
  /** Playwright's own ref for the element (the agent sees a shorter one). */
  readonly target: string;
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
  /** Playwright refs of the fields a secret was typed into, in the document `secretDocumentSeq`. */
  secretFields = new Set<string>();
  secretDocumentSeq = -1;
  /** URLs whose document this tab loaded with a POST: reloading or going back to them posts again. */
  readonly postedUrls = new Set<string>();
  private interruptReject: ((error: TabwardError) => void) | undefined;
  private readonly navigations = new Set<Request>();
  interrupted: Promise<never>;

  constructor(
    readonly id: string,
    readonly page: Page,
    public ownedByAgent: boolean,
  ) {
    this.interrupted = this.armInterrupt();
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
  }

  /** Whether the current document holds a secret typed by tabward. */
  get holdsTypedSecret(): boolean {
    return this.secretDocumentSeq === this.documentSeq && this.secretFields.size > 0;
  }

  /** Remembers a field a secret was typed into: screenshots mask it, scripts on the page ask first. */
  noteSecretField(playwrightRef: string): void {
    if (this.secretDocumentSeq !== this.documentSeq) this.secretFields = new Set();
    this.secretDocumentSeq = this.documentSeq;
    this.secretFields.add(playwrightRef);
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

  /** Stops the page's renderer, so that no unload handler runs when the tab is closed next. */
  async silence(timeoutMs: number): Promise<void> {
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

  /** What a screenshot hides: password fields in every frame, and every field a secret was typed into. */
  secretMasks(): Locator[] {
    const passwords = this.page.frames().map((frame) => frame.locator('input[type=password]'));
    const typed = this.holdsTypedSecret ? [...this.secretFields].map((ref) => this.page.getByRef(ref)) : [];
    return [...passwords, ...typed];
  }

  /** Fails fast when the tab cannot take work right now. */
  assertUsable(): void {
    if (this.closed) throw new TabwardError('page_closed', `Tab ${this.id} is closed.`, 'Use list_pages.');
    if (this.crashed)
      throw new TabwardError('page_crashed', `Tab ${this.id} has crashed.`, 'Open it again with new_page.');
    if (this.dialog)
      throw new TabwardError('dialog_open', dialogText(this.dialog), 'Answer it with handle_dialog first.');
  }

  /**
   * After an action: if it started a navigation of the tab, wait (bounded) until the new document has loaded,
   * so the agent's next step sees the page the action led to.
   */
  async settle(timeoutMs: number): Promise<void> {
    await sleep(120);
    const deadline = Date.now() + timeoutMs;
    if (this.navigations.size === 0) return;
    while (this.navigations.size > 0 && Date.now() < deadline && !this.closed && !this.dialog)
      await sleep(40);
    await this.waitForDocument(Math.max(1, deadline - Date.now()));
  }

  /**
   * Waits (bounded) until the current document is parsed. Polls document.readyState instead of waiting for load
   * events: a page restored from the back/forward cache fires none, and Playwright's load state then never
   * arrives.
   */
  async waitForDocument(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !this.closed && !this.dialog) {
      const state = await Promise.race([
        this.page.evaluate('document.readyState').catch(() => 'navigating'),
        sleep(1_000).then(() => 'slow'),
      ]);
      if (state === 'interactive' || state === 'complete') return;
      await sleep(50);
    }
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
  private nextId = 1;
  selected: TrackedPage | undefined;

  /** Tracks every current and future tab of a context. `ownedByDefault` applies to tabs nobody claimed. */
  watch(
    context: BrowserContext,
    ownedByDefault: boolean,
    onAgentPopup?: (page: Page) => Promise<void>,
  ): void {
    for (const page of context.pages()) this.track(page, ownedByDefault);
    context.on('page', (page) => {
      const tracked = this.track(page, ownedByDefault);
      // A popup opened by an agent tab is the agent's doing, and is policed like the agent's tabs.
      void page
        .opener()
        .then(async (opener) => {
          if (!opener || !this.byPage.get(opener)?.ownedByAgent) return;
          tracked.ownedByAgent = true;
          await onAgentPopup?.(page);
        })
        .catch(() => undefined);
    });
  }

  /** Told of every tab as it is first tracked (the network backstop names its pages by tab id). */
  onTrack: ((tracked: TrackedPage) => void) | undefined;

  track(page: Page, ownedByAgent: boolean): TrackedPage {
    const existing = this.byPage.get(page);
    if (existing) return existing;
    const tracked = new TrackedPage(`p${this.nextId++}`, page, ownedByAgent);
    this.byPage.set(page, tracked);
    this.onTrack?.(tracked);
    page.on('close', () => {
      this.byPage.delete(page);
      if (this.selected === tracked) this.selected = undefined;
    });
    return tracked;
  }

  list(): TrackedPage[] {
    return [...this.byPage.values()].filter((tracked) => !tracked.closed);
  }

  get(id: string): TrackedPage {
    const found = this.list().find((tracked) => tracked.id === id);
    if (!found) {
      const known =
        this.list()
          .map((tracked) => tracked.id)
          .join(', ') || 'none';
      throw new TabwardError('not_found', `No open tab with id ${id} (open: ${known}).`, 'Use list_pages.');
    }
    return found;
  }

  forget(): void {
    this.byPage.clear();
    this.selected = undefined;
  }
}
