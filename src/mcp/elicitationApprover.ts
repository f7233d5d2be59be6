// Asking the human through the MCP client itself (elicitation), for clients that declare the capability. The
// message shows page-chosen text sanitised; a cancelled call withdraws its question.

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  approveAllNote,
  argsLine,
  displayRequest,
  elementPhrase,
  siteGrantLines,
  warningOf,
  whereLines,
} from '../core/approvalDisplay.ts';
import type { ApprovalChoice, ApprovalRequest, Approver } from '../core/approvals.ts';

export function clientCanElicit(server: Server): boolean {
  return server.getClientCapabilities()?.elicitation !== undefined;
}

export class ElicitationApprover implements Approver {
  readonly name = 'elicitation';

  constructor(
    private readonly server: Server,
    private readonly timeoutMs = 5 * 60_000,
  ) {}

  async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalChoice> {
    const decisions = [
      'approve',
      ...(request.approveAllAllowed ? ['approve-all', 'approve-all-server'] : []),
      ...(request.siteGrant ? ['site-15m', 'site-1h'] : []),
      'reject',
      'skip',
      'modify',
      ...(request.siteGrantsInForce?.length ? ['revoke-site-grants'] : []),
    ];
    const shown = displayRequest(request);
    const message = [
      `tabward: ${shown.tool}${elementPhrase(request)}${warningOf(request) ? ` — ${warningOf(request)}` : ''}`,
      `Page: ${shown.url || '(none)'}`,
      ...whereLines(request),
      `Why asked: ${shown.reason} (rule ${shown.rule})`,
      `Arguments: ${argsLine(request)}`,
      ...[approveAllNote(request)].flatMap((note) => (note ? [note] : [])),
      ...siteGrantLines(request),
    ].join('\n');
    try {
      const result = await this.server.elicitInput(
        {
          message,
          requestedSchema: {
            type: 'object',
            properties: {
              decision: {
                type: 'string',
                title: 'Decision',
                description:
                  'approve-all: this tool from now on; approve-all-server: every tool of tabward; site-15m/site-1h: ' +
                  'this tool on this site for 15 min / 1 h; revoke-site-grants: end them all and reject this call',
                enum: decisions,
              },
              reason: { type: 'string', title: 'Reason for the agent (when rejecting)' },
              args: { type: 'string', title: 'New arguments as JSON (when modifying)' },
            },
            required: ['decision'],
          },
        },
        // The SDK withdraws the question (notifications/cancelled) when the call that asks is cancelled.
        signal ? { timeout: this.timeoutMs, signal } : { timeout: this.timeoutMs },
      );
      if (result.action !== 'accept') return { choice: 'reject', reason: `the user chose ${result.action}` };
      return toChoice(result.content ?? {}, request);
    } catch (error) {
      if (signal?.aborted) return { choice: 'reject', reason: 'the call was cancelled' };
      const why = error instanceof Error ? error.message : String(error);
      return { choice: 'reject', reason: `approval could not be asked: ${why}` };
    }
  }
}

function toChoice(content: Record<string, unknown>, request: ApprovalRequest): ApprovalChoice {
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
