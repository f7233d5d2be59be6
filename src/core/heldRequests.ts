// Held requests (docs/architecture.md "Policy at the choke point", 2 to 4): while an action runs, the requests its
// tab makes that the choke point would stop are held and put to the action's human, each as a question of its own
// showing what it really is (method, host and path), never approved in bulk. A host the human lets a tainted
// request go to stays allowed for the session (GuardState).

import type { ApprovalChoice } from './approvals.ts';
import type { Trail } from './callTrail.ts';
import type { ActionLook, Caller, GuardedAction } from './callTypes.ts';
import { originOf } from './guard.ts';
import type { GuardState } from './guardState.ts';
import { type Attendant, type RequestFacts, requestDestination, taintReason } from './networkHolds.ts';
import { redactQuestion } from './questionRedaction.ts';
import type { Redactor } from './redact.ts';

export interface HeldRequestsDeps {
  readonly state: GuardState;
  readonly redactor: () => Redactor;
  /** False once the path is closed (a recipe run's that ended): it answers for no request any more. */
  readonly live: () => boolean;
  readonly nextId: () => string;
}

export class HeldRequests {
  constructor(private readonly deps: HeldRequestsDeps) {}

  /**
   * The human who answers for this action also answers for the requests it makes that tabward did not
   * predict: each is held and asked about with what it really is (method, host and path), never approved in
   * bulk. A site the human lets a tainted request go to stays allowed for the session.
   */
  attendant<R>(
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
      live: this.deps.live,
      carriesData: facts.carriesData || secretAt.length > 0,
      // A sensitive page the action itself just read counts at once: a script may read and send in one call.
      taintReason: (request) =>
        (carries
          ? (taintReason(request, {
              tainted: [...new Set([...this.deps.state.networkTaintedOrigins(), ...readsNow()])],
              allowed: this.deps.state.allowed,
              acting,
              navigationOnly,
            }) ??
            // A typed secret goes only where a question that named it let it (GuardState.secretAllowed).
            taintReason(request, {
              tainted: this.deps.state.typedSecretOrigins(),
              allowed: this.deps.state.secretAllowed,
              acting,
              navigationOnly,
            }))
          : undefined) ?? secretLeak(request),
      ask: async (request, reason, taint) => {
        const destination = requestDestination(request.method, request.url);
        // One refusal answers for the same request from the same page again (a page retrying in a loop); another
        // page's request to the same place (a popup's, refused, beside the page acted on) is asked on its own.
        const again = `${request.sentFrom ?? ''} ${destination}`;
        if (refused.has(again) || caller.signal.aborted) return false;
        const choice = await this.askHeld(action, look, caller, request, { reason, taint }, destination);
        const approved = choice === 'approve' || choice === 'approve-all';
        const line = `${destination}: held (${reason}); ${approved ? 'approved' : 'refused'} through ${caller.approver.name}`;
        trail.held = [...(trail.held ?? []), this.deps.redactor().text(line)].slice(0, 10);
        if (!approved) refused.add(again);
        else if (taint) this.deps.state.allowHostOf(request.url);
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
    const page = request.sentFrom ?? look.url ?? request.url;
    try {
      const id = this.deps.nextId();
      const choice = await caller.approver.ask(
        redactQuestion(
          {
            id,
            tool: action.name,
            kind: 'request',
            reason: `${action.name} made the page send a request tabward did not predict: ${held.reason}`,
            // Held by a rule: it goes to a sensitive page. Held by the taint: to a plain page, with what was read.
            rule: held.taint ? 'network-taint' : 'network',
            sensitive: true,
            approveAllAllowed: false,
            // The page that sent it (the Sends line says where it goes): asked about as the destination's, a
            // request of a hostile page read as the human's own site's; as the acting tab's page, a popup's posts
            // read as the honest page the opener was on (two attack reviews).
            url: page,
            ...(page === look.url && look.loadedFrom ? { loadedFrom: look.loadedFrom } : {}),
            origin: originOf(page),
            destination,
            ...(look.element ? { element: look.element } : {}),
            args: { method: request.method, url: request.url },
            frontEnd: caller.frontEnd,
            ...(caller.client ? { client: caller.client } : {}),
            // A question of its own, joined by no other: a held request cannot pend and be asked again, and two
            // alike (another client's page posting the same form to the same address, its element named the
            // same) sharing one answer sent the other's body (an attack review).
            bindsTo: `held request ${id}`,
          },
          this.deps.redactor(),
        ),
        caller.signal,
      );
      // A held request cannot wait past its action: no answer yet is a no.
      return caller.signal.aborted || choice.choice === 'pending' ? 'reject' : choice.choice;
    } catch {
      return 'reject';
    }
  }
}
