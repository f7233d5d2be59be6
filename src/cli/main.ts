// The tabward program: one commander program whose subcommands are thin adapters over the layers.
// TabwardErrors become a message and an exit code here, once.

import { Command, CommanderError } from 'commander';
import { isTabwardError } from '../core/errors.ts';
import { agentCommand } from './agentCommand.ts';
import { auditCommand } from './auditCommand.ts';
import { demoCommand } from './demoCommand.ts';
import { doctorCommand } from './doctorCommand.ts';
import { mcpCommand } from './mcpCommand.ts';
import { version } from './packageRoot.ts';
import { runCommand, serveCommand } from './recipeCommands.ts';
import { relayCommand } from './relayCommand.ts';
import { rulesCommand } from './rulesCommand.ts';

export function buildProgram(): Command {
  return new Command('tabward')
    .description('A browser for AI agents that carries your login and keeps their hands off what matters.')
    .version(version)
    .enablePositionalOptions()
    .addCommand(mcpCommand())
    .addCommand(agentCommand())
    .addCommand(runCommand())
    .addCommand(serveCommand())
    .addCommand(demoCommand())
    .addCommand(relayCommand())
    .addCommand(rulesCommand())
    .addCommand(auditCommand())
    .addCommand(doctorCommand())
    .showHelpAfterError();
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode);
    if (isTabwardError(error)) {
      process.stderr.write(`tabward: ${error.describe()}\n`);
      process.exit(error.code === 'bad_input' ? 2 : 1);
    }
    throw error;
  }
}
