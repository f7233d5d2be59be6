// A scripted human for the demo and tests: answers MCP elicitation requests from a queue of decisions,
// printing each question and answer so the story can be followed.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface HumanAnswer {
  readonly decision:
    | 'approve'
    | 'approve-all'
    | 'approve-all-server'
    | 'site-15m'
    | 'site-1h'
    | 'revoke-site-grants'
    | 'reject'
    | 'skip'
    | 'modify';
  readonly reason?: string;
  readonly args?: string;
  /** Runs while the human is "thinking", before the answer is given (tests use it to move the page). */
  readonly meanwhile?: () => Promise<void>;
}

export class ScriptedHuman {
  private readonly answers: HumanAnswer[] = [];
  readonly questions: string[] = [];
  /** The decisions offered with each question (approve-all is missing on sensitive pages). */
  readonly offered: string[][] = [];

  /** Answers questions when no queued answer is left; without one, unanswered questions are declined. */
  policy: ((message: string) => HumanAnswer) | undefined;

  constructor(private readonly print: (line: string) => void = () => undefined) {}

  /** Queue the answers to the next questions, in order. */
  will(...answers: HumanAnswer[]): void {
    this.answers.push(...answers);
  }

  /** Drops the queued answers no question took (a test that failed must not answer the next one's). */
  forget(): void {
    this.answers.length = 0;
  }

  attach(client: Client): void {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const message = 'message' in request.params ? request.params.message : '';
      this.questions.push(message);
      this.offered.push(offeredDecisions(request.params));
      const answer = this.answers.shift() ?? this.policy?.(message);
      this.print(`  ┌ tabward asks the human:\n${message.replace(/^/gm, '  │ ')}`);
      if (!answer) {
        this.print('  └ (no answer scripted: declined)');
        return { action: 'decline' };
      }
      this.print(`  └ human: ${answer.decision}${answer.reason ? ` — "${answer.reason}"` : ''}`);
      await answer.meanwhile?.();
      const content: Record<string, string> = { decision: answer.decision };
      if (answer.reason) content.reason = answer.reason;
      if (answer.args) content.args = answer.args;
      return { action: 'accept', content };
    });
  }
}

function offeredDecisions(params: object): string[] {
  const schema =
    'requestedSchema' in params
      ? (params.requestedSchema as { properties?: Record<string, { enum?: unknown }> })
      : {};
  const choices = schema.properties?.decision?.enum;
  return Array.isArray(choices) ? choices.map(String) : [];
}
