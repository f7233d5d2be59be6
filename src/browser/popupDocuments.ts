// A popup's first navigation in a browser behind tabward's egress proxy (docs/architecture.md "The choke point",
// Tags). There no context route pauses every request (browser/hookPatterns.ts), and a popup's first document is
// asked for before any hook of tabward's watches the new tab: Playwright reports the page only once that
// navigation is under way (measured on Chromium 156: held, the page is not reported at all). So documents pause
// browser-wide here too: the tab and frame hooks pause first and tag what they let go, which is let go here at once;
// an untagged document of a page target of the context's that no hook watches yet is a popup's first: it is
// answered with an empty page at its address (a form's post into a new window is refused: it cannot be replayed),
// and the popup, once watched, loads that address for real (RouteJudge.startPopup), judged with its tab, its
// action and its human. Any other untagged document (a frame inside a target no hook watches) goes on to the
// proxy, which judges it alone. The pause is on tabward's own session of the browser's pipe (browser/pipeSession.ts),
// answered as it is read: every document of the browser waits on it.

import { swallow } from '../core/debug.ts';
import { settledWithin } from './deadline.ts';
import { tagHeader } from './egressProxy.ts';
import { headerOf, type PausedRequest } from './hookRequests.ts';
import type { PipeSession, PipeSessions } from './pipeSession.ts';

interface TargetInfo {
  readonly targetId: string;
  readonly type: string;
  readonly openerId?: string;
  readonly browserContextId?: string;
}

const swallowing = (why: string) => swallow('browser', `popupDocuments.${why}`);

/** What the guard is told of popups held here. */
export interface PopupHooks {
  /** A post into a new window, refused (it cannot be replayed). */
  refused(method: string, url: string): void;
  /** A popup answered with an empty page: `judged` settles once its real load is judged (or after 5 s). */
  opening(judged: Promise<void>): void;
}

/** A popup held at its first address: where it goes for real once watched, and what to tell once it is judged. */
export interface HeldPopup {
  readonly url: string;
  readonly judged: () => void;
}

/** How long an action waits at most for a popup it opened to load its first page for real. */
const openingMs = 5_000;

export class PopupDocuments {
  private readonly targets = new Map<string, TargetInfo>();
  /** Targets a hook of tabward's watches: their documents are paused there first. */
  private readonly watched = new Set<string>();
  /** The browser contexts this gate answers for (learnt from the targets watched). */
  private readonly contexts = new Set<string>();
  /** Popups answered with an empty page, by target, until watched (takeHeld) or gone. */
  private readonly held = new Map<string, HeldPopup>();

  private constructor(
    private readonly cdp: PipeSession,
    private readonly hooks: PopupHooks,
  ) {}

  /** Pauses every document of the browser until let go here; before any tab of the context can open a popup. */
  static async start(pipe: PipeSessions, hooks: PopupHooks): Promise<PopupDocuments> {
    const cdp = await pipe.open();
    const gate = new PopupDocuments(cdp, hooks);
    const note = (params: Record<string, unknown>) => gate.note(params.targetInfo as TargetInfo);
    cdp.on('Target.targetCreated', note);
    cdp.on('Target.targetInfoChanged', note);
    cdp.on('Target.targetDestroyed', (params) => {
      const targetId = params.targetId as string;
      gate.targets.delete(targetId);
      gate.watched.delete(targetId);
      gate.held.get(targetId)?.judged();
      gate.held.delete(targetId);
    });
    cdp.on('Fetch.requestPaused', (params) => {
      void gate.onPaused(params as unknown as PausedRequest).catch(swallowing('onPaused (target gone)'));
    });
    await cdp.send('Target.setDiscoverTargets', { discover: true });
    await cdp.send('Fetch.enable', {
      patterns: [{ urlPattern: '*', resourceType: 'Document', requestStage: 'Request' }],
    });
    return gate;
  }

  /** A tab's hooks are in place (its main frame's id is its target's): its documents are paused there first. */
  watching(targetId: string): void {
    this.watched.add(targetId);
    const context = this.targets.get(targetId)?.browserContextId;
    if (context) this.contexts.add(context);
  }

  /** The popup (a watched tab now) was held at its first address: where to load it for real, once. */
  takeHeld(targetId: string): HeldPopup | undefined {
    const held = this.held.get(targetId);
    this.held.delete(targetId);
    return held;
  }

  async close(): Promise<void> {
    await this.cdp.detach().catch(swallowing('close: detach'));
  }

  private note(info: TargetInfo): void {
    // An opener's context is the popup's too; kept from creation (the opener may close itself at once).
    const known = this.targets.get(info.targetId);
    this.targets.set(info.targetId, { ...known, ...info });
  }

  private isOwnPopup(frameId: string): boolean {
    const target = this.targets.get(frameId);
    if (target?.type !== 'page' || this.watched.has(frameId)) return false;
    if (target.browserContextId !== undefined && this.contexts.has(target.browserContextId)) return true;
    return target.openerId !== undefined && this.watched.has(target.openerId);
  }

  private async onPaused(event: PausedRequest): Promise<void> {
    const { requestId, frameId, request } = event;
    if (headerOf(request.headers, tagHeader) !== undefined || !this.isOwnPopup(frameId)) {
      // A hook judged it (the proxy spends its token), or it is no popup's first: the proxy judges it alone.
      await this.cdp.send('Fetch.continueRequest', { requestId });
      return;
    }
    if (request.method.toUpperCase() !== 'GET') {
      this.hooks.refused(request.method, request.url);
      await this.cdp.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' });
      return;
    }
    if (!this.held.has(frameId)) {
      let judged: () => void = () => undefined;
      const done = new Promise<void>((resolve) => {
        judged = resolve;
      });
      this.held.set(frameId, { url: request.url, judged });
      this.hooks.opening(settledWithin(done, openingMs).then(() => undefined));
    }
    const body = Buffer.from('<!doctype html><title>Opening…</title>').toString('base64');
    await this.cdp.send('Fetch.fulfillRequest', {
      requestId,
      responseCode: 200,
      responseHeaders: [
        { name: 'content-type', value: 'text/html; charset=utf-8' },
        { name: 'cache-control', value: 'no-store' },
      ],
      body,
    });
  }
}
