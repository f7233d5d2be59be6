// Approval rounds (docs/architecture.md "Consent"): the guard decides on the action's live facts; where it asks,
// the human is asked (a question bound to the exact action), their answer applied (a grant, a site grant, hosts
// allowed, modified arguments), and the page read again: the action runs only if nothing moved meanwhile.

import { argsUnaskable, argsUnaskableHint } from '../protocol/shownArgs.ts';
import type { PassSpec } from './actionPasses.ts';
import type { ApprovalChoice } from './approvals.ts';
import { noStops, passFor } from './approvedPass.ts';
import type { CallTrail, Trail } from './callTrail.ts';
import type { ActionLook, Caller, CallOutcome, CallPathOptions, GuardedAction } from './callTypes.ts';
import { TabwardError } from './errors.ts';
import { coveredBySiteGrant, type Decision, decide, originOf } from './guard.ts';
import type { GuardState } from './guardState.ts';
import { redactQuestion } from './questionRedaction.ts';
import { destinationOf, formDataOf } from './shownPlaces.ts';
import { type SiteGrant, siteGrantChoice, siteGrantOrigin } from './siteGrants.ts';

export interface ApprovalRoundsDeps {
  readonly options: CallPathOptions;
  readonly state: GuardState;
  readonly trail: CallTrail;
  readonly nextId: () => string;
  /** Acts on the look the guard allowed or the human approved (with the pass an approval opens). */
  act<R>(
    action: GuardedAction<R>,
    look: ActionLook,
    pass: PassSpec | undefined,
    trail: Trail,
    caller: Caller,
  ): Promise<CallOutcome<R>>;
}

export class ApprovalRounds {
  constructor(private readonly deps: ApprovalRoundsDeps) {}

  /**
   * Look, decide, ask, look again: acts (through `deps.act`) only on the facts a human approved, read again after
   * the answer; three rounds of a page that keeps changing end the call.
   */
  async run<R>(first: GuardedAction<R>, caller: Caller, trail: Trail): Promise<CallOutcome<R>> {
    let action = first;
    let approved: string | undefined;
    for (let round = 0; round < 3; round++) {
      const look = await action.look();
      // Judged on the facts just read: a grant never covers a page that moved to another origin meanwhile.
      const siteGrant = this.deps.state.siteGrantCovering(action.name, look.facts);
      const decision = this.judge(action, look, siteGrant);
      this.deps.trail.note(trail, action, look, decision);
      if (decision.verdict === 'block')
        throw new TabwardError('blocked', decision.reason, 'No approval can override this.');
      if (decision.verdict === 'allow') {
        // A call the grant answered for is audited as the grant's; the call that gave it keeps its human.
        if (siteGrant && decision.reason.startsWith(coveredBySiteGrant)) {
          trail.approver ??= `site grant (given through ${siteGrant.givenThrough})`;
          trail.choice = siteGrantChoice(siteGrant);
        }
        return this.deps.act(action, look, undefined, trail, caller);
      }
      if (approved === look.binding) {
        action.onApproved?.(look);
        return this.deps.act(action, look, passFor(look.facts, decision), trail, caller);
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
        return { value: action.skipped(), stopped: noStops };
      }
      if (choice.choice === 'revoke-site-grants') {
        const revoked = this.deps.state.clearSiteGrants();
        throw new TabwardError(
          'rejected',
          `The user revoked the site grants (${revoked}) and rejected ${action.name}.`,
        );
      }
      if (choice.choice === 'site-grant')
        trail.choice = this.giveSiteGrant(action, look, decision, choice, caller);
      // A yes to "data read on a sensitive page could be sent to X" lets X receive requests for the session: the
      // choke point then holds none of them again (the question says so).
      if (decision.rule === 'taint' && choice.choice !== 'modify')
        this.deps.state.allowTaintTargets(decision.taintAllows ?? []);
      if (choice.choice === 'approve-all' && decision.approveAllAllowed)
        this.deps.state.grantApproveAll(
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

  /** The guard's decision on the facts just read, with what the path knows itself (mode, taint, grants, policy). */
  judge(action: GuardedAction<unknown>, look: ActionLook, siteGrant?: SiteGrant): Decision {
    const { options, state } = this.deps;
    return decide(
      {
        ...look.facts,
        mode: options.mode(),
        taintedOrigins: state.taintedOrigins(),
        policy: options.policy,
        approveAll: state.approveAllCovers(action.name),
        ...(siteGrant ? { siteGrant: state.describeSiteGrant(siteGrant) } : {}),
      },
      options.rules,
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
    return siteGrantChoice(
      this.deps.state.grantSite(origin, action.name, choice.minutes, caller.approver.name),
    );
  }

  private ask(
    action: GuardedAction<unknown>,
    look: ActionLook,
    decision: Decision & { verdict: 'ask' },
    caller: Caller,
  ): Promise<ApprovalChoice> {
    const url = look.url ?? '';
    // A form that would send a password the page holds in a field of another kind cannot be shown (the question
    // reaches whoever runs `tabward approvals`, the agent's shell included) and must not be shown with the field
    // hidden (a page could hide any field so): nobody is asked.
    const copied = (look.facts.effects ?? []).filter((effect) => effect.holdsPassword?.length);
    if (copied.length > 0) {
      const where = copied
        .map(
          (effect) =>
            `${(effect.holdsPassword ?? []).map((name) => JSON.stringify(name)).join(', ')} (to ${effect.url})`,
        )
        .join('; ');
      throw new TabwardError(
        'not_allowed',
        `${action.name} was not asked about: its form would send a password the page holds in a field that is not a password field: ${where}. tabward shows no password in a question, and asks nothing it cannot show.`,
        'A page that copies a password into other fields cannot be acted on here; do this step yourself in the browser.',
      );
    }
    const siteGrantOrigin = this.siteGrantOffer(look, decision);
    const { state } = this.deps;
    const inForce = state.siteGrantList().map((grant) => state.describeSiteGrant(grant));
    const question = redactQuestion(
      {
        id: this.deps.nextId(),
        tool: action.name,
        kind: look.facts.kind,
        reason: decision.reason,
        rule: decision.rule,
        sensitive: decision.sensitive,
        approveAllAllowed: decision.approveAllAllowed,
        url,
        ...(look.loadedFrom ? { loadedFrom: look.loadedFrom } : {}),
        origin: url ? originOf(url) : '',
        ...destinationOf(look.facts),
        ...formDataOf(look.facts),
        ...(look.fields ? { fields: look.fields } : {}),
        ...(look.element ? { element: look.element } : {}),
        ...(look.dropOnto ? { dropOnto: look.dropOnto } : {}),
        args: look.questionArgs ?? action.args,
        frontEnd: caller.frontEnd,
        ...(caller.client ? { client: caller.client } : {}),
        ...(siteGrantOrigin ? { siteGrant: { origin: siteGrantOrigin, tool: action.name } } : {}),
        ...(inForce.length > 0 ? { siteGrantsInForce: inForce } : {}),
        bindsTo: look.binding,
      },
      this.deps.options.redactor(),
    );
    // Every channel shows the arguments whole (protocol/shownArgs.ts): what cannot be shown is not asked.
    const tooLong = argsUnaskable(
      question.formData ? { arguments: question.args, 'form data': question.formData } : question.args,
    );
    if (tooLong) throw new TabwardError('bad_input', tooLong, argsUnaskableHint);
    return caller.approver.ask(question, caller.signal, { mayPend: true });
  }
}
