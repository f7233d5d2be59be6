// `tabward mcp`: the guarded browser as an MCP server over stdio, or Streamable HTTP with --http PORT.

import { Command, Option } from 'commander';
import type { ApprovalMode } from '../mcp/mcpServer.ts';
import type { GuardedBrowserOptions } from './assemble.ts';
import { addBrowserOptions, addWarmUpOption, portOption } from './options.ts';

export interface McpFlags extends Omit<GuardedBrowserOptions, 'headless' | 'approvalPage'> {
  readonly headed?: boolean;
  readonly approval: ApprovalMode;
  readonly http?: number;
  /** False with --no-warm-up: the browser starts on the first call that needs it. */
  readonly warmUp: boolean;
}

export function mcpCommand(): Command {
  const command = new Command('mcp').description(
    'Run the guarded browser as an MCP server (stdio by default).',
  );
  addWarmUpOption(addBrowserOptions(command))
    .addOption(
      new Option(
        '--approval <how>',
        'auto (MCP elicitation if the client supports it, else the local page) | elicit | page | deny',
      )
        .choices(['auto', 'elicit', 'page', 'deny'])
        .default('auto'),
    )
    .option(
      '--http <port>',
      'serve Streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio (0: any free port)',
      portOption('--http'),
    )
    .action(async (flags: McpFlags) => {
      // Loaded on use: an MCP client waits for the tool list on every start.
      const { runMcp } = await import('./runMcp.ts');
      await runMcp(flags);
    });
  return command;
}
