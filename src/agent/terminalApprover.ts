// Approvals in the terminal: `[y/Enter] approve  [a] approve all  [n] reject  [s] skip  [m] modify`, and
// `[t] this site 15 min  [h] 1 h` where a site grant may be given. On sensitive
// pages the prompt says so, shows the URL and rule, offers no approve-all, and only a typed `y` approves (a
// stray Enter must not); so it is for using the user's own Chrome. Everything the page chose is sanitised before it reaches the terminal. Unknown input
// asks again; end of input rejects; a withdrawn call (its signal aborted) stops the question.

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
import { forDisplay } from '../core/displayText.ts';
import type { LineReader } from './lineReader.ts';

const withdrawn: ApprovalChoice = { choice: 'reject', reason: 'the call was cancelled' };

export class TerminalApprover implements Approver {
  readonly name = 'terminal';

  constructor(
    private readonly reader: LineReader,
    private readonly write: (text: string) => void,
  ) {}

  async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalChoice> {
    if (signal?.aborted) return withdrawn;
    this.write(describe(request));
    // A stray Enter approves only ordinary questions: not a write on a sensitive page, and not handing the agent
    // the user's own Chrome (the one question of kind `mode`), which a page that only looks like a login wall asks.
    const typedYesOnly = request.sensitive || request.kind === 'mode';
    const approve = typedYesOnly ? '[y] approve' : '[y/Enter] approve';
    const site = request.siteGrant ? '[t] this site 15 min  [h] 1 h  ' : '';
    const options = `${approve}  ${request.approveAllAllowed ? '[a] approve all  ' : ''}${site}[n] reject  [s] skip  [m] modify > `;
    for (;;) {
      const answer = await this.reader.next(options, signal);
      if (signal?.aborted) return this.withdraw();
      if (answer === undefined) return { choice: 'reject', reason: 'no answer (end of input)' };
      const key = answer.trim().toLowerCase();
      if (key === 'y' || key === 'yes') return { choice: 'approve' };
      if (key === '' && !typedYesOnly) return { choice: 'approve' };
      if (key === '') {
        this.write(
          request.sensitive
            ? 'This is a sensitive page: Enter alone does not approve. Type y to approve, n to reject.\n'
            : 'This hands the agent your own Chrome and its logins: Enter alone does not approve. Type y to approve, n to reject.\n',
        );
        continue;
      }
      if (key === 'a' && request.approveAllAllowed) return this.approveAll(request, signal);
      if ((key === 't' || key === 'h') && request.siteGrant)
        return { choice: 'site-grant', minutes: key === 'h' ? 60 : 15 };
      if (key === 'n' || key === 'no') return this.reject(signal);
      if (key === 's') return { choice: 'skip' };
      if (key === 'm') {
        const modified = await this.modify(request, signal);
        if (modified) return modified;
        continue;
      }
      this.write(`Unknown choice ${JSON.stringify(forDisplay(answer.trim(), 40))}.\n`);
    }
  }

  private withdraw(): ApprovalChoice {
    this.write('\nThe call was cancelled; the question is withdrawn.\n');
    return withdrawn;
  }

  private async reject(signal: AbortSignal | undefined): Promise<ApprovalChoice> {
    const reason = (await this.reader.next('Reason for the agent (Enter for none): ', signal))?.trim();
    if (signal?.aborted) return this.withdraw();
    return reason ? { choice: 'reject', reason } : { choice: 'reject' };
  }

  private async approveAll(
    request: ApprovalRequest,
    signal: AbortSignal | undefined,
  ): Promise<ApprovalChoice> {
    const tool = forDisplay(request.tool);
    const scope = (await this.reader.next(`Approve all of ${tool} [t], or every tool [s]? `, signal))
      ?.trim()
      .toLowerCase();
    if (signal?.aborted) return this.withdraw();
    return { choice: 'approve-all', scope: scope === 's' ? 'server' : 'tool' };
  }

  private async modify(
    request: ApprovalRequest,
    signal: AbortSignal | undefined,
  ): Promise<ApprovalChoice | undefined> {
    const line = await this.reader.next(`New arguments as JSON (were ${argsLine(request)}): `, signal);
    if (signal?.aborted) return this.withdraw();
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
  const shown = displayRequest(request);
  const lines = [
    '',
    `── approval needed: ${shown.tool}${elementPhrase(request)}${warningOf(request) ? `  ⚠ ${warningOf(request)}` : ''}`,
    `   page: ${shown.url || '(none)'}`,
    ...whereLines(request).map((line) => `   ${line}`),
    `   why:  ${shown.reason}${request.sensitive ? ` (rule ${shown.rule})` : ''}`,
    `   args: ${argsLine(request)}`,
    ...[approveAllNote(request)].flatMap((note) => (note ? [`   ${note}`] : [])),
    ...siteGrantLines(request).map((line) => `   ${line}`),
    '',
  ];
  return lines.join('\n');
}
