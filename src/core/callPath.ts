// The one call path every front end acts through (docs/architecture.md "The call path's parts"): live facts → the
// guard → the human where it asks → the facts again, acting only if nothing moved → act (under a network pass when
// approved) → its follow-up read → redact → audit. Browser tools (MCP server, terminal agent), recipe steps, relay
// site calls and the agent's external tools all describe themselves as a GuardedAction; none decides on its own.
// No I/O here: the action, the approver, the audit sink and the network backstop are handed in. This file wires
// the parts, one job each: approvalRounds.ts, acting.ts, heldRequests.ts, approvedPass.ts, callTrail.ts,
// questionRedaction.ts, and guardState.ts, which alone changes what the guard remembers.

import { Acting } from './acting.ts';
import type { PassSpec } from './actionPasses.ts';
import { ApprovalRounds } from './approvalRounds.ts';
import type { AuditEntry } from './audit.ts';
import { CallTrail, type Trail } from './callTrail.ts';
import type {
  ActionLook,
  Caller,
  CallOutcome,
  CallPathOptions,
  FollowUp,
  GuardedAction,
} from './callTypes.ts';
import { asTabwardError, TabwardError } from './errors.ts';
import { GuardState } from './guardState.ts';
import { HeldRequests } from './heldRequests.ts';
import type { RuleSet } from './sensitiveRules.ts';

export { passFor, stoppedSummary, stopsCount } from './approvedPass.ts';
export type { Attendance, Backstop, TaintView, UntiedStop } from './backstop.ts';
export type {
  ActionFacts,
  ActionLook,
  Caller,
  CallOutcome,
  CallPathOptions,
  FollowUp,
  GuardedAction,
} from './callTypes.ts';

export class CallPath {
  /** Taint, approve-all grants, site grants, hosts allowed: changed only through its methods. */
  readonly state: GuardState;
  private readonly trail: CallTrail;
  private readonly rounds: ApprovalRounds;
  private readonly acting: Acting;
  private approvalSeq = 0;
  private readonly unwatchTaint: ((workerOrigins?: ReadonlySet<string>) => void) | undefined;
  private closed = false;

  constructor(private readonly options: CallPathOptions) {
    this.state = new GuardState({
      rules: options.rules,
      ...(options.approveAllTtlMs ? { approveAllTtlMs: options.approveAllTtlMs } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    this.trail = new CallTrail(options.audit, options.mode, options.redactor);
    const nextId = () => this.nextApprovalId();
    const held = new HeldRequests({
      state: this.state,
      redactor: options.redactor,
      live: () => !this.closed,
      nextId,
    });
    this.acting = new Acting({
      backstop: options.backstop,
      redactor: options.redactor,
      passMaxMs: options.passMaxMs,
      state: this.state,
      held,
    });
    this.rounds = new ApprovalRounds({
      options,
      state: this.state,
      trail: this.trail,
      nextId,
      act: (action, look, pass, trail, caller) => this.actAndFollow(action, look, pass, trail, caller),
    });
    this.unwatchTaint = options.backstop?.watchTaint(
      () => ({
        tainted: this.state.networkTaintedOrigins(),
        allowed: this.state.allowed,
        secrets: this.state.typedSecretOrigins(),
        secretAllowed: this.state.secretAllowed,
      }),
      (origin) => this.state.recordBackgroundRead(origin),
      (stop) => this.trail.untiedStop(stop),
      (origin) => this.state.recordTypedSecret(origin),
    );
  }

  /**
   * A secret is about to be typed into a document of `origin` (a recipe's `type` step): the path's state records it
   * and the backstop taints every session by it and cuts connections it now covers, as for a secret the agent
   * types (browser/tabWatchers.ts). With no backstop, the state alone.
   */
  secretTyped(origin: string): void {
    this.state.recordTypedSecret(origin);
    this.options.backstop?.secretTyped(origin);
  }

  /**
   * A path that is done (a recipe run's) stops taking the backstop's reads and stops counting in its taint, except
   * for the service and shared workers of `workerOrigins` (the sites the run loaded), which outlive it.
   */
  close(workerOrigins?: ReadonlySet<string>): void {
    this.closed = true;
    this.unwatchTaint?.(workerOrigins);
  }

  get rules(): RuleSet {
    return this.options.rules;
  }

  nextApprovalId(): string {
    return `a${++this.approvalSeq}`;
  }

  async run<R>(action: GuardedAction<R>, caller: Caller): Promise<CallOutcome<R>> {
    const started = Date.now();
    const { trail, ended } = this.trail.begin(action, caller.frontEnd, started);
    try {
      const outcome = await this.rounds.run(action, caller, trail);
      this.trail.succeeded(trail, started);
      return outcome;
    } catch (error) {
      throw this.trail.failed(trail, error, started);
    } finally {
      ended();
    }
  }

  /**
   * On shutdown: waits (at most `ms`) for the calls still running to end, then records the end of the rest,
   * so that no call is left with a start and no end.
   */
  settle(ms: number, why: string): Promise<void> {
    return this.trail.settle(ms, why);
  }

  /** Records something decided outside a call (the login-wall switch) in the same log. */
  recordEvent(entry: Omit<AuditEntry, 'time'>): void {
    this.trail.event(entry);
  }

  /** Acts, then makes the action's follow-up read (if it has one) inside the same call. */
  private async actAndFollow<R>(
    action: GuardedAction<R>,
    look: ActionLook,
    pass: PassSpec | undefined,
    trail: Trail,
    caller: Caller,
  ): Promise<CallOutcome<R>> {
    const outcome = await this.acting.act(action, look, pass, trail, caller);
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
      const decision = this.rounds.judge(action, look);
      if (decision.verdict !== 'allow')
        throw new TabwardError(
          decision.verdict === 'block' ? 'blocked' : 'rejected',
          `${action.name} was not made after the action: ${decision.reason}.`,
          `Call ${action.name} on its own.`,
        );
      outcome = await this.acting.act(action, look, undefined, own, caller);
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
}
