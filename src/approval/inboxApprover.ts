// The approver every front end without its own terminal uses (docs/architecture.md "Consent"): a question goes
// into the process's inbox, where `tabward approvals`, the notification, the approval page and (for MCP clients
// that offer it) elicitation can answer it. A caller that may end "still waiting" (AskOptions.mayPend) is
// answered pending before its client would give up; calling again joins the same question.

import type { ApprovalChoice, ApprovalRequest, Approver, AskOptions } from '../core/approvals.ts';
import type { ApprovalInbox, Question } from './inbox.ts';

export interface InboxApproverOptions {
  readonly inbox: ApprovalInbox;
  /** How long a call that may pend waits before it answers "still waiting" (under its client's timeout). */
  readonly waitMs: number;
  /** How long a call that may not pend waits for the human before the answer is no. */
  readonly maxWaitMs: number;
  /** Where the human answers, in words the agent is given: "in `tabward approvals` or the notification". */
  readonly where: string;
  /** Channels of this caller's own (MCP elicitation), started once per question, when it is first asked. */
  readonly channels?: (question: Question, signal: AbortSignal | undefined) => void;
  /** Shown in the audit log and browser_status. */
  readonly name: string;
}

/** Notes a channel left for the agent about a question (an instant "cancel" that no human gave). */
const notes = new WeakMap<Question, string>();

export function noteOnQuestion(question: Question, note: string): void {
  notes.set(question, note);
}

export class InboxApprover implements Approver {
  constructor(private readonly options: InboxApproverOptions) {}

  get name(): string {
    return this.options.name;
  }

  async ask(request: ApprovalRequest, signal?: AbortSignal, ask?: AskOptions): Promise<ApprovalChoice> {
    const { question, joined } = this.options.inbox.ask(request);
    if (!joined) this.options.channels?.(question, signal);
    const mayPend = ask?.mayPend === true;
    const choice = await this.options.inbox.wait(
      question,
      mayPend ? this.options.waitMs : this.options.maxWaitMs,
      signal,
    );
    // Told who answered only when this call got the human's answer (not "it went to another call").
    if (choice)
      return choice === question.answer && question.answeredBy
        ? { ...choice, by: question.answeredBy }
        : choice;
    if (!mayPend) {
      const why = `nobody answered within ${Math.round(this.options.maxWaitMs / 1000)} s`;
      this.options.inbox.withdraw(question.id, why);
      return { choice: 'reject', reason: why };
    }
    const note = notes.get(question);
    return {
      choice: 'pending',
      question: question.id,
      where: this.options.where,
      ...(note ? { note } : {}),
    };
  }
}
