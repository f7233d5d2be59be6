// A decision as a channel outside the MCP client sends it (the approval page, `tabward approvals`), turned into
// the choice the call path acts on. What was not offered for this question is narrowed, never widened.

import type { ApprovalChoice, ApprovalRequest } from '../core/approvals.ts';

export const decisionNames = 'approve, approve-all, site-grant, revoke-site-grants, reject, skip or modify';

export function choiceFrom(raw: unknown, request: ApprovalRequest): ApprovalChoice | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const decision = raw as {
    choice?: unknown;
    reason?: unknown;
    scope?: unknown;
    args?: unknown;
    minutes?: unknown;
  };
  switch (decision.choice) {
    case 'approve':
    case 'skip':
      return { choice: decision.choice };
    case 'approve-all':
      // Never on sensitive pages: a stale or forged page cannot widen what the guard allows.
      return request.approveAllAllowed
        ? { choice: 'approve-all', scope: decision.scope === 'server' ? 'server' : 'tool' }
        : { choice: 'approve' };
    case 'site-grant':
      // Only where one was offered; the call path checks again before granting.
      return request.siteGrant
        ? { choice: 'site-grant', minutes: decision.minutes === 60 ? 60 : 15 }
        : { choice: 'approve' };
    case 'revoke-site-grants':
      return { choice: 'revoke-site-grants' };
    case 'reject':
      return typeof decision.reason === 'string' && decision.reason
        ? { choice: 'reject', reason: decision.reason }
        : { choice: 'reject' };
    case 'modify':
      return typeof decision.args === 'object' && decision.args !== null
        ? { choice: 'modify', args: decision.args as Record<string, unknown> }
        : undefined;
    default:
      return undefined;
  }
}
