// The tabward program: one commander program whose subcommands are thin adapters over the layers.
// Errors become one line and an exit code here, once (errorReport.ts).

import { Command, CommanderError } from 'commander';
import { agentCommand } from './agentCommand.ts';
import { approvalsCommand } from './approvalsCommand.ts';
import { auditCommand } from './auditCommand.ts';
import { cacheCompiledCode } from './compileCache.ts';
import { demoCommand } from './demoCommand.ts';
import { doctorCommand } from './doctorCommand.ts';
import { exitWithError } from './errorReport.ts';
import { mcpCommand } from './mcpCommand.ts';
import { version } from './packageRoot.ts';
import { runCommand, serveCommand, workerCommand } from './recipeCommands.ts';
import { relayCommand } from './relayCommand.ts';
import { rulesCommand } from './rulesCommand.ts';

export function buildProgram(): Command {
  // A bad flag gets one line, then where the usage is, not the whole help.
  const program = new Command('tabward')
    .description('A browser for AI agents that carries your login and keeps their hands off what matters.')
    .version(version)
    .enablePositionalOptions()
    .addCommand(mcpCommand())
    .addCommand(agentCommand())
    .addCommand(runCommand())
    .addCommand(serveCommand())
    .addCommand(workerCommand())
    .addCommand(demoCommand())
    .addCommand(approvalsCommand())
    .addCommand(relayCommand())
    .addCommand(rulesCommand())
    .addCommand(auditCommand())
    .addCommand(doctorCommand())
    .showHelpAfterError('(add --help for usage)');
  // Usage errors (an unknown flag, a bad value, a missing argument) reach main() as errors, in every subcommand:
  // they exit 2 there, as every other bad input does.
  const all = (command: Command): Command[] => [command, ...command.commands.flatMap(all)];
  for (const command of all(program)) command.exitOverride();
  return program;
}

/**
 * Ctrl-C, SIGTERM, a closed terminal: a command with its own handler (mcp, serve, relay, run) shuts down its way;
 * any other exits at once with the signal's code, through process.exit, whose exit handler ends every browser
 * tabward started and removes the folders it made (the default action would kill tabward and leave them).
 */
function endOnSignals(): void {
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  for (const [signal, code] of Object.entries(codes))
    process.on(signal, () => {
      if (process.listenerCount(signal) === 1) process.exit(code);
    });
}

/** Help and --version exit 0; every usage error exits 2 (bad input), whatever commander would have used. */
function usageExitCode(error: CommanderError): number {
  return ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code) ? 0 : 2;
}

export async function main(argv: string[]): Promise<void> {
  // An error nothing awaited (a server's 'error' event) ends the process the same way: one line, a code.
  process.on('uncaughtException', exitWithError);
  // `tabward audit | head`: the reader is gone, so is the point of writing. Quietly, exit 0.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    exitWithError(error);
  });
  cacheCompiledCode();
  endOnSignals();
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(usageExitCode(error));
    exitWithError(error);
  }
}
