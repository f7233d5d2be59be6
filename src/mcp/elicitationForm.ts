// The form MCP elicitation shows the human (src/mcp/mcpConsent.ts asks it) and its answer read back.

import type { ApprovalChoice, ApprovalRequest } from '../core/approvals.ts';

/** The form asked: one decision among those this question offers, a reason, new arguments. */
export function decisionSchema(request: ApprovalRequest) {
  const decisions = [
    'approve',
    ...(request.approveAllAllowed ? ['approve-all', 'approve-all-server'] : []),
    ...(request.siteGrant ? ['site-15m', 'site-1h'] : []),
    'reject',
    'skip',
    'modify',
    ...(request.siteGrantsInForce?.length ? ['revoke-site-grants'] : []),
  ];
  return {
    type: 'object' as const,
    properties: {
      decision: {
        type: 'string' as const,
        title: 'Decision',
        description:
          'approve-all: this tool from now on; approve-all-server: every tool of tabward; site-15m/site-1h: ' +
          'this tool on this site for 15 min / 1 h; revoke-site-grants: end them all and reject this call',
        enum: decisions,
      },
      reason: { type: 'string' as const, title: 'Reason for the agent (when rejecting)' },
      args: { type: 'string' as const, title: 'New arguments as JSON (when modifying)' },
    },
    required: ['decision'],
  };
}

/** A form answer as the call path's choice: what was not offered is narrowed, unusable arguments are a no. */
export function toChoice(content: Record<string, unknown>, request: ApprovalRequest): ApprovalChoice {
  const reason = typeof content.reason === 'string' && content.reason ? content.reason : undefined;
  switch (content.decision) {
    case 'approve':
      return { choice: 'approve' };
    case 'approve-all':
    case 'approve-all-server':
      if (!request.approveAllAllowed) return { choice: 'approve' };
      return { choice: 'approve-all', scope: content.decision === 'approve-all' ? 'tool' : 'server' };
    case 'site-15m':
    case 'site-1h':
      // Offered only where a site grant may be given; the call path checks again before granting.
      if (!request.siteGrant) return { choice: 'approve' };
      return { choice: 'site-grant', minutes: content.decision === 'site-1h' ? 60 : 15 };
    case 'revoke-site-grants':
      return { choice: 'revoke-site-grants' };
    case 'skip':
      return { choice: 'skip' };
    case 'modify':
      try {
        const args: unknown = JSON.parse(typeof content.args === 'string' ? content.args : '');
        if (typeof args === 'object' && args !== null)
          return { choice: 'modify', args: args as Record<string, unknown> };
      } catch {
        // fall through: unusable arguments are a rejection, never a silent approval
      }
      return { choice: 'reject', reason: 'the modified arguments were not a JSON object' };
    default:
      return reason ? { choice: 'reject', reason } : { choice: 'reject' };
  }
}
