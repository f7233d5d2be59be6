// The verdict of the network backstop (browser/networkGuard.ts wires it to the CDP hooks and the egress proxy):
// what the rules, the passes, the session's taint and the human answering for the running action say of one
// request, one line in the stop log for each request stopped, and what the choke point let out that the audit names.
// Pure bookkeeping over the facts the hooks report; no browser call here.

import type { Page } from 'playwright-core';
import type { ActionPasses, PassHandle, PassSpec } from '../core/actionPasses.ts';
import type { Attendance, Backstop, TaintView, UntiedStop } from '../core/callPath.ts';
import { type Attendant, type RequestFacts, taintReason, webAddress } from '../core/networkHolds.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import type { EgressPolicy, EgressRequest } from './egressProxy.ts';
import { answerReadable, parses, portOf, safeMethods } from './requestFacts.ts';
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

interface TaintWatcher {
  readonly view: () => TaintView;
  readonly recordRead: (origin: string) => void;
  readonly recordUntied: ((stop: UntiedStop) => void) | undefined;
}

export class RequestJudge implements Backstop, EgressPolicy {
  protected readonly blocked: BlockedRequest[] = [];
  protected readonly sentLog: SentRequest[] = [];
  /** The tokens that tie a hook's verdict to the request the choke point sees (browser/requestTags.ts). */
  readonly tags = new RequestTags();
  /**
   * Origins of the agent's pages that hold a secret tabward typed: while one does, requests to other hosts are
   * judged as after a sensitive read (set by the session, which knows its tabs).
   */
  secretHolders: () => readonly string[] = () => [];
  /**
   * Grows each time the session's taint does (a sensitive read, a secret typed): a request a hook judged before it
   * grew and that reaches the choke point after is judged again for taint there.
   */
  protected taintEpoch = 0;
  /** The choke points over this backstop, told to cut their open connections that the grown taint now covers. */
  private readonly cutters = new Set<(crosses: (url: string) => boolean) => void>();
  protected readonly reads: { seq: number; origin: string }[] = [];
  protected seq = 0;
  /** Which tab a page is, so that an approval's pass covers the tab it was given for and no other. */
  protected readonly scopes = new WeakMap<Page, string>();
  /** When each page was first seen, so a new_page action answers for the tabs opened after it began. */
  protected readonly seenAt = new WeakMap<Page, number>();
  protected readonly openers = new WeakMap<Page, Page>();
  protected readonly attendants: AttendantEntry[] = [];
  /**
   * The sessions judged over this backstop (one for tabward mcp; one per recipe run at once for run and serve):
   * what each has read and allowed, and where each sensitive read is told as it goes through.
   */
  protected readonly taintWatchers = new Set<TaintWatcher>();

  constructor(
    private readonly rules: RuleSet,
    readonly passes: ActionPasses,
    /** Ports of tabward's own local servers; filled in as they start. */
    readonly protectedPorts: Set<number>,
  ) {}

  /** A new document in a tab: the data-carrying actions that ran in the old one are over. */
  protected forgetDocument(page: Page): void {
    const scope = this.scopes.get(page);
    if (scope === undefined) return;
    for (const entry of [...this.attendants])
      if (entry.attendant.scope === scope && entry.endedAt !== undefined) this.drop(entry);
  }

  private drop(entry: AttendantEntry): void {
    const at = this.attendants.indexOf(entry);
    if (at >= 0) this.attendants.splice(at, 1);
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
  protected async verdict(facts: RequestFacts, page: Page | undefined): Promise<string | undefined> {
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
    const facts: RequestFacts = {
      method: request.method,
      url: request.url.replace(/^ws/i, 'http'),
      document: request.navigation,
      mainFrame: request.navigation,
      hop: false,
    };
    const spent = socket
      ? this.tags.spendSocket(request.url)
      : this.tags.spend(request.tag, request.method, request.url);
    const reason = spent ? this.lateTaint(spent.epoch, facts) : this.untiedVerdict(facts);
    if (reason) {
      // Told to no tab (none sent it that a hook saw): an event of its own in every watching session's audit.
      for (const watcher of this.taintWatchers)
        watcher.recordUntied?.({ method: request.method, url: request.url, reason });
      return reason;
    }
    if (!spent && this.rules.match(facts.url) && answerReadable(facts, undefined))
      this.noteSensitiveRead(facts.url);
    return undefined;
  }

  /**
   * A request a hook judged before the session's taint last grew, reaching the choke point after (queued behind the
   * page's own hanging requests, say): judged again for the taint it was not judged against.
   */
  private lateTaint(epoch: number, facts: RequestFacts): string | undefined {
    if (epoch === this.taintEpoch) return undefined;
    const tainted = this.sessionTaint(facts);
    return (
      tainted &&
      `${tainted}; it was judged before the agent read a sensitive page (or a secret was typed) and reached the network after`
    );
  }

  private untiedVerdict(facts: RequestFacts): string | undefined {
    const untied =
      "; no hook of tabward's could tie it to a tab and an action (a frame tearing down, a worker, the browser itself), so nobody can be asked";
    const ruled = this.judgeRequest(facts, { untied: true });
    if (ruled?.final) return ruled.reason;
    const reason = ruled?.reason ?? this.sessionTaint(facts);
    return reason && `${reason}${untied}`;
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

  socketStopped(request: EgressRequest, reason: string): void {
    for (const watcher of this.taintWatchers)
      watcher.recordUntied?.({ method: 'WEBSOCKET MESSAGE', url: request.url, reason });
  }

  /**
   * What left that the audit names: writes into sensitive pages, and requests to other hosts after a read. `status`
   * is what came back (0: the connection failed), undefined where the answer is not seen (browser/browserFetchGate.ts).
   */
  egressSent(request: EgressRequest, status: number | undefined): void {
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
    const answer =
      status === undefined
        ? 'sent'
        : status === 0
          ? 'sent, no answer (the connection failed)'
          : `sent, answered ${status}`;
    this.sentLog.push({ seq: ++this.seq, line: `${request.method} ${request.url}: ${answer}` });
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

  protected seen(page: Page): void {
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
      !where.untied &&
      this.passes.covers(url, kind, where.scope, where.seenAt, {
        document: facts.document,
        mainFrame: facts.mainFrame,
      });
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
    this.taintGrew();
  }

  /** Origins of the sensitive pages requested since the mark. */
  sensitiveReadsSince(mark: number): string[] {
    return [...new Set(this.reads.filter((entry) => entry.seq > mark).map((entry) => entry.origin))];
  }

  protected record(page: Page | undefined, method: string, url: string, reason: string): void {
    this.blocked.push({ seq: ++this.seq, page, method, url, reason });
    if (this.blocked.length > 200) this.blocked.shift();
  }
}
