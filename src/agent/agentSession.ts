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

export interface AgentOptions {
  /** More tools beside the browser's (the user's external MCP servers). */
  readonly extraTools?: () => LoopTool[];
  /** Plan first, show the plan, and run it only if this says yes. */
  readonly confirmPlan?: (plan: string) => Promise<boolean>;
}

export class AgentSession {
  private messages: ModelMessage[] = [];
  inputTokens = 0;
  outputTokens = 0;

  constructor(
    private readonly model: ModelConfig,
    readonly runner: ToolRunner,
    readonly approver: Approver,
    private readonly output: AgentOutput,
    private readonly options: AgentOptions = {},
  ) {}

  clear(): void {
    this.messages = [];
  }

  /** Sends one user message and streams the answer; returns the answer's text. */
  async ask(question: string): Promise<string> {
    let message = question;
    if (this.options.confirmPlan) {
      const plan = await this.plan(question);
      if (!(await this.options.confirmPlan(plan))) return 'Plan not run.';
      message = `${question}\n\nFollow this plan:\n${plan}`;
    }
    const outcome = await runToolLoop(
      this.model,
      {
        system: systemPrompt(this.runner.options.context.session.mode),
        messages: [...this.messages, { role: 'user', content: message }],
        tools: [...this.tools(), this.subAgentTool(), ...(this.options.extraTools?.() ?? [])],
      },
      {
        onText: this.output.text,
        onToolCall: (name, args) => this.output.info(`  → ${name} ${this.shownArgs(args)}`),
      },
    );
    this.messages = outcome.messages;
    this.count(outcome);
    this.output.info(
      `  [tokens: ${outcome.inputTokens} in, ${outcome.outputTokens} out; session ${this.inputTokens + this.outputTokens}]`,
    );
    return outcome.text;
  }

  /** Plan-then-execute: a numbered plan, written without tools, for the human to look at first. */
  private async plan(question: string): Promise<string> {
    this.output.info('  Planning…');
    const outcome = await runToolLoop(this.model, {
      system: `${systemPrompt(this.runner.options.context.session.mode)}\nNow only plan: list the pages you will open and what you will read or do, as a short numbered list. Do not use tools.`,
      messages: [...this.messages, { role: 'user', content: question }],
      tools: [],
    });
    this.count(outcome);
    return outcome.text.trim();
  }

  /** A focused browsing sub-task in a context of its own, with the same browser, guard and approvals. */
  private subAgentTool(): LoopTool {
    return {
      name: 'browse_subtask',
      description: 'Hand a focused browsing sub-task to a helper with its own context; returns its findings.',
      inputSchema: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
      execute: async (args) => {
        this.output.info(`  [sub-agent] ${String(args.task).slice(0, 100)}`);
        const outcome = await runToolLoop(
          this.model,
          {
            system: `${systemPrompt(this.runner.options.context.session.mode)}\nYou are a helper: do only the task you are given and report what you found, briefly.`,
            messages: [{ role: 'user', content: String(args.task) }],
            tools: this.tools(),
            maxSteps: 15,
          },
          {
            onToolCall: (name, callArgs) =>
              this.output.info(`  [sub-agent] → ${name} ${this.shownArgs(callArgs)}`),
          },
        );
        this.count(outcome);
        return outcome.text || '(the helper found nothing to report)';
      },
    };
  }

  /**
   * A tool call's arguments as the terminal shows them: through the redactor, as every record is (a declared
   * secret's value, a password typed before). A literal the model types into a password field for the first time is
   * known as one only once its call is judged, after this line is printed.
   */
  private shownArgs(args: unknown): string {
    return JSON.stringify(this.runner.options.context.secrets.redactor.value(args));
  }

  private count(outcome: { inputTokens: number; outputTokens: number }): void {
    this.inputTokens += outcome.inputTokens;
    this.outputTokens += outcome.outputTokens;
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
