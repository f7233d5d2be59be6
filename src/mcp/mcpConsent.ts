// Which channel asks the human for one MCP client (docs/architecture.md "Consent"): URL-mode elicitation where the
// client offers it (the link is that one question's approval page), form elicitation where only that is offered,
// and always the process's inbox (`tabward approvals`, the notification). An elicitation answer goes into the
// inbox like any other; a decline or cancel faster than a person could read (a headless client answering for
// nobody) is not a human's answer: the question goes on through the inbox, and the agent is told so.

import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ApprovalInbox, type Question } from '../approval/inbox.ts';
import { InboxApprover, type InboxApproverOptions, noteOnQuestion } from '../approval/inboxApprover.ts';
import { questionLines } from '../core/approvalDisplay.ts';
import type { Approver } from '../core/approvals.ts';
import { decisionSchema, toChoice } from './elicitationForm.ts';

/** The process's consent desk as the MCP server uses it (src/cli/consentDesk.ts). */
export interface ConsentDeskView {
  readonly inbox: ApprovalInbox;
  /** No channel but elicitation: an instant cancel is then the only answer there will be, and taken as one. */
  readonly elicitationOnly?: boolean;
  approver(name: string, channels?: InboxApproverOptions['channels']): Approver;
  pageUrl(question: Question): string | undefined;
  /** Resolves once the page (and the rest of the desk) is up: a URL elicitation waits for it. */
  start?(): Promise<void>;
}

export type ElicitationChannel = 'url' | 'form' | 'none';

/** For a server given no desk (an embedding of createMcpServer): elicitation alone, over an inbox of its own. */
export function elicitationOnlyDesk(waitMs = 5 * 60_000): ConsentDeskView {
  const inbox = new ApprovalInbox();
  return {
    inbox,
    elicitationOnly: true,
    pageUrl: () => undefined,
    approver: (_name, channels) =>
      new InboxApprover({
        inbox,
        waitMs,
        maxWaitMs: waitMs,
        where: 'in your MCP client',
        name: 'elicitation',
        ...(channels ? { channels } : {}),
      }),
  };
}

/** What the connected client offers, by its declared capabilities (an empty object is form, as the spec says). */
export function elicitationOf(server: Server): ElicitationChannel {
  const offered = server.getClientCapabilities()?.elicitation as { form?: object; url?: object } | undefined;
  if (!offered) return 'none';
  if (offered.url) return 'url';
  return 'form';
}

export interface McpConsentOptions {
  /** Answers of decline/cancel quicker than this are no human's. */
  readonly humanMs: number;
  /** How long an elicitation may stay open (the question's own life). */
  readonly elicitMs: number;
  /** Use only the inbox, never elicitation (--approval inbox). */
  readonly inboxOnly: boolean;
}

/** The approver for one call of this client: its elicitation (if any) plus the inbox. */
export function mcpApprover(server: Server, desk: ConsentDeskView, options: McpConsentOptions): Approver {
  const channel = options.inboxOnly ? 'none' : elicitationOf(server);
  if (channel === 'none') return desk.approver('the inbox (tabward approvals, notification)');
  const name = `${channel === 'url' ? 'URL' : 'form'} elicitation and the inbox`;
  return desk.approver(name, (question) => void elicit(server, desk, question, channel, options));
}

async function elicit(
  server: Server,
  desk: ConsentDeskView,
  question: Question,
  channel: 'url' | 'form',
  options: McpConsentOptions,
): Promise<void> {
  // The dialog goes when its question does (answered elsewhere, withdrawn with its call, expired): the SDK
  // sends notifications/cancelled. A URL-mode question answered on its page is reported complete.
  const stop = new AbortController();
  const elicitationId = randomUUID();
  let urlAsked = false;
  const forget = desk.inbox.onChange(() => {
    if (desk.inbox.get(question.id) && !question.answer) return;
    forget();
    if (urlAsked && question.answer)
      server
        .createElicitationCompletionNotifier(elicitationId)()
        .catch(() => undefined);
    stop.abort();
  });
  const started = Date.now();
  const request = question.request;
  try {
    const message = questionLines(request).join('\n');
    if (channel === 'url') await desk.start?.().catch(() => undefined);
    const url = channel === 'url' ? desk.pageUrl(question) : undefined;
    urlAsked = url !== undefined;
    const result =
      channel === 'url' && url
        ? await server.elicitInput(
            {
              mode: 'url',
              message: `${message}\nOpen the link to answer (question ${question.id}).`,
              url,
              elicitationId,
            },
            { timeout: options.elicitMs, signal: stop.signal },
          )
        : await server.elicitInput(
            { message, requestedSchema: decisionSchema(request) },
            { timeout: options.elicitMs, signal: stop.signal },
          );
    // URL mode: "accept" only says the human opened the link; the answer comes from the page, and the client is
    // told when it has. Either way the listener above stays until the question closes.
    if (result.action === 'accept') {
      if (urlAsked) return;
      const taken = desk.inbox.answer(question.id, toChoice(result.content ?? {}, request), 'elicitation');
      if (!taken.ok) noteOnQuestion(question, `Your MCP client's answer was not taken: ${taken.why}.`);
      return;
    }
    urlAsked = false;
    const took = Date.now() - started;
    if (took < options.humanMs && !desk.elicitationOnly) {
      noteOnQuestion(
        question,
        `Your MCP client answered "${result.action}" after ${took} ms, before anyone could have read the question, so it was not taken as the human's answer.`,
      );
      return;
    }
    desk.inbox.answer(
      question.id,
      { choice: 'reject', reason: `the user chose ${result.action}` },
      'elicitation',
    );
  } catch (error) {
    forget();
    // The client could not ask (or the dialog was withdrawn): the inbox still can.
    if (!stop.signal.aborted)
      noteOnQuestion(
        question,
        `Your MCP client could not ask (${error instanceof Error ? error.message : String(error)}).`,
      );
  }
}
