// The verdict of the network backstop (browser/networkGuard.ts wires it to the CDP hooks and the egress proxy):
// what the rules, the passes, the session's taint and the human answering for the running action say of one
// request, one line in the stop log for each request stopped, and what the choke point let out that the audit names.
// Pure bookkeeping over the facts the hooks report; no browser call here. The stop log: browser/requestLog.ts; the
// session's taint: browser/requestTaint.ts (the judge's base classes).

import type { Page } from 'playwright-core';
import type { ActionPasses, PassHandle, PassSpec } from '../core/actionPasses.ts';
import type { Attendance, Backstop } from '../core/callPath.ts';
import { swallowed } from '../core/debug.ts';
import { originOf } from '../core/guard.ts';
import { type Attendant, type RequestFacts, webAddress } from '../core/networkHolds.ts';
import { Redactor } from '../core/redact.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import { browserOwnRequest } from './browserOwnRequests.ts';
import { type EgressPolicy, type EgressRequest, notSent } from './egressProxy.ts';
import { answerReadable, parses, portOf, safeMethods } from './requestFacts.ts';
import type { SentRequest } from './requestLog.ts';
import { RequestTags } from './requestTags.ts';
import { TaintTracker } from './requestTaint.ts';
import { passwordsSeenOn } from './snapshot/snapshot.ts';
import { StopsTold, siteOf } from './stopsTold.ts';

export type { BlockedRequest, SentRequest } from './requestLog.ts';

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

/** The masker of a page's passwords, made again only when they change: a flood of stops is told one by one. */
const maskers = new WeakMap<Page, { readonly seen: string; readonly masker: Redactor }>();
function pagePasswordMasker(page: Page | undefined): Redactor | undefined {
  const passwords = passwordsSeenOn(page);
  if (!page || passwords.length === 0) return undefined;
  const seen = passwords.join('\n');
  const known = maskers.get(page);
  if (known?.seen === seen) return known.masker;
  const masker = new Redactor(passwords);
  maskers.set(page, { seen, masker });
  return masker;
}

export class RequestJudge extends TaintTracker implements Backstop, EgressPolicy {
  /** The tokens that tie a hook's verdict to the request the choke point sees (browser/requestTags.ts). */
  readonly tags = new RequestTags();
  /** When each page was first seen, so a new_page action answers for the tabs opened after it began. */
  protected readonly seenAt = new WeakMap<Page, number>();
  protected readonly openers = new WeakMap<Page, Page>();
  protected readonly attendants: AttendantEntry[] = [];
  /** Stops outside any action told as audit events (a tab's with no action running, the choke point's untied). */
  private readonly stopsTold = new StopsTold((stop) => {
    // One session's audit that cannot be written (closed as it leaves) must not keep the others from theirs.
    for (const watcher of this.taintWatchers)
      try {
        watcher.recordUntied?.(stop);
      } catch (error) {
        swallowed('browser', 'RequestJudge.stopsTold: an audit that could not be written', error);
      }
  });
  /** The audit's line of each request told as sent, to be told again when its answer comes. */
  private readonly sentLines = new WeakMap<EgressRequest, SentRequest>();
  constructor(
    protected readonly rules: RuleSet,
    readonly passes: ActionPasses,
    /** Ports of tabward's own local servers; filled in as they start. */
    readonly protectedPorts: Set<number>,
  ) {
    super();
  }

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

  /** An approval's pass for the requests its action causes (core/actionPasses.ts). */
  open(spec: PassSpec, maxMs: number): PassHandle {
    return this.passes.open(spec, maxMs, this.seq);
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
   * The actions running now do not return before `work` is done: a popup one of them opened is judged when it loads
   * its first page for real (RouteJudge.startPopup), and its human is the one to ask.
   */
  protected holdRunningActions(work: Promise<void>): void {
    for (const entry of this.attendants)
      if (entry.endedAt === undefined) {
        entry.pending.add(work);
        void work.finally(() => entry.pending.delete(work));
      }
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
    // The question shows the page that sent it: a popup's request is asked about in its opener's action, and shown
    // as the opener's page it read as the honest page that tab was then on (an attack review).
    const sender = facts.frameUrl ?? safeUrl(page);
    // The page's passwords its snapshots read: its question shows the body, and never one of them.
    const unshown = passwordsSeenOn(page);
    const sent = {
      ...facts,
      ...(sender ? { sentFrom: sender } : {}),
      ...(unshown.length > 0 ? { unshown } : {}),
    };
    if (ruled) return asker ? this.hold(asker, sent, ruled.reason, false) : `${ruled.reason}${nobody}`;
    // After a sensitive read (or while a page holds a typed secret) every request of the agent's pages to a host
    // outside the allowed set is judged, whoever caused it: a page that watched the agent read may send what it saw.
    const tainted =
      candidates.map((candidate) => candidate.attendant.taintReason(facts)).find(Boolean) ??
      this.sessionTaint(facts);
    if (!tainted) return undefined;
    return asker ? this.hold(asker, sent, tainted, true) : `${tainted}${nobody}`;
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
    const asked = entry.attendant
      .ask(facts, reason, taint)
      .catch((error: unknown) => `it could not be asked about (${String(error)})`);
    entry.pending.add(asked);
    void asked.finally(() => entry.pending.delete(asked));
    const why = await asked;
    return why === undefined ? undefined : `${reason}; ${why}`;
  }

  /** A stop of a write into a sensitive page comes first, and no flood of other stops pushes it out of the log. */
  protected override stopRank(method: string, url: string): number {
    return !safeMethods.has(method) && this.rules.match(url.replace(/^ws/i, 'http')) !== undefined ? 0 : 1;
  }

  /**
   * A stop in a tab where no action of the agent's is running (the page's own timer, a beacon as the tab is left)
   * is also an event of its own in every watching session's audit: no action's result names it, and the tab may
   * never be acted in again (its next result would tell it). One stopped during an action is that action's.
   */

  protected override record(
    page: Page | undefined,
    method: string,
    shownUrl: string,
    shownReason: string,
  ): void {
    // A stop is told to the agent and the audit: a page's own passwords in its address (a GET login refused after
    // a read) are masked there as in its snapshots (an attack review).
    const masker = pagePasswordMasker(page);
    const url = masker ? masker.text(shownUrl) : shownUrl;
    const reason = masker ? masker.text(shownReason) : shownReason;
    super.record(page, method, url, reason);
    const scope = page ? this.scopes.get(page) : undefined;
    if (page === undefined || this.attendantsFor(page, scope).some((entry) => entry.endedAt === undefined))
      return;
    // A tab's stops are told at most once every few seconds for each kind (stopsTold.ts): a page varying its
    // addresses cannot fill the log, nor hide a refused write into a sensitive page among its other stops.
    const tab = scope ?? '(a page of no known tab)';
    const stop = { method, url, reason, ...(scope !== undefined ? { tab: scope } : {}) };
    const what = 'requests of this tab, with no action running in it,';
    const source = `tab ${tab}`;
    this.stopsTold.stop(
      { group: source, key: `${source} ${this.stopRank(method, url)}`, what, others: what },
      stop,
    );
  }

  /** Stops held back for the audit are told before a session that hears them leaves. */
  protected override watcherLeaving(): void {
    this.stopsTold.flush();
  }

  /** A document refused at its response by no tab's hook (the browser-wide gate, browser/browserFetchGate.ts). */
  recordRefused(method: string, url: string, reason: string): void {
    this.record(undefined, method, url, reason);
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
    const reason = spent ? this.lateTaint(spent.epoch, facts) : this.untiedVerdict(facts, request.worker);
    if (reason) {
      // Told to no tab (none sent it that a hook saw): an event of its own in every watching session's audit, at
      // most once every few seconds for each kind and site it went to (a worker's flood cannot fill the log).
      // A refused write into a sensitive page by its origin, the rest by site; a page making up domains shares one.
      const rank = this.stopRank(request.method, request.url);
      const place = rank === 0 ? originOf(request.url) : siteOf(request.url);
      this.stopsTold.stop(
        {
          group: `untied ${rank}`,
          key: `untied ${rank} ${place}`,
          what: `requests no tab sent to ${place}`,
          others: 'requests no tab sent to other sites',
        },
        { method: request.method, url: request.url, reason },
      );
      return reason;
    }
    if (!spent && this.rules.match(facts.url) && answerReadable(facts, undefined))
      this.noteSensitiveRead(facts.url);
    return undefined;
  }

  private untiedVerdict(facts: RequestFacts, worker: string | undefined): string | undefined {
    const untied =
      "; no hook of tabward's could tie it to a tab and an action (a frame tearing down, a worker, the browser itself), so nobody can be asked";
    const ruled = this.judgeRequest(facts, { untied: true });
    if (ruled?.final) return ruled.reason;
    const reason = ruled?.reason ?? this.sessionTaint(facts, worker);
    const own = browserOwnRequest(facts.url);
    return reason && `${own ? `${own}: ` : ''}${reason}${untied}`;
  }

  /**
   * What left that the audit names: writes into sensitive pages, and requests to other hosts after a read. `status`
   * is what came back (0: the connection failed; notSent: it failed before the request was written out), undefined
   * when it was written out and no answer has come yet, or none is seen (browser/browserFetchGate.ts).
   */
  egressSent(request: EgressRequest, status: number | undefined, resent = false): void {
    // Told again (its answer came after it was written out): the same line says so.
    const told = this.sentLines.get(request);
    if (told) {
      if (status !== undefined) told.line = sentLine(request, status, resent);
      return;
    }
    const url = request.url.replace(/^ws/i, 'http');
    const write = !safeMethods.has(request.method) && this.rules.match(url) !== undefined;
    const crossing = this.sessionTaint({
      method: request.method,
      url,
      document: false,
      mainFrame: false,
      hop: false,
    });
    // A host the human allowed takes what was read unasked, and the audit still names what went there with data
    // (a query, a body), as it names a site's own posts after a read.
    const { tainted } = this.taintView();
    const carries =
      tainted.length > 0 &&
      (request.method !== 'GET' || (/\?./.test(url) && !tainted.includes(originOf(url))));
    if (!write && !crossing && !carries) return;
    const entry = {
      seq: ++this.seq,
      line: sentLine(request, status, resent),
      rank: write ? 0 : crossing ? 1 : 2,
    };
    this.sentLines.set(request, entry);
    this.sentLog.add(entry);
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
    const passed = {
      document: facts.document,
      mainFrame: facts.mainFrame,
      hop: facts.hop,
      method: facts.method,
      ...(facts.origin !== undefined ? { origin: facts.origin } : {}),
      ...(facts.chain !== undefined ? { chain: facts.chain } : {}),
      ...(facts.body !== undefined ? { body: facts.body } : {}),
      ...(facts.bodyUnread ? { bodyUnread: true } : {}),
    };
    // A navigation to where an approval said the tab would go, or the approved form's submission, begins a chain
    // whose hops are the approval's, even when its first address matches no rule (a login page that redirects into
    // settings).
    if (facts.document && facts.mainFrame && !where.untied) this.passes.beginChain(url, where.scope, passed);
    const hit = this.rules.match(url);
    if (!hit) return undefined;
    const method = facts.method.toUpperCase();
    // A request no hook tied to a tab rides no pass: a pass is for requests of the tab its human was asked about.
    const covered = (kind: 'write' | 'navigation') =>
      !where.untied && this.passes.covers(url, kind, where.scope, where.seenAt, passed);
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
}

/** The audit's line for a request that left, by what is known of it (EgressPolicy.egressSent). */
function sentLine(request: EgressRequest, status: number | undefined, resent: boolean): string {
  const sent = resent ? 'sent twice (the site closed the first connection as it went out)' : 'sent';
  const answer =
    status === undefined
      ? sent
      : status === notSent
        ? 'not sent (the connection failed)'
        : status === 0
          ? `${sent}, no answer (the connection failed)`
          : `${sent}, answered ${status}`;
  return `${request.method} ${request.url}: ${answer}`;
}

/** A page's address, or undefined when it cannot be read (a page closing). */
function safeUrl(page: Page | undefined): string | undefined {
  try {
    return page?.url();
  } catch {
    return undefined;
  }
}
