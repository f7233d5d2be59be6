// What an approver is asked and what a human can answer (DESIGN.md 3.5). Approvers live in src/approval;
// this file is the contract every front end shares.

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
  readonly origin: string;
  /** Where the action will send, as "METHOD host/path", when tabward knows. */
  readonly destination?: string;
  /** For an action that writes several values: which field and frame each goes to. */
  readonly fields?: readonly { readonly field: string; readonly frame: string }[];
  /** The element acted on, by role and accessible name, never by selector. */
  readonly element?: { readonly role: string; readonly name: string };
  /** Arguments with secrets masked. */
  readonly args: Readonly<Record<string, unknown>>;
  readonly frontEnd: string;
}

export type ApprovalChoice =
  | { readonly choice: 'approve' }
  | { readonly choice: 'approve-all'; readonly scope: 'tool' | 'server' }
  | { readonly choice: 'reject'; readonly reason?: string }
  | { readonly choice: 'skip' }
  | { readonly choice: 'modify'; readonly args: Readonly<Record<string, unknown>> };

export interface Approver {
  /** Shown in the audit log and in browser_status: "elicitation", "page http://127.0.0.1:PORT/...", ... */
  readonly name: string;
  /** `signal` aborts when the call that asks is cancelled or its client goes away: the question is withdrawn. */
  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalChoice>;
}

/** Fail closed when no human can be reached, and say how to reach one. */
export const noApprover: Approver = {
  name: 'none',
  ask: async () => ({
    choice: 'reject',
    reason:
      'No human approver is reachable. Run tabward mcp with --approval page (a local approval page) or use an MCP ' +
      'client that supports elicitation, then try again.',
  }),
};
