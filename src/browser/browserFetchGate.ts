// The nearest thing to a choke point in a browser tabward did not start (the user's Chrome, a remote endpoint),
// where no proxy can be given (docs/architecture.md, "What holds in each mode"). CDP's Fetch domain enabled on the
// *browser* target pauses every request any renderer of the browser sends, and, unlike a pause on a tab's or a
// frame's own session, it keeps holding a request after the frame that sent it is gone: a cross-site frame's
// `pagehide` keepalive POST or `fetchLater` as its tab closes, navigates away or the page removes it, a service
// worker's fetch. Measured on Chromium 156: those reach this gate and wait for its answer.
//
// The gate sees the user's own tabs too. It judges only what is the agent's: a request a hook of tabward's already
// judged carries its single-use token (browser/requestTags.ts) and is spent here as at the egress proxy; a request
// with no token from a frame that was ever part of an agent tab, or from a worker of an origin the agent's tabs
// loaded, was judged by no hook and is judged here alone (RequestJudge.egressVerdict: no pass and no human reach
// it). Everything else (the user's tabs, the browser's own traffic, and, with several clients of one tabward in
// this Chrome, the others' tagged requests, which their own gates judge) is let go at once, unread.
//
// It learns what is the agent's from the tab and frame hooks (frame trees, frames that send) and, before any hook
// watches them, from the browser's own target events: a popup whose opener is an agent tab or frame (even one that
// closed itself at once), an out-of-process frame or worker whose parent frame is the agent's.
//
// An agent tab that closes can leave requests behind: a keepalive fetch or a fetchLater its dying renderer handed the
// browser, and a request its tab's hook held as the tab went, which Chromium keeps until the browser's interception
// is set up anew and then pauses here (measured on Chromium 156: until this gate detached, after the run that
// tainted it had ended). Each closed agent tab's requests are refused here whatever the taint, and the gate sets its
// interception up anew as each agent tab closes and before it lets go, so that such a request pauses while it
// still watches.
//
// What it cannot see: requests the browser process makes through loaders of its own (measured, they never pause
// here: a payment manifest, a Background Fetch, FedCM's config fetch, speculation-rules preloading; the tab hooks
// and this gate take the Reporting API's and speculation rules' response headers out of the agent's documents),
// WebSocket frames, WebRTC, and whatever is sent after tabward's connection ends (the agent's tabs are silenced and closed, and its
// sites' service workers stopped, before the gate lets go: see BrowserSession.closeCurrent).

import type { Browser, CDPSession } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { AgentWindows } from './agentWindows.ts';
import { withDeadline } from './deadline.ts';
import { answerDocumentResponse } from './documentResponses.ts';
import { tagHeader } from './egressProxy.ts';
import type { FetchPattern } from './hookPatterns.ts';
import type { RequestJudge } from './requestJudge.ts';
import { WorkerSockets } from './workerSockets.ts';

interface PausedEvent {
  readonly requestId: string;
  readonly frameId?: string;
  readonly resourceType: string;
  readonly responseStatusCode?: number;
  readonly responseErrorReason?: string;
  readonly responseHeaders?: readonly { readonly name: string; readonly value: string }[];
  readonly request: {
    readonly url: string;
    readonly method: string;
    readonly headers: Readonly<Record<string, string>>;
  };
}

interface TargetInfo {
  readonly targetId: string;
  readonly type: string;
  readonly url: string;
  readonly openerId?: string;
  readonly openerFrameId?: string;
  readonly parentId?: string;
  readonly parentFrameId?: string;
}

/** How long no request of the agent's must have been paused before the gate lets the browser go. */
const quietMs = 150;

/** What the gate pauses: every request, and documents at their response too. */
const pausePatterns: FetchPattern[] = [
  { urlPattern: '*', requestStage: 'Request' },
  { urlPattern: '*', resourceType: 'Document', requestStage: 'Response' },
];

const closedTabReason =
  'it was sent by an agent tab after the tab closed (a keepalive request or fetchLater of its teardown, or a request its hook held as it closed); nothing the agent does answers for it';

/** Worker targets whose requests name the worker, not a frame, as their frame id. */
const workerTypes = new Set(['service_worker', 'shared_worker']);

export class BrowserFetchGate {
  /** Every frame that was ever part of an agent tab: its requests stay the agent's after it is torn down. */
  private readonly agentFrames = new Set<string>();
  /** The agent's tabs (a tab's id is its main frame's), and the tab each agent frame was seen in. */
  private readonly agentTabs = new Set<string>();
  private readonly tabOfFrame = new Map<string, string>();
  /** Agent tabs the browser destroyed: nothing their frames send afterwards is the agent's doing. */
  private readonly closedTabs = new Set<string>();
  /** The windows the agent's tabs opened, told to Playwright or not (browser/agentWindows.ts). */
  private readonly windows = new AgentWindows();
  /** Origins the agent's tabs loaded documents from: their service and shared workers are the agent's too. */
  private readonly agentOrigins = new Set<string>();
  /** Service and shared workers of the browser, by target id: the origin of their script. */
  private readonly workers = new Map<string, string>();
  /** Requests paused here and not answered yet: closing waits for them. */
  private readonly inFlight = new Set<Promise<void>>();
  /** When the last request of the agent's was paused here (a tab tearing down sends in a burst). */
  private lastAgentPause = 0;

  /** The sockets of the agent's dedicated workers (browser/workerSockets.ts). */
  private readonly workerSockets: WorkerSockets;

  private constructor(
    private readonly cdp: CDPSession,
    private readonly judge: RequestJudge,
  ) {
    this.workerSockets = new WorkerSockets(
      cdp,
      (url) => judge.socketMessageVerdict({ method: 'WEBSOCKET', url, tag: undefined, navigation: false }),
      (what, url, reason) => judge.socketLeft(what, url, reason),
    );
  }

  /** Starts holding every request of the browser until judged; before any agent tab is opened. */
  static async start(browser: Browser, judge: RequestJudge): Promise<BrowserFetchGate> {
    const cdp = await browser.newBrowserCDPSession();
    const gate = new BrowserFetchGate(cdp, judge);
    cdp.on('Fetch.requestPaused', (event) => gate.track(gate.onPaused(event as PausedEvent)));
    cdp.on('Target.targetCreated', ({ targetInfo }: { targetInfo: TargetInfo }) =>
      gate.noteTarget(targetInfo, true),
    );
    cdp.on('Target.targetInfoChanged', ({ targetInfo }: { targetInfo: TargetInfo }) =>
      gate.noteTarget(targetInfo, false),
    );
    cdp.on('Target.targetDestroyed', ({ targetId }: { targetId: string }) => gate.targetGone(targetId));
    await cdp.send('Target.setDiscoverTargets', { discover: true });
    // Documents pause at their response too: an agent frame's document loses the headers that hand the browser work
    // (browser/documentResponses.ts) even before a hook of its own watches it (a popup's first document).
    await cdp.send('Fetch.enable', { patterns: pausePatterns });
    return gate;
  }

  /** An agent tab (its id is its main frame's), and the document it loaded. */
  noteAgentTab(tabId: string, url?: string): void {
    this.agentTabs.add(tabId);
    this.noteAgentFrame(tabId, url, tabId);
  }

  /**
   * A frame of an agent tab (its main frame, a child, an out-of-process frame), the document it loaded, and the
   * frame it was seen in (its parent, or its session's root), whose tab it belongs to.
   */
  noteAgentFrame(frameId: string, url?: string, within?: string): void {
    this.agentFrames.add(frameId);
    const tab = within === undefined ? undefined : (this.tabOfFrame.get(within) ?? within);
    if (tab !== undefined && !this.tabOfFrame.has(frameId)) this.tabOfFrame.set(frameId, tab);
    if (url) {
      const origin = originOf(url);
      if (origin) this.agentOrigins.add(origin);
    }
  }

  /**
   * Every target the browser makes is told here before it sends anything (the same session's events come in order):
   * a popup whose opener is an agent tab or frame (even one that closes itself at once), an out-of-process frame or
   * a worker whose parent frame is the agent's, is the agent's from its first request, before any hook of tabward's
   * watches it. A service or shared worker is the agent's when its origin is one the agent's tabs loaded.
   */
  private noteTarget(target: TargetInfo, created: boolean): void {
    if (workerTypes.has(target.type)) {
      this.workers.set(target.targetId, originOf(target.url));
      return;
    }
    const parents = [target.openerId, target.openerFrameId, target.parentId, target.parentFrameId];
    if (!parents.some((id) => id !== undefined && this.agentFrames.has(id))) {
      const tab =
        target.type === 'page' ? this.windows.noOpener(target.targetId, target.url, created) : undefined;
      if (tab !== undefined) this.noteAgentTab(target.targetId);
      return;
    }
    if (target.type === 'page') {
      const opener = [target.openerId, target.openerFrameId].find(
        (id) => id !== undefined && this.agentFrames.has(id),
      );
      if (opener !== undefined) this.windows.opened(target.targetId, this.tabOfFrame.get(opener) ?? opener);
      this.noteAgentTab(target.targetId);
    } else this.noteAgentFrame(target.targetId, undefined, target.parentFrameId ?? target.parentId);
    // A dedicated worker has no socket route: its sockets are watched here.
    if (target.type === 'worker')
      void this.workerSockets
        .watch(target.targetId)
        .catch(swallow('browser', 'browserFetchGate.noteTarget: watching a worker (gone already)'));
  }

  /**
   * An agent frame asked for a navigation in a new tab or window (Page.frameRequestedNavigation's disposition): the
   * tab Chromium opens for it has no opener, and is told apart by its address (browser/agentWindows.ts).
   */
  expectWindowFrom(frameId: string, url: string): void {
    this.windows.expect(this.tabOfFrame.get(frameId) ?? frameId, url);
  }

  /** Whether a target (a tab: its id is its main frame's) is the agent's, as far as this gate knows. */
  isAgentTarget(targetId: string): boolean {
    return this.agentFrames.has(targetId);
  }

  /**
   * A target is gone. An agent tab's: its frames' later requests are refused, and the interception is set up anew, so
   * that a request its hook held as it closed pauses here now rather than when the gate lets go.
   */
  private targetGone(targetId: string): void {
    this.workers.delete(targetId);
    if (!this.agentTabs.has(targetId)) return;
    this.closedTabs.add(targetId);
    this.track(this.pauseLeftovers());
  }

  /**
   * Closes every window still open that `tabId` opened, and those they opened, whether or not Playwright has told
   * of it yet (a window is told once its first document commits, and not as a popup once its opener is gone).
   */
  async closeWindowsOpenedFrom(tabId: string): Promise<void> {
    await this.closeTargets(this.windows.openedBy(tabId));
  }

  /** Closes the windows among `targetIds` that are still open. */
  private async closeTargets(targetIds: readonly string[]): Promise<void> {
    await Promise.all(
      targetIds
        .filter((window) => !this.closedTabs.has(window))
        .map((targetId) =>
          this.cdp
            .send('Target.closeTarget', { targetId })
            .catch(swallow('browser', 'browserFetchGate.closeTargets: a window already gone')),
        ),
    );
  }

  private async pauseLeftovers(): Promise<void> {
    await this.cdp.send('Fetch.enable', { patterns: pausePatterns });
  }

  /** Whether a request comes from a frame of an agent tab that is closed. */
  private fromClosedTab(frameId: string | undefined): boolean {
    const tab = frameId === undefined ? undefined : this.tabOfFrame.get(frameId);
    return tab !== undefined && this.closedTabs.has(tab);
  }

  private track(work: Promise<void>): void {
    const settled = work
      .catch(swallow('browser', 'browserFetchGate.track: a piece of the gate’s work failed'))
      .finally(() => this.inFlight.delete(settled));
    this.inFlight.add(settled);
  }

  private async onPaused(event: PausedEvent): Promise<void> {
    if (event.responseStatusCode !== undefined || event.responseErrorReason !== undefined) {
      if (!this.isAgents(event.frameId)) {
        await this.cdp.send('Fetch.continueRequest', { requestId: event.requestId });
        return;
      }
      const refused = await answerDocumentResponse(this.cdp, event, undefined);
      if (refused) this.judge.recordRefused(event.request.method, event.request.url, refused);
      return;
    }
    const { method, url, headers } = event.request;
    // A candidate told apart by its first request: its document's address, else (a document that loaded nothing
    // from the network sending) taken as the agent's.
    if (
      event.frameId !== undefined &&
      this.windows.decide(event.frameId, event.resourceType === 'Document' ? url : undefined) !== undefined
    )
      this.noteAgentTab(event.frameId);
    const tag = headers[tagHeader];
    // Another client's tagged request (several clients in one user's Chrome) is its own gate's to judge.
    const taggedByUs = tag !== undefined && this.judge.tags.ours(tag);
    if (!taggedByUs && !this.isAgents(event.frameId)) {
      await this.cdp.send('Fetch.continueRequest', { requestId: event.requestId });
      return;
    }
    this.lastAgentPause = Date.now();
    const worker = this.workers.get(event.frameId ?? '');
    if (this.fromClosedTab(event.frameId)) {
      await this.cdp.send('Fetch.failRequest', {
        requestId: event.requestId,
        errorReason: 'BlockedByClient',
      });
      this.judge.recordRefused(method, url, closedTabReason);
      return;
    }
    const reason = await this.judge
      .egressVerdict({
        method,
        url,
        tag,
        navigation: event.resourceType === 'Document',
        ...(worker !== undefined ? { worker } : {}),
      })
      .catch((error: unknown) => `it could not be judged (${String(error)})`);
    if (reason) {
      await this.cdp.send('Fetch.failRequest', {
        requestId: event.requestId,
        errorReason: 'BlockedByClient',
      });
      return;
    }
    // Tabward's token is spent: the site never sees it.
    const kept = Object.entries(headers)
      .filter(([name]) => name.toLowerCase() !== tagHeader)
      .map(([name, value]) => ({ name, value }));
    await this.cdp.send('Fetch.continueRequest', {
      requestId: event.requestId,
      ...(tag === undefined ? {} : { headers: kept }),
    });
    this.judge.egressSent({ method, url, tag, navigation: false }, undefined);
  }

  private isAgents(frameId: string | undefined): boolean {
    if (!frameId) return false;
    if (this.agentFrames.has(frameId)) return true;
    const worker = this.workers.get(frameId);
    return worker !== undefined && this.agentOrigins.has(worker);
  }

  /**
   * Waits (bounded) for the requests paused here to be answered, then lets the browser go: what is paused when the
   * session ends goes out unjudged, so tabward closes its tabs first and then this.
   */
  async close(timeoutMs: number): Promise<void> {
    const closing = Date.now();
    const deadline = closing + timeoutMs;
    // A window an agent tab opened that Playwright has not told of yet (its first document has not committed) was
    // never tracked, so never closed with the agent's tabs: closed here, while the gate still judges it.
    await withDeadline(
      this.closeTargets(this.windows.all()),
      timeoutMs / 2,
      'Closing the agent’s windows',
    ).catch(swallow('browser', 'browserFetchGate.close: closing the windows the agent’s tabs opened'));
    // What a closed tab's hook still held pauses here first.
    this.track(this.pauseLeftovers());
    // A tab closed just before may still have a request on its way here.
    const busy = () =>
      this.inFlight.size > 0 || Date.now() - Math.max(closing, this.lastAgentPause) < quietMs;
    while (busy() && Date.now() < deadline)
      await Promise.race([
        Promise.allSettled([...this.inFlight]),
        new Promise((done) => setTimeout(done, Math.min(quietMs, Math.max(0, deadline - Date.now())))),
      ]);
    // A service or shared worker of the agent's outlives its tabs (a page may hand it what it saw, and it may keep
    // itself alive): stopped before the gate goes, since nothing would judge what it sends after.
    await Promise.all(
      [...this.workers]
        .filter(([, origin]) => this.agentOrigins.has(origin))
        .map(([targetId]) =>
          this.cdp
            .send('Target.closeTarget', { targetId })
            .catch(swallow('browser', 'browserFetchGate.close: stopping the agent sites’ service workers')),
        ),
    );
    await this.cdp.detach().catch(swallow('browser', 'browserFetchGate.close: this.cdp.detach()'));
  }
}

/** A URL's origin, or '' for an opaque one (a data: or about: document). */
export function originOf(url: string): string {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? '' : origin;
  } catch {
    return '';
  }
}
