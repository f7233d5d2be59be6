// The response of one tool call (docs/architecture.md "One call, one response"): the tool, the call path and the
// runner write into it as the call goes (the tool's result, requests the choke point stopped, the guard's state,
// a login-wall note, the snapshot the call asked for), and it is serialised once and redacted once, at the end.
// Nothing is added to the agent's text anywhere else, so nothing can skip the redactor.

import type { Redactor } from '../core/redact.ts';
import type { ToolContent, ToolResult } from './tool.ts';
import { text } from './tool.ts';
import type { Worked } from './toolAction.ts';

export class CallResponse {
  /** What the call did: the arguments it acted with and the tab it worked in (its follow-up read's tab). */
  readonly worked: Worked = {};
  /** What the tool (or the human's skip) answered; unset until the call path returned. */
  private answer: ToolResult | undefined;
  private stopped: string | undefined;
  private guardState: string | undefined;
  /** After the answer, in order: a login-wall note, the snapshot the call asked for (or why there is none). */
  private readonly after: ToolContent[] = [];
  /** A login wall moved the work to the user's Chrome: that reopened tab's response replaces this one's. */
  private switched: { readonly note: string; readonly to: CallResponse } | undefined;

  setAnswer(result: ToolResult): void {
    this.answer = result;
  }

  /** The requests the choke point stopped while the call ran, already summarised. */
  setStopped(summary: string): void {
    this.stopped = summary;
  }

  /** What the guard holds (grants, taint, policy, approver), for a tool that reports it. */
  setGuardState(lines: readonly string[]): void {
    this.guardState = lines.join('\n');
  }

  /** Text that comes after the answer: a note, or the follow-up snapshot's own parts. */
  append(...parts: readonly ToolContent[]): void {
    this.after.push(...parts);
  }

  appendNote(note: string): void {
    this.after.push(text(note));
  }

  /** The work now goes on in a reopened tab: its response is the call's, after the note saying why. */
  switchTo(note: string, reopened: CallResponse): void {
    this.switched = { note, to: reopened };
  }

  /**
   * The result the agent gets, in one pass: notices first (what changed under the agent since its last call), the
   * answer, what was stopped, the guard's state, what came after, and `closing` (the background-read note) last.
   * Every text part passes the redactor here, once, whoever wrote it.
   */
  serialize(redactor: Redactor, notices: readonly string[], closing: string | undefined): ToolResult {
    const told = notices.length > 0 ? [text(notices.join('\n'))] : [];
    const body = this.switched
      ? [text(this.switched.note), ...told, ...this.switched.to.parts()]
      : [...told, ...this.parts()];
    const content = [...body, ...(closing ? [text(closing)] : [])].map((part) =>
      part.type === 'text' ? { ...part, text: redactor.text(part.text) } : part,
    );
    return { content };
  }

  private parts(): ToolContent[] {
    return [
      ...(this.answer?.content ?? []),
      ...(this.stopped ? [text(this.stopped)] : []),
      ...(this.guardState ? [text(this.guardState)] : []),
      ...this.after,
    ];
  }
}
