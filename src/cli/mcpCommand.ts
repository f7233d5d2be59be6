// `tabward mcp`: the guarded browser as an MCP server over stdio, or Streamable HTTP with --http PORT.

import { Command, Option } from 'commander';
import { type ApprovalMode, createMcpServer } from '../mcp/mcpServer.ts';
import { serveHttp, serveStdio } from '../mcp/transports.ts';
import { assembleGuardedBrowser, type GuardedBrowserOptions } from './assemble.ts';
import { addBrowserOptions, positiveInt } from './options.ts';
import { version } from './version.ts';

interface McpFlags extends Omit<GuardedBrowserOptions, 'headless' | 'approvalPage'> {
  readonly headed?: boolean;
  readonly approval: ApprovalMode;
  readonly http?: number;
}

export function mcpCommand(): Command {
  const command = new Command('mcp').description(
    'Run the guarded browser as an MCP server (stdio by default).',
  );
  addBrowserOptions(command)
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
      (value) => (value === '0' ? 0 : positiveInt('--http')(value)),
    )
    .action(async (flags: McpFlags) => runMcp(flags));
  return command;
}

async function runMcp(flags: McpFlags): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const browser = await assembleGuardedBrowser(
    {
      ...flags,
      headless: !flags.headed,
      approvalPage: flags.approval === 'auto' || flags.approval === 'page',
    },
    log,
  );
  const makeServer = () =>
    createMcpServer({
      runner: browser.runner,
      approval: flags.approval,
      ...(browser.page ? { page: browser.page } : {}),
      version,
    });
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await browser.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
  if (flags.http === undefined) {
    await serveStdio(makeServer(), shutdown);
    return;
  }
  const http = await serveHttp(makeServer, flags.http);
  log(`tabward: MCP over Streamable HTTP at ${http.url}`);
}
