// The session's taint as the network backstop sees it: what the sessions judged over it have read and allowed,
// the origins secrets were typed into (each a read of its own), a sensitive read recorded as it goes through, and the choke points
// told to cut their open connections when the taint grows. Base of the judge (browser/requestJudge.ts).

import type { Page } from 'playwright-core';
import type { TaintView, UntiedStop } from '../core/callPath.ts';
import { type RequestFacts, taintReason } from '../core/networkHolds.ts';
import type { EgressRequest } from './egressProxy.ts';
import { RequestLog } from './requestLog.ts';
import type { SharedProfileTaint, TaintMember } from './sharedProfileTaint.ts';

interface TaintWatcher {
  readonly view: () => TaintView;
  readonly recordRead: (origin: string) => void;
  readonly recordUntied: ((stop: UntiedStop) => void) | undefined;
  readonly recordTypedSecret: ((origin: string) => void) | undefined;
}

export class TaintTracker extends RequestLog implements TaintMember {
  /**
   * Grows each time the session's taint does (a sensitive read, a secret typed): a request a hook judged before it
   * grew and that reaches the choke point after is judged again for taint there.
   */
  protected taintEpoch = 0;
  /** The choke points over this backstop, told to cut their open connections that the grown taint now covers. */
  private readonly cutters = new Set<(crosses: (url: string) => boolean) => void>();
  /**
   * The sessions judged over this backstop (one for tabward mcp; one per recipe run at once for run and serve):
   * what each has read and allowed, and where each sensitive read is told as it goes through.
   */
  protected readonly taintWatchers = new Set<TaintWatcher>();
  /**
   * The taint of the sessions that stopped watching (a recipe run that ended), as it was then, with the origins of
   * the sites they loaded. A service or shared worker of those sites outlives the run that handed it what the run
   * typed or read: it keeps itself alive, and the browser starts it again for an event of its own. What such a
   * worker sends is judged with that taint too, for as long as the backstop lives; nothing else is (the next run's
   * pages, and other sites' workers, are not held to the last run's reads).
   */
  private readonly retired: { readonly view: TaintView; readonly workerOrigins: ReadonlySet<string> }[] = [];
  /** The other clients in the same user's Chrome, while attached beside them: one taint for all. */
  private profile: SharedProfileTaint | undefined;

  /** Joins the clients of one user's Chrome (one profile, one taint) until the returned function is called. */
  shareProfileTaint(profile: SharedProfileTaint): () => void {
    this.profile = profile;
    const leave = profile.join(this);
    return () => {
      leave();
      if (this.profile === profile) this.profile = undefined;
    };
  }

  taintFromPeer(origin: string): void {
    this.recordRead(origin);
  }

  secretFromPeer(origin: string): void {
    for (const watcher of this.taintWatchers) (watcher.recordTypedSecret ?? watcher.recordRead)(origin);
    this.taintGrew();
  }

  /**
   * A session's taint, until the returned function is called (with the origins whose workers it stays with, see
   * retired). A read is told to every session watching: which of two recipe runs at once a request belongs to is not
   * known here, and tainting both fails closed.
   */
  watchTaint(
    view: () => TaintView,
    recordRead: (origin: string) => void,
    recordUntied?: (stop: UntiedStop) => void,
    recordTypedSecret?: (origin: string) => void,
  ): (workerOrigins?: ReadonlySet<string>) => void {
    const watcher = { view, recordRead, recordUntied, recordTypedSecret };
    this.taintWatchers.add(watcher);
    return (workerOrigins) => {
      if (this.taintWatchers.has(watcher)) this.watcherLeaving();
      if (!this.taintWatchers.delete(watcher) || !workerOrigins?.size) return;
      const last = view();
      if (last.tainted.length === 0 && (last.secrets?.length ?? 0) === 0) return;
      const kept: TaintView = {
        tainted: [...last.tainted],
        allowed: new Set(last.allowed),
        secrets: [...(last.secrets ?? [])],
        secretAllowed: new Set(last.secretAllowed ?? []),
      };
      this.retired.push({ view: kept, workerOrigins: new Set(workerOrigins) });
    };
  }

  /** A session watching is about to stop watching: what is held back for it is told now (RequestJudge). */
  protected watcherLeaving(): void {}

  ownTainted(): readonly string[] {
    return [...new Set([...this.taintWatchers].flatMap((watcher) => watcher.view().tainted))];
  }

  /**
   * For a request no action answers for: read by any session (or, in the user's Chrome beside other clients, by
   * any of theirs), allowed by every one.
   */
  protected taintView(workerOrigin?: string): TaintView {
    const views = [...this.taintWatchers].map((watcher) => watcher.view());
    for (const { view, workerOrigins } of this.retired)
      if (workerOrigin !== undefined && workerOrigins.has(workerOrigin)) views.push(view);
    const peers = this.profile?.taintedBesides(this) ?? [];
    const tainted = [...new Set([...views.flatMap((view) => view.tainted), ...peers])];
    const secrets = [...new Set(views.flatMap((view) => view.secrets ?? []))];
    const [first, ...others] = views;
    const allowed = new Set(
      [...(first?.allowed ?? [])].filter((host) => others.every((view) => view.allowed.has(host))),
    );
    const secretAllowed = new Set(
      [...(first?.secretAllowed ?? [])].filter((host) =>
        others.every((view) => view.secretAllowed?.has(host)),
      ),
    );
    return { tainted, allowed, secrets, secretAllowed };
  }

  /**
   * The session's own taint, for any request: after a sensitive read, or once a secret was typed, a request to a
   * host that is neither one read, nor one a secret was typed into, nor one the human allowed. A request of a worker
   * of `workerOrigin` is held to the taint of the ended sessions that loaded its site too.
   */
  protected sessionTaint(facts: RequestFacts, workerOrigin?: string): string | undefined {
    const {
      tainted,
      allowed,
      secrets = [],
      secretAllowed = new Set<string>(),
    } = this.taintView(workerOrigin);
    const judged = (origins: readonly string[], hosts: ReadonlySet<string>) =>
      taintReason(facts, { tainted: origins, allowed: hosts, acting: [], navigationOnly: false });
    // A typed secret goes only where a question that named it let it: not where a read's question let data go.
    return judged(tainted, allowed) ?? judged(secrets, secretAllowed);
  }

  /**
   * A request a hook judged before the session's taint last grew, reaching the choke point after (queued behind the
   * page's own hanging requests, say): judged again for the taint it was not judged against.
   */
  protected lateTaint(epoch: number, facts: RequestFacts): string | undefined {
    if (epoch === this.taintEpoch) return undefined;
    const tainted = this.sessionTaint(facts);
    return (
      tainted &&
      `${tainted}; it was judged before the agent read a sensitive page (or a secret was typed) and reached the network after`
    );
  }

  /**
   * The session's taint grew (a sensitive read, a secret typed): every choke point cuts its open connections and
   * tunnels to hosts the taint now covers, all at once. A page could otherwise signal what it learns by which of
   * its connections opened before it closes after (each cut reaching the attacker's server).
   */
  taintGrew(): void {
    this.taintEpoch++;
    const crosses = (url: string) =>
      this.sessionTaint({
        method: 'GET',
        url: url.replace(/^ws/i, 'http'),
        document: false,
        mainFrame: false,
        hop: false,
      }) !== undefined;
    for (const cut of this.cutters) cut(crosses);
  }

  /**
   * tabward typed a secret into a document of `origin`: every session watching is tainted by it for good, as by a
   * read, and so are the other clients of the same user's Chrome. Not only while that document lives: the page can
   * keep what was typed (its storage, its service worker, a reload) and send it as it goes (its pagehide as the tab
   * closes). The origin is the document's the secret went into (a login frame's), not the page framing it.
   */
  secretTyped(origin: string): void {
    for (const watcher of this.taintWatchers) (watcher.recordTypedSecret ?? watcher.recordRead)(origin);
    this.profile?.secretTyped(this, origin);
    this.taintGrew();
  }

  /** A choke point to tell when the taint grows; until the returned function is called. */
  addCutter(cut: (crosses: (url: string) => boolean) => void): () => void {
    this.cutters.add(cut);
    return () => this.cutters.delete(cut);
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

  /**
   * A speculative load (speculation rules) of a page with no egress proxy, which no hook can hold
   * (browser/speculativeLoads.ts): after a sensitive read its address may not carry what the page saw elsewhere.
   */
  speculativeLoadVerdict(url: string): string | undefined {
    return this.sessionTaint({ method: 'GET', url, document: false, mainFrame: false, hop: false });
  }

  /**
   * A stop no action will be told of (a hook stopped a request of no tab: a service worker's, a popup's first post)
   * is also an event of its own in every watching session's audit, as the choke point's untied stops are: the
   * action results name only their own tab's stops.
   */
  protected override record(page: Page | undefined, method: string, url: string, reason: string): void {
    super.record(page, method, url, reason);
    if (page === undefined)
      for (const watcher of this.taintWatchers) watcher.recordUntied?.({ method, url, reason });
  }

  /** A socket's handshake or message that went although judged refused: an event in every watching session's audit. */
  socketLeft(method: string, url: string, reason: string): void {
    for (const watcher of this.taintWatchers) watcher.recordUntied?.({ method, url, reason, sent: true });
  }

  socketStopped(request: EgressRequest, reason: string): void {
    for (const watcher of this.taintWatchers)
      watcher.recordUntied?.({ method: 'WEBSOCKET MESSAGE', url: request.url, reason });
  }

  /**
   * A request to a sensitive page that goes through (a script's fetch of a settings page from another page of the
   * same site, say) brings its content within the agent's reach: the session is tainted by it at once, whenever it
   * comes (during an action, after one returned, between calls), and the action running is told (its holds).
   */
  protected noteSensitiveRead(url: string): void {
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      return; // an unparsable URL matched no rule
    }
    this.recordRead(origin);
    this.profile?.read(this, origin);
  }

  private recordRead(origin: string): void {
    // Latest last (a Map keeps insertion order); past 500 origins the one read longest ago goes.
    this.reads.delete(origin);
    this.reads.set(origin, ++this.seq);
    if (this.reads.size > 500) this.reads.delete(this.reads.keys().next().value as string);
    for (const watcher of this.taintWatchers) watcher.recordRead(origin);
    this.taintGrew();
  }
}
