// Approvals in the terminal: `[y/Enter] approve  [a] approve all  [n] reject  [s] skip  [m] modify`. On sensitive
// pages the prompt says so, shows the URL and rule, and offers no approve-all. Unknown input asks again; end of
// input rejects.

import type { ApprovalChoice, ApprovalRequest, Approver } from '../core/approvals.ts';
import type { LineReader } from './lineReader.ts';

export class TerminalApprover implements Approver {
  readonly name = 'terminal';

  constructor(
    private readonly reader: LineReader,
    private readonly write: (text: string) => void,
  ) {}

  async ask(request: ApprovalRequest): Promise<ApprovalChoice> {
    this.write(describe(request));
    const options = `[y/Enter] approve  ${request.approveAllAllowed ? '[a] approve all  ' : ''}[n] reject  [s] skip  [m] modify > `;
    for (;;) {
      const answer = await this.reader.next(options);
      if (answer === undefined) return { choice: 'reject', reason: 'no answer (end of input)' };
      const key = answer.trim().toLowerCase();
      if (key === '' || key === 'y' || key === 'yes') return { choice: 'approve' };
      if (key === 'a' && request.approveAllAllowed) return this.approveAll(request);
      if (key === 'n' || key === 'no') {
        const reason = (await this.reader.next('Reason for the agent (Enter for none): '))?.trim();
        return reason ? { choice: 'reject', reason } : { choice: 'reject' };
      }
      if (key === 's') return { choice: 'skip' };
      if (key === 'm') {
        const modified = await this.modify(request);
        if (modified) return modified;
        continue;
      }
      this.write(`Unknown choice "${answer.trim()}".\n`);
    }
  }

  private async approveAll(request: ApprovalRequest): Promise<ApprovalChoice> {
    const scope = (await this.reader.next(`Approve all of ${request.tool} [t], or every tool [s]? `))
      ?.trim()
      .toLowerCase();
    return { choice: 'approve-all', scope: scope === 's' ? 'server' : 'tool' };
  }

  private async modify(request: ApprovalRequest): Promise<ApprovalChoice | undefined> {
    const line = await this.reader.next(`New arguments as JSON (were ${JSON.stringify(request.args)}): `);
    if (line === undefined) return { choice: 'reject', reason: 'no answer (end of input)' };
    try {
      const args: unknown = JSON.parse(line);
      if (typeof args === 'object' && args !== null && !Array.isArray(args))
        return { choice: 'modify', args: args as Record<string, unknown> };
    } catch {
      // fall through to the message below
    }
    this.write('That is not a JSON object; nothing changed.\n');
    return undefined;
  }
}

function describe(request: ApprovalRequest): string {
  const element = request.element ? ` on ${request.element.role} "${request.element.name}"` : '';
  const lines = [
    '',
    `── approval needed: ${request.tool}${element}${request.sensitive ? '  ⚠ SENSITIVE PAGE' : ''}`,
    `   page: ${request.url || '(none)'}`,
    `   why:  ${request.reason}${request.sensitive ? ` (rule ${request.rule})` : ''}`,
    `   args: ${JSON.stringify(request.args)}`,
    '',
  ];
  return lines.join('\n');
}
