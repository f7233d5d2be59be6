// Held requests (docs/architecture.md "Policy at the choke point", 2 to 4): while an action runs, the requests its
// tab makes that the choke point would stop are held and put to the action's human, each as a question of its own
// showing what it really is (method, host and path, and what it carries, whole), never approved in bulk. A host the human lets a tainted
// request go to stays allowed for the session (GuardState).

import { argsUnaskable } from '../protocol/shownArgs.ts';
import type { ApprovalChoice } from './approvals.ts';
import type { Trail } from './callTrail.ts';
import type { ActionLook, Caller, GuardedAction } from './callTypes.ts';
import { originOf } from './guard.ts';
import type { GuardState } from './guardState.ts';
import { type Attendant, type RequestFacts, requestDestination, taintReason } from './networkHolds.ts';
import { redactQuestion } from './questionRedaction.ts';
import { Redactor } from './redact.ts';

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
    /** Why each request refused in this action was: the same again is refused for the same reason. */
    const refused = new Map<string, string>();
    const open = new Map<string, Promise<unknown>>();
    let asked = 0;
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
        // One refusal answers for the same request from the same site again (a page retrying in a loop, or
        // changing its own address to be asked anew); another site's request to the same place (a popup's,
        // refused, beside the page acted on) is asked on its own.
        const again = `${senderOf(request, look).origin} ${destination}`;
        // The same request again while its question is open waits for that answer: a no answers it too (a page
        // posting every 300 ms is asked once, not once a post); a yes lets one request go, so it is asked anew.
        await open.get(again)?.catch(() => undefined);
        const before = refused.get(again);
        if (before) return before;
        if (caller.signal.aborted) return 'its action was over';
        // A question shows what the request carries, whole (protocol/shownArgs.ts): one it cannot show is refused.
        const unshowable = request.bodyUnread
          ? 'its body could not be read to show the human'
          : (pageHeldPassword(request, this.deps.redactor()) ?? argsUnaskable(heldArgs(request)));
        if (unshowable) {
          const line = `${destination}: held (${reason}); refused without asking: ${unshowable}`;
          trail.held = [...(trail.held ?? []), heldLine(line, request, this.deps.redactor())].slice(0, 10);
          refused.set(again, `refused without asking: ${unshowable}`);
          return `refused without asking: ${unshowable}`;
        }
        // A page that keeps sending new requests cannot keep the human answering, nor its action running.
        if (++asked > maxQuestionsPerAction) {
          const line = `${destination}: held (${reason}); refused without asking: ${maxQuestionsPerAction} requests of this action were asked about already`;
          trail.held = [...(trail.held ?? []), heldLine(line, request, this.deps.redactor())].slice(0, 10);
          return `refused without asking: ${maxQuestionsPerAction} requests of this action were asked about already`;
        }
        const asking = this.askHeld(action, look, caller, request, { reason, taint }, destination);
        open.set(again, asking);
        const choice = await asking;
        if (open.get(again) === asking) open.delete(again);
        const approved = choice === 'approve' || choice === 'approve-all';
        const line = `${destination}: held (${reason}); ${approved ? 'approved' : 'refused'} through ${caller.approver.name}`;
        trail.held = [...(trail.held ?? []), heldLine(line, request, this.deps.redactor())].slice(0, 10);
        if (!approved) {
          refused.set(again, 'the human did not let it go');
          return 'the human did not let it go';
        }
        if (taint) this.deps.state.allowHostOf(request.url);
        return undefined;
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
    const sender = senderOf(request, look);
    try {
      const id = this.deps.nextId();
      const choice = await caller.approver.ask(
        redactQuestion(
          {
            id,
            tool: action.name,
            kind: 'request',
            // A yes to a request held for the taint lets its host receive requests for the session (allowHostOf
            // below): the question says so, as the guard's own taint question does.
            reason: `${action.name} made ${sender.said} send a request tabward did not predict: ${held.reason}${held.taint ? `; approving lets ${originOf(request.url)} receive requests for the rest of this session` : ''}`,
            // Held by a rule: it goes to a sensitive page. Held by the taint: to a plain page, with what was read.
            rule: held.taint ? 'network-taint' : 'network',
            sensitive: true,
            approveAllAllowed: false,
            // The page that sent it (the Sends line says where it goes): asked about as the destination's, a
            // request of a hostile page read as the human's own site's; as the acting tab's page, a popup's posts
            // read as the honest page the opener was on (two attack reviews).
            url: sender.page,
            ...(sender.page === look.url && look.loadedFrom ? { loadedFrom: look.loadedFrom } : {}),
            origin: sender.origin,
            destination,
            ...(look.element ? { element: look.element } : {}),
            args: heldArgs(request),
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

/**
 * A held request's line for the audit and the agent, redacted, and with the page's own passwords masked (a GET
 * login's address carries one; refused unasked, its line put it in the audit: an attack review).
 */
function heldLine(line: string, request: RequestFacts, redactor: Redactor): string {
  const passwords = request.unshown ?? [];
  return redactor.text(passwords.length > 0 ? new Redactor(passwords).text(line) : line);
}

/** What a question about a held request shows of it: where it goes and, whole, what it carries. */
function heldArgs(request: RequestFacts): Record<string, unknown> {
  return {
    method: request.method,
    url: request.url,
    ...(request.body !== undefined && request.body !== '' ? { body: request.body } : {}),
  };
}

/**
 * Why a held request cannot be asked about when it carries a password the page holds (one its snapshots read) that
 * the agent did not type (those the redactor masks already): a question shows what it carries whole, and a password
 * must not be shown (whoever runs `tabward approvals` reads it). Nor may it be masked: a page's password field
 * holding the attacker's account number masked the recipient it swapped into the post (an attack review).
 */
function pageHeldPassword(request: RequestFacts, redactor: Redactor): string | undefined {
  const carried = `${request.url}\n${request.body ?? ''}`;
  // One the agent knows whole (it typed it, or a declared secret's) is not: the question shows or masks it. Not
  // one that merely holds a piece of such a value: the agent typing "202" unmasked "Hunter2024" (an attack review).
  const held = (request.unshown ?? []).filter(
    (password) => password.length >= 3 && !redactor.knowsWhole(password),
  );
  // In any letter case, and in any form the redactor knows a secret in (from six characters on: reversed, spaced
  // out, base64, hex): a page spelling it its own way showed it to the approver.
  const lower = carried.toLowerCase();
  const carries =
    held.some((password) =>
      [
        password,
        encodeURIComponent(password),
        new URLSearchParams([['', password]]).toString().slice(1),
      ].some((form) => lower.includes(form.toLowerCase())),
    ) ||
    (held.length > 0 && new Redactor(held).text(carried) !== carried);
  return carries
    ? 'it carries a password the page holds, which no question shows (and none may hide: it could stand for anything the page chose)'
    : undefined;
}

/** Held requests one action may put to the human; the rest are refused unasked (and the audit says so). */
const maxQuestionsPerAction = 10;

/**
 * Who sent a held request, as far as tabward can tell. The hook knows the tab and, for a frame's document, the
 * frame; the address it reads is where the tab is *now*: a page that posts as it unloads, a popup that goes to the
 * honest page and posts on its way (or whose post is redirected later), a cross-site frame inside the honest page,
 * all read as the honest page (an attack review). The Origin header is the browser's own word on the sending
 * document's origin, set on every request that can write (a POST, a CORS request): where it disagrees with the
 * address, the question names the origin, not the address; "null" is a document with no origin of its own.
 */
function senderOf(
  request: RequestFacts,
  look: ActionLook,
): { readonly page: string; readonly origin: string; readonly said: string } {
  const page = request.sentFrom ?? look.url ?? request.url;
  const shown = originOf(page);
  const stated = request.origin;
  if (stated === undefined || stated === shown) return { page, origin: shown, said: 'the page' };
  if (stated === 'null')
    return {
      page: `(a document with no origin of its own: a sandboxed or data: frame, or a request another site redirected; its tab showed ${page})`,
      origin: 'null',
      said: 'a document with no origin of its own',
    };
  return {
    page: `${stated} (a document of that site sent it; its tab showed ${page})`,
    origin: stated,
    said: `a document of ${stated}`,
  };
}
