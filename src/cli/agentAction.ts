// What `tabward agent` does: one question (one-shot) or a conversation with slash commands, approvals asked in
// this terminal. Exit codes: 0 answered, 1 the model or browser failed, 2 no model configured.

import { AgentSession } from '../agent/agentSession.ts';
import { LineReader } from '../agent/lineReader.ts';
import { defaultMcpConfigFiles, loadMcpConfig } from '../agent/mcpConfig.ts';
import { McpHost } from '../agent/mcpHost.ts';
import { runSlashCommand } from '../agent/slashCommands.ts';
import { TerminalApprover } from '../agent/terminalApprover.ts';
import { visibleLines } from '../core/displayText.ts';
import { isTabwardError } from '../core/errors.ts';
import { modelConfigFromEnv, modelSetupHint } from '../llm/modelClient.ts';
import type { AgentFlags } from './agentCommand.ts';
import { assembleGuardedBrowser } from './assemble.ts';
import { tabwardHome } from './config.ts';

export async function runAgent(question: string, flags: AgentFlags): Promise<number> {
  // Everything but the approver's questions (which mark page text field by field) goes through visibleLines: a
  // prompt-injected model's answer, a tool call's arguments or an error quoting a page must not be able to move the
  // cursor or set a scroll region over the question the human answers next (an attack review repainted it).
  const log = (line: string) => process.stderr.write(`${visibleLines(line)}\n`);
  const env = flags.model ? { ...process.env, TABWARD_MODEL: flags.model } : process.env;
  const model = modelConfigFromEnv(env);
  if (!model) {
    log(`tabward agent needs a model. ${modelSetupHint}`);
    return 2;
  }
  const browser = await assembleGuardedBrowser({ ...flags, headless: !flags.headed, consent: false }, log);
  // While the model (or the user) is busy with the first question, an isolated headless browser starts.
  if (flags.warmUp) browser.session.warmUp();
  const reader = new LineReader(process.stdin, process.stderr);
  const approver = new TerminalApprover(reader, (text) => process.stderr.write(text));
  const host = new McpHost();
  await host.start(loadMcpConfig(defaultMcpConfigFiles(tabwardHome(), process.cwd()), process.env), log);
  const confirmPlan = async (plan: string) => {
    process.stdout.write(`Plan:\n${visibleLines(plan)}\n`);
    const answer = await reader.next('Run this plan? [Y/n] ');
    return answer !== undefined && !/^n/i.test(answer.trim());
  };
  const agent = new AgentSession(
    model,
    browser.runner,
    approver,
    { text: (delta) => process.stdout.write(visibleLines(delta)), info: log },
    {
      extraTools: () => host.loopTools(approver, browser.runner.path),
      ...(flags.plan ? { confirmPlan } : {}),
    },
  );
  try {
    if (question) return await answer(agent, question);
    log(
      `tabward agent (${model.provider}:${model.model}, browser ${browser.session.mode}). /help for commands, /exit to quit.`,
    );
    for (;;) {
      const line = await reader.next('\nyou> ');
      if (line === undefined) return 0;
      if (!line.trim()) continue;
      if (line.trim().startsWith('/')) {
        const print = (text: string) => process.stdout.write(`${visibleLines(text)}\n`);
        if ((await runSlashCommand(line, agent, browser.auditPath, print, host)) === 'exit') return 0;
        continue;
      }
      await answer(agent, line);
    }
  } finally {
    reader.close();
    await host.close();
    await browser.close();
  }
}

async function answer(agent: AgentSession, question: string): Promise<number> {
  try {
    await agent.ask(question);
    process.stdout.write('\n');
    return 0;
  } catch (error) {
    process.stderr.write(
      `\ntabward: ${visibleLines(isTabwardError(error) ? error.describe() : String(error))}\n`,
    );
    return 1;
  }
}
