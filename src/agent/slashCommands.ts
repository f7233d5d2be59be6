// The agent's slash commands: /browser status|connect|disconnect|tabs, /grants [revoke N|all], /mcp, /audit, /help,
// /clear, /exit.

import { formatAuditEntry, readAuditLog } from '../audit/auditLog.ts';
import type { Approver } from '../core/approvals.ts';
import { isTabwardError } from '../core/errors.ts';
import type { SiteGrant } from '../core/siteGrants.ts';
import type { ToolRunner } from '../tools/runner.ts';
import type { AgentSession } from './agentSession.ts';
import type { McpHost } from './mcpHost.ts';

export const slashHelp = `/browser status       mode, your Chrome, tabs and owners, approvals in force, taint
/browser connect [port|url]   use your logged-in Chrome (default: find it)
/browser disconnect   leave your Chrome as it is and go back to an isolated browser
/browser tabs         open tabs
/grants               site grants in force ([t]/[h] when asked); /grants revoke N|all ends them
/mcp                  your external MCP servers
/mcp restart NAME [args...]   restart one, with these arguments in place of its configured ones
/audit                the last entries of the audit log
/clear                forget the conversation
/help                 this list
/exit                 quit`;

/** Runs a slash command; returns 'exit' to leave the agent. */
export async function runSlashCommand(
  line: string,
  agent: AgentSession,
  auditPath: string,
  print: (text: string) => void,
  host?: McpHost,
): Promise<'exit' | undefined> {
  const [command, sub, arg, ...rest] = line.trim().split(/\s+/);
  const runner = agent.runner;
  const call = async (
    tool: string,
    args: Record<string, unknown> = {},
    approver: Approver = agent.approver,
  ) => {
    const result = await runner.call(tool, args, { frontEnd: 'agent', approver });
    print(result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n'));
  };
  try {
    switch (command) {
      case '/exit':
      case '/quit':
        return 'exit';
      case '/help':
        print(slashHelp);
        return;
      case '/clear':
        agent.clear();
        print('Conversation cleared.');
        return;
      case '/audit':
        for (const entry of readAuditLog(auditPath, 10).entries) print(formatAuditEntry(entry));
        return;
      case '/mcp':
        if (sub === 'restart' && arg && host) {
          await host.restart(arg, rest.length > 0 ? rest : undefined);
          print(
            `Restarted ${arg}${rest.length > 0 ? ` with ${rest.join(' ')}` : ''}; its tools are the same for the model.`,
          );
        } else print(host?.describe() ?? 'No external MCP servers.');
        return;
      case '/browser':
        return await browserCommand(sub, arg, call, print);
      case '/grants':
        grantsCommand(sub, arg, runner, print);
        return;
      default:
        print(`Unknown command ${command}. ${slashHelp}`);
    }
  } catch (error) {
    print(isTabwardError(error) ? `${error.code}: ${error.describe()}` : String(error));
  }
  return undefined;
}

async function browserCommand(
  sub: string | undefined,
  arg: string | undefined,
  call: (tool: string, args?: Record<string, unknown>, approver?: Approver) => Promise<void>,
  print: (text: string) => void,
): Promise<undefined> {
  if (sub === 'status' || sub === undefined) await call('browser_status');
  else if (sub === 'tabs') await call('list_pages');
  else if (sub === 'disconnect') await call('browser_disconnect');
  else if (sub === 'connect') {
    // Through the runner like any call, so it is guarded and audited; the human typed it, which is their yes.
    const target = !arg
      ? {}
      : /^\d+$/.test(arg)
        ? { browserUrl: `http://127.0.0.1:${arg}` }
        : arg.startsWith('ws')
          ? { wsEndpoint: arg }
          : { browserUrl: arg };
    await call('browser_connect', target, typedByHuman);
  } else print(`Unknown: /browser ${sub}. Try /help.`);
  return undefined;
}

/** Lists the site grants in force, or revokes one (by its number in the list) or all; a revocation is audited. */
function grantsCommand(
  sub: string | undefined,
  arg: string | undefined,
  runner: ToolRunner,
  print: (text: string) => void,
): void {
  const grants = runner.state;
  if (sub === undefined) {
    print(grants.siteGrantLines()?.join('\n') ?? 'No site grants in force.');
    return;
  }
  if (sub !== 'revoke' || !arg || !/^(all|\d+)$/.test(arg)) {
    print('Usage: /grants, /grants revoke N (its number in /grants), /grants revoke all.');
    return;
  }
  const revoked: SiteGrant[] =
    arg === 'all' ? grants.siteGrantList() : [grants.revokeSiteGrant(Number(arg))].flatMap((g) => g ?? []);
  if (arg === 'all') grants.clearSiteGrants();
  if (revoked.length === 0) {
    print(arg === 'all' ? 'No site grants in force.' : `No site grant ${arg}; /grants lists them.`);
    return;
  }
  for (const grant of revoked) {
    print(`Revoked: ${grant.tool} on ${grant.origin}.`);
    runner.path.recordEvent({
      tool: 'site_grant_revoke',
      kind: 'mode',
      frontEnd: 'agent',
      args: { tool: grant.tool, origin: grant.origin },
      mode: runner.options.context.session.mode,
      decision: 'allow',
      url: grant.origin,
      approver: typedByHuman.name,
      choice: 'revoke',
      outcome: 'ok',
      durationMs: 0,
    });
  }
}

const typedByHuman: Approver = {
  name: 'terminal (typed by the user)',
  ask: async () => ({ choice: 'approve' }),
};
