// `tabward agent`: the terminal agent; its flags and help (the work is in agentAction.ts).

import { Command } from 'commander';
import type { GuardedBrowserOptions } from './assemble.ts';
import { addBrowserOptions, addWarmUpOption } from './options.ts';

export interface AgentFlags extends Omit<GuardedBrowserOptions, 'headless' | 'consent'> {
  readonly headed?: boolean;
  readonly model?: string;
  readonly plan?: boolean;
  /** False with --no-warm-up: the browser starts on the first call that needs it. */
  readonly warmUp: boolean;
}

export function agentCommand(): Command {
  const command = new Command('agent')
    .description(
      'A terminal agent with the guarded browser: asks you before writes, switches to your Chrome on a login wall.',
    )
    .argument('[question...]', 'ask once, print the answer and exit; without it, a conversation starts')
    .option('--plan', 'plan first, show the plan, and run it when you say yes')
    .option(
      '--model <provider:model>',
      'e.g. openai:gpt-4o-mini or anthropic:claude-sonnet-4-5 (else TABWARD_MODEL)',
    );
  addWarmUpOption(addBrowserOptions(command)).action(async (question: string[], flags: AgentFlags) => {
    const { runAgent } = await import('./agentAction.ts');
    process.exitCode = await runAgent(question.join(' ').trim(), flags);
  });
  return command;
}
