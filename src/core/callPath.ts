// The one call path every front end acts through (docs/architecture.md): live facts → the guard → the human where
// it asks → the facts again, acting only if nothing moved → act (under a network pass when approved) → redact →
// audit. Browser tools (MCP server, terminal agent), recipe steps, relay site calls and the agent's external tools
// all describe themselves as a GuardedAction; none decides on its own. No I/O here: the action, the approver, the
// audit sink and the network backstop are handed in.

import { type PassSpec, writeTargetOf } from './actionPasses.ts';
import type { ApprovalChoice, ApprovalRequest, Approver } from './approvals.ts';
import type { AuditEntry, AuditSink } from './audit.ts';
import { asTabwardError, TabwardError } from './errors.ts';
import { ApproveAllGrants } from './grants.ts';
import {
  coveredBySiteGrant,
  type Decision,
  decide,
  type GuardFacts,
  originOf,
  taintTargets,
} from './guard.ts';
import type { BrowserMode, WritePolicy } from './kinds.ts';
import {
  type Attendant,
  hostKeyOf,
  type RequestFacts,
  requestDestination,
  taintReason,
} from './networkHolds.ts';
import type { Redactor } from './redact.ts';
import type { RuleSet } from './sensitiveRules.ts';
import { type SiteGrant, SiteGrants, siteGrantChoice, siteGrantOrigin } from './siteGrants.ts';
import { Taint } from './taint.ts';

/** What the guard needs to know about an action, less what the call path knows itself. */
export type ActionFacts = Omit<GuardFacts, 'taintedOrigins' | 'approveAll' | 'siteGrant' | 'policy' | 'mode'>;

/** An action as the browser (or the relay) reports it right now. */
export interface ActionLook {
  readonly facts: ActionFacts;
  /** What one approval is bound to (tab, document, element as shown, exact arguments). */
  readonly binding: string;
  /** The page or destination, for the human and the audit. */
  readonly url?: string;
  readonly element?: { readonly role: string; readonly name: string };
  /** For an action writing several values: which field and frame each goes to, for the human. */
  readonly fields?: readonly { readonly field: string; readonly frame: string }[];
  /** The tab's document holds a secret tabward typed: it may send only to its own host unasked. */
  readonly holdsTypedSecret?: boolean;
}

export interface GuardedAction<R> {
  readonly name: string;
  /** The audit's word for what kind of thing this is (default: the guard's kind). */
  readonly auditKind?: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** What the audit names besides the tool: a recipe step, a site tool, the calling agent. */
  readonly subject?: Readonly<Record<string, string | number>>;
  look(): Promise<ActionLook>;
  act(look: ActionLook): Promise<R>;
  /** What the front end answers when the human chose to skip: nothing was done. */
  skipped(): R;
  /** The same action with the arguments a human modified; absent: modifying is refused. */
  withArgs?(args: Readonly<Record<string, unknown>>): GuardedAction<R>;
  /** Runs once a human approved, just before acting (e.g. remember the origin a secret was approved for). */
  onApproved?(look: ActionLook): void;
  /** What the completion record keeps of the result: the elements acted on, as a saved recipe finds them. */
  auditTargets?(value: R): AuditEntry['targets'];
  /**
   * The pages the result shows (their URLs as shown and as loaded): the path taints the session by each one a
   * sensitive rule matches. Reads report what they read; the path alone records it.
   */
  readsOf?(value: R): readonly string[];
  /**
   * A read the call makes once it acted (the `snapshot` option): part of the same audited call, judged by the guard
   * like that read on its own, tainting like any read. Absent or undefined: none.
   */
  followUp?(value: R): FollowUp | undefined;
}

/**
 * A read made after the action, inside its call. It never fails the call (the action went through): what came of
 * it is handed to `done`, and the call's audit record names it (`followUps`).
 */
export interface FollowUp {
  readonly action: GuardedAction<unknown>;
  done(
    outcome: { readonly value: unknown; readonly stopped: string[] } | { readonly failure: TabwardError },
  ): void;
}

/** The network backstop, as the call path uses it. */
export interface Backstop {
  open(spec: PassSpec, maxMs: number): { end(graceMs: number): void };
  mark(): number;
  /** "METHOD URL: why", for each request stopped since the mark (of the tab `scope`, when given). */
  stoppedSince(mark: number, scope?: string): string[];
  /** Origins of sensitive pages requested (and let through) since the mark: what the action could have read. */
  sensitiveReadsSince(mark: number): string[];
  /** While an action runs, the requests its tab makes that would be stopped are held and put to its human. */
  attend(attendant: Attendant): Attendance;
  /**
   * The session's taint both ways: what it has read and allowed, for requests no action answers for (a worker's, a
   * late timer's); and each sensitive page a request of the agent's pages read, told as it goes through. A read a
   * click set off after it returned, or one between two calls, taints like one during an action.
   */
  watchTaint(
    view: () => TaintView,
    recordRead: (origin: string) => void,
    recordUntied?: (stop: UntiedStop) => void,
  ): () => void;
  /** "METHOD URL: sent, answered N" for what the choke point let out since the mark that the audit names. */
  sentSince(mark: number): string[];
}

/** A request the choke point stopped that no hook could tie to a tab (a frame tearing down, the browser's own). */
export interface UntiedStop {
  readonly method: string;
  readonly url: string;
  readonly reason: string;
}

export interface TaintView {
  readonly tainted: readonly string[];
  readonly allowed: ReadonlySet<string>;
}

export interface Attendance {
  /** Resolves once every question raised so far is answered (the action's result reports them). */
  settled(): Promise<void>;
  detach(): void;
}

export interface CallPathOptions {
  readonly rules: RuleSet;
  readonly audit: AuditSink;
  readonly policy: WritePolicy;
  readonly mode: () => BrowserMode;
  readonly redactor: () => Redactor;
  readonly backstop?: Backstop;
  readonly approveAllTtlMs?: number;
  /** The clock site grants expire by (tests move it forward). */
  readonly clock?: () => number;
  /** How long an approval's network pass may stay open while its action runs. */
  readonly passMaxMs: number;
}

export interface Caller {
  readonly frontEnd: string;
  readonly approver: Approver;
  /** Aborts when the request is cancelled or its client is gone: a late answer never acts. */
  readonly signal: AbortSignal;
}

export interface CallOutcome<R> {
  readonly value: R;
  /** What the backstop stopped while the action ran, redacted, for the front end to report. */
  readonly stopped: string[];
}

type Trail = { -readonly [K in keyof AuditEntry]?: AuditEntry[K] };

export class CallPath {
  readonly grants: ApproveAllGrants;
  /** "Allow writes like this on this site for a while" (core/siteGrants.ts). */
  readonly siteGrants: SiteGrants;
  readonly taint = new Taint();
  /** Where each tab's last action ended, in the backstop's sequence: what it stopped later is told next. */
  private readonly tabMarks = new Map<string, number>();
  /** Hosts the human let requests go to after a sensitive read (a held request they approved). */
  readonly allowedHosts = new Set<string>();
  private approvalSeq = 0;
  private callSeq = 0;
  /** Calls started and not ended yet, by call id. */
  private readonly running = new Map<string, { trail: Trail; started: number }>();
  private readonly unwatchTaint: (() => void) | undefined;
  private closed = false;

  constructor(private readonly options: CallPathOptions) {
    this.grants = new ApproveAllGrants(options.approveAllTtlMs ?? 30 * 60_000);
    this.siteGrants = new SiteGrants(options.clock);
    this.unwatchTaint = options.backstop?.watchTaint(
      () => ({ tainted: this.taint.list(), allowed: this.allowedHosts }),
      (origin) => this.taint.recordRead(origin, true, 'background'),
      (stop) => this.recordUntiedStop(stop),
    );
  }

  /** A path that is done (a recipe run's) stops taking the backstop's reads and stops counting in its taint. */
  close(): void {
    this.closed = true;
    this.unwatchTaint?.();
  }

  get rules(): RuleSet {
    return this.options.rules;
  }

  nextApprovalId(): string {
    return `a${++this.approvalSeq}`;
  }

  async run<R>(action: GuardedAction<R>, caller: Caller): Promise<CallOutcome<R>> {
    const started = Date.now();
    const trail: Trail = { tool: action.name, frontEnd: caller.frontEnd, ...this.subjectOf(action) };
    const ended = this.begin(trail, started);
    try {
      const outcome = await this.rounds(action, caller, trail);
      this.record(trail, { outcome: trail.outcome ?? 'ok', durationMs: Date.now() - started });
      return outcome;
    } catch (error) {
      const failure = asTabwardError(error);
      const redact = this.options.redactor();
      const outcome =
        failure.code === 'blocked'
          ? 'blocked'
          : failure.code === 'rejected'
            ? 'rejected'
            : failure.code === 'pending_approval'
              ? 'pending'
              : 'error';
      this.record(trail, {
        outcome,
        error: redact.text(failure.describe()),
        durationMs: Date.now() - started,
      });
      const hint = failure.hint === undefined ? undefined : redact.text(failure.hint);
      throw new TabwardError(failure.code, redact.text(failure.message), hint);
    } finally {
      ended();
    }
  }

  /** Records the call's start (before anything can fail or hang) and keeps it among the running ones. */
  private begin(trail: Trail, started: number): () => void {
    const call = `${callPrefix}-${++this.callSeq}`;
    trail.call = call;
    this.options.audit.record({
      time: new Date(started).toISOString(),
      call,
      frontEnd: trail.frontEnd ?? '?',
      tool: trail.tool ?? '?',
      mode: this.options.mode(),
      ...(trail.subject ? { subject: trail.subject } : {}),
      outcome: 'started',
    });
    this.running.set(call, { trail, started });
    return () => this.running.delete(call);
  }

  /**
   * On shutdown: waits (at most `ms`) for the calls still running to end, then records the end of the rest,
   * so that no call is left with a start and no end.
   */
  async settle(ms: number, why: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.running.size > 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20));
    for (const [call, { trail, started }] of this.running) {
      this.running.delete(call);
      this.record(trail, { outcome: 'error', error: why, durationMs: Date.now() - started });
    }
  }

  /**
   * A request the choke point stopped with no tab or action to tell it to: an event of its own in the audit, so
   * that the log says what was kept from leaving even when no call was running.
   */
  private recordUntiedStop(stop: UntiedStop): void {
    const redact = this.options.redactor();
    this.recordEvent({
      tool: '(egress)',
      kind: 'request',
      frontEnd: 'browser',
      args: { method: stop.method },
      mode: this.options.mode(),
      url: redact.text(stop.url),
      decision: 'block',
      reason: redact.text(stop.reason),
      outcome: 'blocked',
      durationMs: 0,
    });
  }

  /** Records something decided outside a call (the login-wall switch) in the same log. */
  recordEvent(entry: Omit<AuditEntry, 'time'>): void {
    this.options.audit.record({ time: new Date().toISOString(), ...entry });
  }

  private async rounds<R>(first: GuardedAction<R>, caller: Caller, trail: Trail): Promise<CallOutcome<R>> {
    let action = first;
    let approved: string | undefined;
    for (let round = 0; round < 3; round++) {
      const look = await action.look();
      // Judged on the facts just read: a grant never covers a page that moved to another origin meanwhile.
      const siteGrant = this.siteGrants.covering(action.name, look.facts);
      const decision = this.decide(action, look, siteGrant);
      this.note(trail, action, look, decision);
      if (decision.verdict === 'block')
        throw new TabwardError('blocked', decision.reason, 'No approval can override this.');
      if (decision.verdict === 'allow') {
        // A call the grant answered for is audited as the grant's; the call that gave it keeps its human.
        if (siteGrant && decision.reason.startsWith(coveredBySiteGrant)) {
          trail.approver ??= `site grant (given through ${siteGrant.givenThrough})`;
          trail.choice = siteGrantChoice(siteGrant);
        }
        return this.actAndFollow(action, look, undefined, trail, caller);
      }
      if (approved === look.binding) {
        action.onApproved?.(look);
        return this.actAndFollow(action, look, passFor(look.facts, decision), trail, caller);
      }
      const choice = await this.ask(action, look, decision, caller);
      // A late answer to a withdrawn question (cancelled request, client gone) must never act.
      if (caller.signal.aborted)
        throw new TabwardError(
          'rejected',
          'The call was cancelled while waiting for approval; nothing was done.',
        );
      // The audit names the channel that answered (elicitation, tabward approvals, the page), not just the desk.
      trail.approver = choice.by ?? caller.approver.name;
      trail.choice = choice.choice;
      if (choice.choice === 'pending')
        throw new TabwardError(
          'pending_approval',
          `Waiting for the human's approval of ${action.name} (question ${choice.question}, ${choice.where}); nothing was done yet.${choice.note ? ` ${choice.note}` : ''}`,
          'Call the same tool again with the same arguments to wait on that question (it is never asked twice).',
        );
      if (choice.choice === 'reject' && choice.by === 'nobody')
        throw new TabwardError(
          'rejected',
          `${action.name} needs a human's approval and nobody could be asked; nothing was done. ${choice.reason ?? ''}`.trim(),
          `It needs one because ${decision.reason}.`,
        );
      if (choice.choice === 'reject') {
        throw new TabwardError(
          'rejected',
          `The user rejected ${action.name}${choice.reason ? `: ${choice.reason}` : '.'}`,
          `The human was asked through ${trail.approver}, because ${decision.reason}.`,
        );
      }
      if (choice.choice === 'skip') {
        trail.outcome = 'skipped';
        return { value: action.skipped(), stopped: [] };
      }
      if (choice.choice === 'revoke-site-grants') {
        const revoked = this.siteGrants.clear();
        throw new TabwardError(
          'rejected',
          `The user revoked the site grants (${revoked}) and rejected ${action.name}.`,
        );
      }
      if (choice.choice === 'site-grant')
        trail.choice = this.giveSiteGrant(action, look, decision, choice, caller);
      // A yes to "data read on a sensitive page could be sent to X" lets X receive requests for the session: the
      // choke point then holds none of them again (the question says so).
      if (decision.rule === 'taint' && choice.choice !== 'modify') this.allowTaintTargets(look.facts);
      if (choice.choice === 'approve-all' && decision.approveAllAllowed)
        this.grants.grant(
          choice.scope === 'server' ? { kind: 'server' } : { kind: 'tool', tool: action.name },
        );
      if (choice.choice === 'modify') {
        if (!action.withArgs) throw new TabwardError('rejected', `${action.name} cannot be modified.`);
        action = action.withArgs(choice.args);
        approved = (await action.look()).binding;
      } else approved = look.binding;
      // The approval covers this exact action in this document: the next round reads the page again and acts
      // only if nothing moved while the human was deciding.
    }
    throw new TabwardError(
      'rejected',
      `The page kept changing while ${action.name} waited for approval; not done.`,
      'Try again.',
    );
  }

  private allowTaintTargets(facts: ActionFacts): void {
    for (const origin of taintTargets(facts)) {
      const host = hostKeyOf(origin);
      if (host) this.allowedHosts.add(host);
    }
  }

  private decide(action: GuardedAction<unknown>, look: ActionLook, siteGrant?: SiteGrant): Decision {
    return decide(
      {
        ...look.facts,
        mode: this.options.mode(),
        taintedOrigins: this.taint.list(),
        policy: this.options.policy,
        approveAll: this.grants.covers(action.name),
        ...(siteGrant ? { siteGrant: this.siteGrants.describe(siteGrant) } : {}),
      },
      this.options.rules,
    );
  }

  /**
   * The origin a site grant may be offered for: only where the guard asks under rule 6 (an ordinary write,
   * approve-all allowed, not sensitive) and the action stays on one origin (core/siteGrants.ts).
   */
  private siteGrantOffer(look: ActionLook, decision: Decision): string | undefined {
    if (decision.verdict !== 'ask' || decision.rule !== 'write') return undefined;
    if (!decision.approveAllAllowed || decision.sensitive) return undefined;
    return siteGrantOrigin(look.facts);
  }

  /** Grants what the human chose where it was offered; elsewhere the answer counts as one approval. */
  private giveSiteGrant(
    action: GuardedAction<unknown>,
    look: ActionLook,
    decision: Decision,
    choice: ApprovalChoice & { choice: 'site-grant' },
    caller: Caller,
  ): string {
    const origin = this.siteGrantOffer(look, decision);
    if (!origin) return 'approve';
    return siteGrantChoice(this.siteGrants.grant(origin, action.name, choice.minutes, caller.approver.name));
  }

  /** Acts, then makes the action's follow-up read (if it has one) inside the same call. */
  private async actAndFollow<R>(
    action: GuardedAction<R>,
    look: ActionLook,
    pass: PassSpec | undefined,
    trail: Trail,
    caller: Caller,
  ): Promise<CallOutcome<R>> {
    const outcome = await this.act(action, look, pass, trail, caller);
    const next = action.followUp?.(outcome.value);
    // A cancelled call starts no read of its own: nobody is there to be shown it.
    if (next && !caller.signal.aborted) await this.follow(next, trail, caller);
    return outcome;
  }

  /**
   * A follow-up read: looked at, judged by the guard and done like that read on its own, but recorded in the
   * call's own record. It asks nobody: a read the guard would not allow on its own is not made, and the call says
   * why. Whatever happens, the call it follows went through.
   */
  private async follow(next: FollowUp, trail: Trail, caller: Caller): Promise<void> {
    const { action } = next;
    const own: Trail = {};
    let name = action.name;
    let outcome: Parameters<FollowUp['done']>[0];
    try {
      const look = await action.look();
      if (look.facts.tab) name = `${action.name} of ${look.facts.tab.id}`;
      const decision = this.decide(action, look);
      if (decision.verdict !== 'allow')
        throw new TabwardError(
          decision.verdict === 'block' ? 'blocked' : 'rejected',
          `${action.name} was not made after the action: ${decision.reason}.`,
          `Call ${action.name} on its own.`,
        );
      outcome = await this.act(action, look, undefined, own, caller);
      trail.followUps = [...(trail.followUps ?? []), `${name}: ok`];
    } catch (error) {
      const failure = asTabwardError(error);
      const redact = this.options.redactor();
      const hint = failure.hint === undefined ? undefined : redact.text(failure.hint);
      outcome = { failure: new TabwardError(failure.code, redact.text(failure.message), hint) };
      trail.followUps = [
        ...(trail.followUps ?? []),
        redact.text(`${name}: ${failure.code}: ${failure.message}`),
      ];
    }
    // What the choke point stopped or let out while it read is the call's too.
    if (own.blocked) trail.blocked = [...(trail.blocked ?? []), ...own.blocked].slice(0, 5);
    if (own.sent) trail.sent = [...(trail.sent ?? []), ...own.sent].slice(0, 10);
    next.done(outcome);
  }

  /** Each page a result showed that a sensitive rule matches taints the session by its origin. */
  private recordReads(urls: readonly string[]): void {
    for (const url of urls) if (this.options.rules.match(url)) this.taint.recordRead(originOf(url), true);
  }

  private async act<R>(
    action: GuardedAction<R>,
    look: ActionLook,
    pass: PassSpec | undefined,
    trail: Trail,
    caller: Caller,
  ): Promise<CallOutcome<R>> {
    trail.outcome = 'ok';
    const { backstop } = this.options;
    const mark = backstop?.mark() ?? 0;
    const opened = pass && backstop ? backstop.open(pass, this.options.passMaxMs) : undefined;
    // A read cannot make the page send anything: only actions answer for their tab's requests.
    const attendance =
      look.facts.kind === 'read'
        ? undefined
        : backstop?.attend(
            this.attendant(action, look, caller, trail, () => backstop.sensitiveReadsSince(mark)),
          );
    const earlier = this.stoppedAfterLastAction(look.facts.tab?.id);
    const stoppedNow = () => {
      const lines = (backstop?.stoppedSince(mark) ?? []).map((line) => this.options.redactor().text(line));
      const told = [...earlier, ...lines];
      if (told.length > 0) trail.blocked = told.slice(0, 5);
      return lines;
    };
    const sentNow = () => {
      const lines = (backstop?.sentSince(mark) ?? []).map((line) => this.options.redactor().text(line));
      if (lines.length > 0) trail.sent = lines.slice(0, 10);
    };
    try {
      const value = await action.act(look);
      const targets = action.auditTargets?.(value);
      if (targets) trail.targets = this.options.redactor().value(targets);
      await attendance?.settled();
      sentNow();
      this.recordReads(action.readsOf?.(value) ?? []);
      return { value, stopped: [...earlier, ...stoppedNow()] };
    } catch (error) {
      await attendance?.settled();
      sentNow();
      // An action whose request the backstop stopped fails in the browser: say what was stopped and why.
      const stopped = stoppedNow();
      // A read makes the page send nothing: its own failure is told as it is, not as the page's stopped requests.
      if (stopped.length > 0 && look.facts.kind !== 'read')
        throw new TabwardError(
          'blocked',
          stoppedSummary(stopped),
          'A human approval is needed for that page.',
        );
      throw error;
    } finally {
      const tab = look.facts.tab?.id;
      if (tab !== undefined && backstop) this.tabMarks.set(tab, backstop.mark());
      attendance?.detach();
      // A redirect or a late submit right after the action is still its doing; later requests are not. A pass
      // with no tab (new_page) ends with its action: another action's new tab must not ride on it.
      opened?.end(pass?.scope === undefined ? 0 : 2_000);
    }
  }

  /**
   * What the backstop stopped in this tab after its previous action returned (a request sent too late to be
   * asked about, a page's own write): told with the next result in the tab, so a refusal is never silent.
   */
  private stoppedAfterLastAction(tab: string | undefined): string[] {
    const since = tab === undefined ? undefined : this.tabMarks.get(tab);
    if (since === undefined || !this.options.backstop) return [];
    return this.options.backstop
      .stoppedSince(since, tab)
      .map((line) => this.options.redactor().text(`after the previous action in this tab returned: ${line}`));
  }

  /**
   * The human who answers for this action also answers for the requests it makes that tabward did not
   * predict: each is held and asked about with what it really is (method, host and path), never approved in
   * bulk. A site the human lets a tainted request go to stays allowed for the session.
   */
  private attendant<R>(
    action: GuardedAction<R>,
    look: ActionLook,
    caller: Caller,
    trail: Trail,
    readsNow: () => string[],
  ): Attendant {
    const { facts } = look;
    const navigationOnly = facts.kind === 'navigate';
    const acting = [
      ...facts.frames.slice(0, 1).map((frame) => originOf(frame.url, frame.creatorUrl)),
      ...(facts.destination ? [originOf(facts.destination)] : []),
      ...(facts.effects ?? []).map((effect) => originOf(effect.url)),
    ];
    // A page a secret is typed into (or holds one) is treated as read: its requests to another host may carry
    // the secret (a keylogger's beacon, a form whose action is elsewhere).
    const secretAt = look.holdsTypedSecret || (facts.secrets?.length ?? 0) > 0 ? acting.slice(0, 1) : [];
    const carries = facts.carriesData || navigationOnly;
    // Only the secret's own host may receive it unasked: not even a form action the page points elsewhere.
    const secretLeak = (request: RequestFacts) =>
      secretAt.length > 0
        ? taintReason(request, {
            tainted: secretAt,
            allowed: new Set(),
            acting: secretAt,
            navigationOnly: false,
          })
        : undefined;
    const refused = new Set<string>();
    return {
      scope: facts.tab?.id,
      live: () => !this.closed,
      carriesData: facts.carriesData || secretAt.length > 0,
      // A sensitive page the action itself just read counts at once: a script may read and send in one call.
      taintReason: (request) =>
        (carries
          ? taintReason(request, {
              tainted: [...new Set([...this.taint.list(), ...readsNow()])],
              allowed: this.allowedHosts,
              acting,
              navigationOnly,
            })
          : undefined) ?? secretLeak(request),
      ask: async (request, reason, taint) => {
        const destination = requestDestination(request.method, request.url);
        // One refusal answers for the same request again (a page retrying in a loop).
        if (refused.has(destination) || caller.signal.aborted) return false;
        const choice = await this.askHeld(action, look, caller, request, { reason, taint }, destination);
        const approved = choice === 'approve' || choice === 'approve-all';
        const line = `${destination}: held (${reason}); ${approved ? 'approved' : 'refused'} through ${caller.approver.name}`;
        trail.held = [...(trail.held ?? []), this.options.redactor().text(line)].slice(0, 10);
        if (!approved) refused.add(destination);
        else if (taint) {
          const host = hostKeyOf(request.url);
          if (host) this.allowedHosts.add(host);
        }
        return approved;
      },
    };
  }

  private async askHeld(
    action: GuardedAction<unknown>,
    look: ActionLook,
    caller: Caller,
    request: RequestFacts,
    held: { readonly reason: string; readonly taint: boolean },
    destination: string,
  ): Promise<ApprovalChoice['choice']> {
    try {
      const choice = await caller.approver.ask(
        this.redacted({
          id: this.nextApprovalId(),
          tool: action.name,
          kind: 'request',
          reason: `${action.name} made the page send a request tabward did not predict: ${held.reason}`,
          // Held by a rule: it goes to a sensitive page. Held by the taint: to a plain page, with what was read.
          rule: held.taint ? 'network-taint' : 'network',
          sensitive: true,
          approveAllAllowed: false,
          url: request.url,
          origin: originOf(request.url),
          destination,
          ...(look.element ? { element: look.element } : {}),
          args: { method: request.method, url: request.url },
          frontEnd: caller.frontEnd,
        }),
        caller.signal,
      );
      // A held request cannot wait past its action: no answer yet is a no.
      return caller.signal.aborted || choice.choice === 'pending' ? 'reject' : choice.choice;
    } catch {
      return 'reject';
    }
  }

  private ask(
    action: GuardedAction<unknown>,
    look: ActionLook,
    decision: Decision & { verdict: 'ask' },
    caller: Caller,
  ): Promise<ApprovalChoice> {
    const url = look.url ?? '';
    const siteGrantOrigin = this.siteGrantOffer(look, decision);
    const inForce = this.siteGrants.list().map((grant) => this.siteGrants.describe(grant));
    return caller.approver.ask(
      this.redacted({
        id: this.nextApprovalId(),
        tool: action.name,
        kind: look.facts.kind,
        reason: decision.reason,
        rule: decision.rule,
        sensitive: decision.sensitive,
        approveAllAllowed: decision.approveAllAllowed,
        url,
        origin: url ? originOf(url) : '',
        ...destinationOf(look.facts),
        ...(look.fields ? { fields: look.fields } : {}),
        ...(look.element ? { element: look.element } : {}),
        args: action.args,
        frontEnd: caller.frontEnd,
        ...(siteGrantOrigin ? { siteGrant: { origin: siteGrantOrigin, tool: action.name } } : {}),
        ...(inForce.length > 0 ? { siteGrantsInForce: inForce } : {}),
        bindsTo: look.binding,
      }),
      caller.signal,
      { mayPend: true },
    );
  }

  /**
   * A question as it may leave tabward: it travels to the approver (an MCP client's elicitation, a terminal, a
   * page), so every string in it the page or the agent chose passes the redactor: a URL the page put a typed
   * secret into, an element named after it, the arguments.
   */
  private redacted(request: ApprovalRequest): ApprovalRequest {
    const redact = this.options.redactor();
    return {
      ...request,
      reason: redact.text(request.reason),
      url: redact.text(request.url),
      origin: redact.text(request.origin),
      ...(request.destination !== undefined ? { destination: redact.text(request.destination) } : {}),
      ...(request.element
        ? { element: { role: redact.text(request.element.role), name: redact.text(request.element.name) } }
        : {}),
      ...(request.fields
        ? {
            fields: request.fields.map((target) => ({
              field: redact.text(target.field),
              frame: redact.text(target.frame),
            })),
          }
        : {}),
      args: redact.value(request.args) as Record<string, unknown>,
      ...(request.siteGrant
        ? { siteGrant: { origin: redact.text(request.siteGrant.origin), tool: request.siteGrant.tool } }
        : {}),
      ...(request.siteGrantsInForce
        ? { siteGrantsInForce: request.siteGrantsInForce.map((line) => redact.text(line)) }
        : {}),
    };
  }

  private note(trail: Trail, action: GuardedAction<unknown>, look: ActionLook, decision: Decision): void {
    const redact = this.options.redactor();
    trail.kind = action.auditKind ?? look.facts.kind;
    trail.args = redact.value(action.args);
    trail.mode = this.options.mode();
    trail.decision = decision.verdict;
    trail.reason = decision.reason;
    if (decision.verdict !== 'allow') trail.rule = decision.rule;
    const { tab } = look.facts;
    if (tab) {
      trail.tab = tab.id;
      trail.owner = tab.ownedByAgent ? 'agent' : 'user';
    }
    if (look.url) trail.url = redact.text(look.url);
    if (look.element) trail.element = `${look.element.role} "${look.element.name}"`;
  }

  private subjectOf(action: GuardedAction<unknown>): Trail {
    return action.subject ? { subject: { ...action.subject } } : {};
  }

  private record(trail: Trail, end: Pick<AuditEntry, 'outcome' | 'durationMs'> & { error?: string }): void {
    this.options.audit.record({
      time: new Date().toISOString(),
      ...(trail.call ? { call: trail.call } : {}),
      frontEnd: trail.frontEnd ?? '?',
      tool: trail.tool ?? '?',
      kind: trail.kind ?? '?',
      args: trail.args ?? {},
      mode: trail.mode ?? this.options.mode(),
      decision: trail.decision ?? 'allow',
      ...pick(trail, [
        'tab',
        'owner',
        'url',
        'element',
        'targets',
        'subject',
        'rule',
        'reason',
        'approver',
        'choice',
        'blocked',
        'held',
        'sent',
        'followUps',
      ]),
      ...end,
    });
  }
}

/** Call ids are unique across the processes that share one audit log: a random prefix per process. */
const callPrefix = Math.random().toString(36).slice(2, 8);

export function stoppedSummary(lines: readonly string[]): string {
  const more = lines.length > 5 ? ` (and ${lines.length - 5} more)` : '';
  return `tabward stopped ${lines.length} request(s) of this tab${more}:\n${lines.slice(0, 5).join('\n')}`;
}

/**
 * The requests an approved action may send to sensitive pages: each link and form action the human saw, once, from
 * the tab they were asked about; and navigations within those origins (a redirect after a post, the approved
 * destination). An action with no predicted target (a script button, a script, a resize, a site tool) opens no write
 * at all: whatever it makes the page send to a sensitive page is held and asked as a question of its own, showing
 * that request (docs/architecture.md, "Passes").
 */
export function passFor(facts: ActionFacts, decision: Decision): PassSpec | undefined {
  if (decision.verdict !== 'ask' || !decision.sensitive) return undefined;
  const frameOrigins = facts.frames.slice(0, 1).map((frame) => originOf(frame.url, frame.creatorUrl));
  const effects = facts.effects ?? [];
  // A navigation the human approved is a GET: it opens no write toward its destination (a page being left could
  // post there under its cover).
  const writeDestination = facts.kind === 'navigate' ? undefined : facts.destination;
  const writeTargets = [writeDestination, ...effects.map((effect) => effect.url)].flatMap((url) => {
    const key = url ? writeTargetOf(url) : undefined;
    return key ? [key] : [];
  });
  const navigationOrigins = [
    ...(facts.destination ? [originOf(facts.destination)] : []),
    ...effects.map((effect) => originOf(effect.url)),
    ...frameOrigins,
  ];
  return {
    writeTargets,
    navigationOrigins,
    topFrame: facts.frames.length <= 1,
    ...(facts.tab ? { scope: facts.tab.id } : {}),
  };
}

/** Where the guard predicts the action sends, as the human is shown it: a navigation, a form, a link. */
function destinationOf(facts: ActionFacts): { destination?: string } {
  if (facts.destination) return { destination: requestDestination('GET', facts.destination) };
  const [effect] = facts.effects ?? [];
  if (!effect) return {};
  const shown = requestDestination(effect.submitsForm ? 'SUBMIT' : 'GET', effect.url);
  return { destination: effect.submitsForm ? shown.replace(/^SUBMIT/, 'form submit to') : shown };
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
