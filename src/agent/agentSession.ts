// One conversation of the terminal agent: the model, the conversation so far, the browser tools (through the
// same ToolRunner and guard as the MCP server), the token count.

import { z } from 'zod';
import type { Approver } from '../core/approvals.ts';
import { isTabwardError } from '../core/errors.ts';
import type { ModelConfig } from '../llm/modelClient.ts';
import { type LoopTool, type ModelMessage, runToolLoop } from '../llm/toolLoop.ts';
import type { ToolRunner } from '../tools/runner.ts';
import { systemPrompt } from './systemPrompt.ts';

export interface AgentOutput {
  readonly text: (delta: string) => void;
  readonly info: (line: string) => void;
}

export class AgentSession {
  private messages: ModelMessage[] = [];
  inputTokens = 0;
  outputTokens = 0;

  constructor(
    private readonly model: ModelConfig,
    readonly runner: ToolRunner,
    private readonly approver: Approver,
    private readonly output: AgentOutput,
  ) {}

  clear(): void {
    this.messages = [];
  }

  /** Sends one user message and streams the answer; returns the answer's text. */
  async ask(question: string): Promise<string> {
    const outcome = await runToolLoop(
      this.model,
      {
        system: systemPrompt(this.runner.options.context.session.mode),
        messages: [...this.messages, { role: 'user', content: question }],
        tools: this.tools(),
      },
      {
        onText: this.output.text,
        onToolCall: (name, args) => this.output.info(`  → ${name} ${JSON.stringify(args)}`),
      },
    );
    this.messages = outcome.messages;
    this.inputTokens += outcome.inputTokens;
    this.outputTokens += outcome.outputTokens;
    this.output.info(
      `  [tokens: ${outcome.inputTokens} in, ${outcome.outputTokens} out; session ${this.inputTokens + this.outputTokens}]`,
    );
    return outcome.text;
  }

  /** The browser tools, as the model sees them; every call goes through the guard. */
  private tools(): LoopTool[] {
    return this.runner.tools.map((tool) => {
      const { $schema: _drop, ...inputSchema } = z.toJSONSchema(tool.schema, { io: 'input' }) as Record<
        string,
        unknown
      >;
      return {
        name: tool.name,
        description: tool.description,
        inputSchema,
        execute: async (args) => {
          try {
            const result = await this.runner.call(tool.name, args, {
              frontEnd: 'agent',
              approver: this.approver,
            });
            return result.content
              .map((part) => (part.type === 'text' ? part.text : '[image omitted]'))
              .join('\n');
          } catch (error) {
            return isTabwardError(error) ? `${error.code}: ${error.describe()}` : `error: ${String(error)}`;
          }
        },
      };
    });
  }
}
