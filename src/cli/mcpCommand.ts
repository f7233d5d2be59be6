// `tabward mcp`: the guarded browser as an MCP server over stdio, or Streamable HTTP with --http PORT.

import { Command, Option } from 'commander';
import type { ApprovalMode } from '../mcp/mcpServer.ts';
import type { GuardedBrowserOptions } from './assemble.ts';
import { addBrowserOptions, addWarmUpOption, portOption, secondsOption } from './options.ts';

export interface McpFlags extends Omit<GuardedBrowserOptions, 'headless' | 'consent'> {
  readonly headed?: boolean;
  readonly approval: ApprovalMode;
  /** Seconds a call waits for the human before it answers "still waiting" (--approval-wait). */
  readonly approvalWait: number;
  /** Milliseconds under which an elicitation decline/cancel is no human's (--approval-human-ms). */
  readonly approvalHumanMs: number;
  /** False with --no-notify. */
  readonly notify: boolean;
  /** --human-verified: questions on sensitive pages are approved only with an enrolled passkey. */
  readonly humanVerified?: boolean;
  readonly http?: number;
  /** With --http: sessions open at once (--max-sessions). */
  readonly maxSessions: number;
  /** With --http: seconds after which a session with nothing open is closed (--session-idle). */
  readonly sessionIdle: number;
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
        'auto (MCP elicitation where the client offers it, and always `tabward approvals` + a notification) | ' +
          'elicit (refuse when the client cannot elicit) | inbox (never elicitation) | deny',
      )
        .choices(['auto', 'elicit', 'inbox', 'page', 'deny'])
        .default('auto'),
    )
    .option(
      '--approval-wait <seconds>',
      'how long a call waits for the human before it returns "still waiting" (the same call again joins the ' +
        "question); keep it under your client's tool timeout (60 s in most)",
      secondsOption('--approval-wait'),
      50,
    )
    .option(
      '--approval-human-ms <ms>',
      'an elicitation decline or cancel quicker than this is a headless client answering for nobody: the ' +
        'question goes on in `tabward approvals`',
      secondsOption('--approval-human-ms', 0, 60_000),
      1_000,
    )
    .option('--no-notify', 'no desktop notification (notify-send / osascript) when a question opens')
    .option(
      '--human-verified',
      "writes on sensitive pages are approved only with your passkey on the question's page (enroll one with " +
        '`tabward approvals enroll`): no hook, shell or script can approve them',
    )
    .option(
      '--http <port>',
      'serve Streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio (0: any free port)',
      portOption('--http'),
    )
    .option(
      '--max-sessions <n>',
      'with --http: MCP sessions served at once, each in a browser context of its own (more are refused)',
      secondsOption('--max-sessions', 1, 256),
      16,
    )
    .option(
      '--session-idle <seconds>',
      'with --http: a session whose client is gone (no request open this long; a minute once its event stream closed) is closed, its context with it',
      secondsOption('--session-idle', 1, 7 * 24 * 3_600),
      1_800,
    )
    .option(
      '--share-context',
      'with --http: every session shares one browser context (cookies, tabs, taint), as a team sharing one login wants; by default each has its own',
    )
    .action(async (flags: McpFlags) => {
      // Loaded on use: an MCP client waits for the tool list on every start.
      const { runMcp } = await import('./runMcp.ts');
      await runMcp(flags);
    });
  return command;
}
