// The one call path every front end acts through (DESIGN.md section 2): live facts → the guard → the human where
// it asks → the facts again, acting only if nothing moved → act (under a network pass when approved) → redact →
// audit. Browser tools (MCP server, terminal agent), recipe steps, relay site calls and the agent's external tools
// all describe themselves as a GuardedAction; none decides on its own. No I/O here: the action, the approver, the
// audit sink and the network backstop are handed in.

import { type PassSpec, writeTargetOf } from './actionPasses.ts';
import type { ApprovalChoice, Approver } from './approvals.ts';
import type { AuditEntry, AuditSink } from './audit.ts';
import { asTabwardError, TabwardError } from './errors.ts';
import { ApproveAllGrants } from './grants.ts';
import { type Decision, decide, type GuardFacts, originOf } from './guard.ts';
import type { BrowserMode, WritePolicy } from './kinds.ts';
import type { Redactor } from './redact.ts';
import type { RuleSet } from './sensitiveRules.ts';
import { Taint } from './taint.ts';

/** What the guard needs to know about an action, less what the call path knows itself. */
export type ActionFacts = Omit<GuardFacts, 'taintedOrigins' | 'approveAll' | 'policy' | 'mode'>;

/** An action as the browser (or the relay) reports it right now. */
export interface ActionLook {
  readonly facts: ActionFacts;
  /** What one approval is bound to (tab, document, element as shown, exact arguments). */
  readonly binding: string;
  /** The page or destination, for the human and the audit. */
  readonly url?: string;
  readonly element?: { readonly role: string; readonly name: string };
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
}

/** The network backstop, as the call path uses it. */
export interface Backstop {
  open(spec: PassSpec, maxMs: number): { end(graceMs: number): void };
  mark(): number;
  /** "METHOD URL: why", for each request stopped since the mark. */
  stoppedSince(mark: number): string[];
  /** Origins of sensitive pages requested (and let through) since the mark: what the action could have read. */
  sensitiveReadsSince(mark: number): string[];
}

export interface CallPathOptions {
  readonly rules: RuleSet;
  readonly audit: AuditSink;
  readonly policy: WritePolicy;
  readonly mode: () => BrowserMode;
  readonly redactor: () => Redactor;
  readonly backstop?: Backstop;
  readonly approveAllTtlMs?: number;
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
  readonly taint = new Taint();
  private approvalSeq = 0;

  constructor(private readonly options: CallPathOptions) {
    this.grants = new ApproveAllGrants(options.approveAllTtlMs ?? 30 * 60_000);
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
    try {
      const outcome = await this.rounds(action, caller, trail);
      this.record(trail, { outcome: trail.outcome ?? 'ok', durationMs: Date.now() - started });
      return outcome;
    } catch (error) {
      const failure = asTabwardError(error);
      const redact = this.options.redactor();
      const outcome =
        failure.code === 'blocked' ? 'blocked' : failure.code === 'rejected' ? 'rejected' : 'error';
      this.record(trail, {
        outcome,
        error: redact.text(failure.describe()),
        durationMs: Date.now() - started,
      });
      const hint = failure.hint === undefined ? undefined : redact.text(failure.hint);
      throw new TabwardError(failure.code, redact.text(failure.message), hint);
    }
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
      const decision = this.decide(action, look);
      this.note(trail, action, look, decision);
      if (decision.verdict === 'block')
        throw new TabwardError('blocked', decision.reason, 'No approval can override this.');
      if (decision.verdict === 'allow') return this.act(action, look, undefined, trail);
      if (approved === look.binding) {
        action.onApproved?.(look);
        return this.act(action, look, passFor(look.facts, decision), trail);
      }
      const choice = await this.ask(action, look, decision, caller);
      // A late answer to a withdrawn question (cancelled request, client gone) must never act.
      if (caller.signal.aborted)
        throw new TabwardError(
          'rejected',
          'The call was cancelled while waiting for approval; nothing was done.',
        );
      trail.approver = caller.approver.name;
      trail.choice = choice.choice;
      if (choice.choice === 'reject') {
        throw new TabwardError(
          'rejected',
          `The user rejected ${action.name}${choice.reason ? `: ${choice.reason}` : '.'}`,
          `The human was asked through ${caller.approver.name}, because ${decision.reason}.`,
        );
      }
      if (choice.choice === 'skip') {
        trail.outcome = 'skipped';
        return { value: action.skipped(), stopped: [] };
      }
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

  private decide(action: GuardedAction<unknown>, look: ActionLook): Decision {
    return decide(
      {
        ...look.facts,
        mode: this.options.mode(),
        taintedOrigins: this.taint.list(),
        policy: this.options.policy,
        approveAll: this.grants.covers(action.name),
      },
      this.options.rules,
    );
  }

  private async act<R>(
    action: GuardedAction<R>,
    look: ActionLook,
    pass: PassSpec | undefined,
    trail: Trail,
  ): Promise<CallOutcome<R>> {
    trail.outcome = 'ok';
    const { backstop } = this.options;
    const mark = backstop?.mark() ?? 0;
    const opened = pass && backstop ? backstop.open(pass, this.options.passMaxMs) : undefined;
    const stoppedNow = () => {
      for (const origin of backstop?.sensitiveReadsSince(mark) ?? []) this.taint.recordRead(origin, true);
      const lines = (backstop?.stoppedSince(mark) ?? []).map((line) => this.options.redactor().text(line));
      if (lines.length > 0) trail.blocked = lines.slice(0, 5);
      return lines;
    };
    try {
      const value = await action.act(look);
      return { value, stopped: stoppedNow() };
    } catch (error) {
      // An action whose request the backstop stopped fails in the browser: say what was stopped and why.
      const stopped = stoppedNow();
      if (stopped.length > 0)
        throw new TabwardError(
          'blocked',
          stoppedSummary(stopped),
          'A human approval is needed for that page.',
        );
      throw error;
    } finally {
      // A redirect or a late submit right after the action is still its doing; later requests are not.
      opened?.end(2_000);
    }
  }

  private ask(
    action: GuardedAction<unknown>,
    look: ActionLook,
    decision: Decision & { verdict: 'ask' },
    caller: Caller,
  ): Promise<ApprovalChoice> {
    const url = look.url ?? '';
    return caller.approver.ask(
      {
        id: this.nextApprovalId(),
        tool: action.name,
        kind: look.facts.kind,
        reason: decision.reason,
        rule: decision.rule,
        sensitive: decision.sensitive,
        approveAllAllowed: decision.approveAllAllowed,
        url,
        origin: url ? originOf(url) : '',
        ...(look.element ? { element: look.element } : {}),
        args: this.options.redactor().value(action.args),
        frontEnd: caller.frontEnd,
      },
      caller.signal,
    );
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
        'subject',
        'rule',
        'reason',
        'approver',
        'choice',
        'blocked',
      ]),
      ...end,
    });
  }
}

export function stoppedSummary(lines: readonly string[]): string {
  const more = lines.length > 5 ? ` (and ${lines.length - 5} more)` : '';
  return `tabward stopped ${lines.length} request(s) this action caused${more}:\n${lines.slice(0, 5).join('\n')}`;
}

/**
 * The requests an approved action may send to sensitive pages: toward the links and form actions the human
 * saw; with none predicted (a script button, a script, a site tool), to the origin of the page it acts on; and
 * navigations within those origins (a redirect after a post, the approved destination).
 */
export function passFor(facts: ActionFacts, decision: Decision): PassSpec | undefined {
  if (decision.verdict !== 'ask' || !decision.sensitive) return undefined;
  const frameOrigins = facts.frames.slice(0, 1).map((frame) => originOf(frame.url, frame.creatorUrl));
  const effects = facts.effects ?? [];
  const writeTargets = [facts.destination, ...effects.map((effect) => effect.url)].flatMap((url) => {
    const key = url ? writeTargetOf(url) : undefined;
    return key ? [key] : [];
  });
  const navigationOrigins = [
    ...(facts.destination ? [originOf(facts.destination)] : []),
    ...effects.map((effect) => originOf(effect.url)),
    ...frameOrigins,
  ];
  const scriptLike = effects.length === 0 && !facts.destination;
  return {
    writeTargets,
    writeOrigins: scriptLike ? frameOrigins : [],
    navigationOrigins,
    ...(facts.tab ? { scope: facts.tab.id } : {}),
  };
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
