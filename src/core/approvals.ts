// What an approver is asked and what a human can answer (docs/architecture.md "Approval questions"). Approvers
// live where their channel does (approval/ the inbox, mcp/ elicitation, agent/ the terminal); this file is the
// contract every front end shares.

export interface ApprovalRequest {
  readonly id: string;
  readonly tool: string;
  readonly kind: string;
  /** Why the guard asks, in words. */
  readonly reason: string;
  readonly rule: string;
  readonly sensitive: boolean;
  readonly approveAllAllowed: boolean;
  readonly url: string;
  /** Where the page's document was loaded from, when it shows another address (ActionLook.loadedFrom). */
  readonly loadedFrom?: string;
  readonly origin: string;
  /** Where the action will send, as "METHOD host/path", when tabward knows. */
  readonly destination?: string;
  /** For an action that writes several values: which field and frame each goes to. */
  /** What each form the action submits would send (name, value pairs), in the order of the Sends line. */
  readonly formData?: readonly (readonly (readonly [string, string])[])[];
  /** For a drag: the element it drops onto, by role and accessible name. */
  readonly dropOnto?: { readonly role: string; readonly name: string };
  readonly fields?: readonly { readonly field: string; readonly frame: string }[];
  /** The element acted on, by role and accessible name, never by selector. */
  readonly element?: { readonly role: string; readonly name: string };
  /** Arguments with secrets masked. */
  readonly args: Readonly<Record<string, unknown>>;
  readonly frontEnd: string;
  /**
   * Which agent asks, when several share one tabward (`mcp --http`): its MCP client's own name (the client chose
   * it: shown sanitised) and its session.
   */
  readonly client?: string;
  /** The asking client's session (`mcp --http`), for tabward's own use: its questions go when the session ends. */
  readonly clientSession?: string;
  /**
   * Present only when a site grant may be given for this action (an ordinary write, every frame on one origin):
   * "allow writes like this" = this tool on this exact origin, for 15 min or 1 h.
   */
  readonly siteGrant?: { readonly origin: string; readonly tool: string };
  /** Site grants in force, as listed in browser_status: with any, the human may revoke them all. */
  readonly siteGrantsInForce?: readonly string[];
  /**
   * The exact action the answer covers (the call path's binding: tab and document, element, arguments), never
   * shown: a call made again joins an open question only when it would do exactly this.
   */
  readonly bindsTo?: string;
}

export type ApprovalChoice = (
  | { readonly choice: 'approve' }
  | { readonly choice: 'approve-all'; readonly scope: 'tool' | 'server' }
  | { readonly choice: 'reject'; readonly reason?: string }
  | { readonly choice: 'skip' }
  | { readonly choice: 'modify'; readonly args: Readonly<Record<string, unknown>> }
  /** Approve, and allow this tool on the request's origin unasked for that long (only where siteGrant is offered). */
  | { readonly choice: 'site-grant'; readonly minutes: 15 | 60 }
  /** Revoke every site grant and reject this call. */
  | { readonly choice: 'revoke-site-grants' }
  /**
   * Nobody has answered yet and the call should not outlive its client's patience: the call ends saying so, the
   * question stays open, and the same call made again joins it (docs/architecture.md "Consent"). Only given to an
   * asker that allows it (AskOptions.mayPend).
   */
  | { readonly choice: 'pending'; readonly question: string; readonly where: string; readonly note?: string }
) & {
  /** The channel that carried the human's answer ("elicitation", "tabward approvals"), when not the approver's name. */
  readonly by?: string;
};

export interface AskOptions {
  /**
   * The caller can end its call with "still waiting" and be called again (an MCP tool call, asking before it acts).
   * Without it (a request held mid-action, a terminal) the approver waits for an answer or its own deadline.
   */
  readonly mayPend?: boolean;
}

export interface Approver {
  /** Shown in the audit log and in browser_status: "elicitation", "page http://127.0.0.1:PORT/...", ... */
  readonly name: string;
  /** `signal` aborts when the call that asks is cancelled or its client goes away: the question is withdrawn. */
  ask(request: ApprovalRequest, signal?: AbortSignal, options?: AskOptions): Promise<ApprovalChoice>;
}

/** Fail closed when no human can be reached, and say how to reach one. */
export const noApprover: Approver = {
  name: 'none',
  ask: async () => ({
    choice: 'reject',
    // Nobody was asked: the call path says so instead of "the user rejected".
    by: 'nobody',
    reason:
      'No human approver is reachable. Run tabward mcp with --approval auto or inbox (questions reach `tabward ' +
      'approvals` and a notification) or use an MCP client that supports elicitation, then try again.',
  }),
};
