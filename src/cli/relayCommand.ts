// `tabward relay ...`: run the WebMCP relay, pair the extension, make agent tokens. The relay code (HTTP,
// WebSocket, SQLite, MCP) loads only when one of these runs.

import { Command } from 'commander';
import { TabwardError } from '../core/errors.ts';
import { collect, portNumber, positiveInt } from './options.ts';

export interface RelayFlags {
  readonly port: number;
  readonly host: string;
  readonly db?: string;
  readonly extensionId: string[];
  readonly publicHost: string[];
  readonly publicUrl?: string;
  readonly callTimeout: number;
  readonly rules: string[];
  readonly auditLog?: string;
}

export interface StoreFlags {
  readonly db?: string;
}

const dbOption = ['--db <file>', 'relay database (default: ~/.tabward/relay.db)'] as const;

/**
 * The relay's code, loaded on use. Its SQLite store needs better-sqlite3, a native addon that is an optional
 * peer dependency (so that `tabward mcp` users never build it): when it is missing, say how to add it.
 */
async function relayActions(): Promise<typeof import('./relayActions.ts')> {
  try {
    return await import('./relayActions.ts');
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    if (code !== 'ERR_MODULE_NOT_FOUND' || !message?.includes('better-sqlite3')) throw error;
    throw new TabwardError(
      'not_found',
      'tabward relay keeps its state in SQLite through the better-sqlite3 package, which is not installed (it is optional, so that `tabward mcp` installs without building native code).',
      'Install it beside tabward: `npm install -g better-sqlite3@12` for a global tabward, `npm install better-sqlite3@12` next to a local one, or run `npx -p tabward -p better-sqlite3@12 tabward relay`.',
    );
  }
}

export function relayCommand(): Command {
  // Positional options: `relay --db X` is the server's flag, `relay token create --db X` the subcommand's.
  const relay = new Command('relay')
    .enablePositionalOptions()
    .description(
      'Run the WebMCP relay: any MCP client calls the tools a website registers in your logged-in tab, through the tabward extension.',
    )
    .option('--port <port>', 'port to listen on (0: any free port)', portNumber, 8787)
    .option(
      '--host <host>',
      'address to bind (beyond loopback only with --public-url: a TLS proxy in front)',
      '127.0.0.1',
    )
    .option(
      '--public-url <url>',
      'https URL of a TLS-terminating proxy in front (Caddy, nginx): accepted as Host, printed for agents and pairing',
    )
    .option(...dbOption)
    .option(
      '--extension-id <id>',
      'extension id allowed to connect (default: the bundled one; repeatable)',
      collect,
      [],
    )
    .option(
      '--public-host <host:port>',
      'another Host header to accept, e.g. behind a proxy (repeatable)',
      collect,
      [],
    )
    .option(
      '--call-timeout <seconds>',
      'deadline of one site tool call, approval included',
      positiveInt('--call-timeout'),
      60,
    )
    .option('--rules <file>', 'extra sensitive-page rules (repeatable)', collect, [])
    .option('--audit-log <file>', 'where site calls are recorded (default: ~/.tabward/audit.jsonl)')
    .action(async (flags: RelayFlags) => (await relayActions()).serveRelay(flags));
  relay
    .command('pair')
    .description(
      'Make a one-time code (10 minutes) to type into the extension popup, pairing it with a workspace.',
    )
    .requiredOption('--workspace <name>', 'workspace the browser joins')
    .option(...dbOption)
    .action(async (flags: StoreFlags & { workspace: string }) => (await relayActions()).pair(flags));
  const token = relay.command('token').description('Agent tokens: one per agent, scoped to a workspace.');
  token
    .command('create')
    .description('Create an agent token and print the command that adds the relay to an MCP client.')
    .requiredOption('--workspace <name>', 'workspace whose shared sites the agent may use')
    .option('--name <name>', 'agent name shown in the popup', 'agent')
    .option('--port <port>', 'relay port, for the printed command', portNumber, 8787)
    .option('--new-workspace', 'the workspace is new (no browser paired with it yet): create it')
    .option(...dbOption)
    .action(
      async (flags: StoreFlags & { workspace: string; name: string; port: number; newWorkspace?: boolean }) =>
        (await relayActions()).createToken(flags),
    );
  token
    .command('list')
    .description('List agent tokens (never their secrets).')
    .option(...dbOption)
    .action(async (flags: StoreFlags) => (await relayActions()).listTokens(flags));
  token
    .command('revoke')
    .description('Revoke an agent token by its id (from `token list`).')
    .argument('<id>')
    .option(...dbOption)
    .action(async (id: string, flags: StoreFlags) => (await relayActions()).revokeToken(id, flags));
  const browsers = relay
    .command('browsers')
    .description('Paired browsers (extensions): list them, revoke one that is lost or no longer yours.');
  browsers
    .command('list')
    .description('List paired browsers, their workspaces and how many sites each shares (never credentials).')
    .option(...dbOption)
    .action(async (flags: StoreFlags) => (await relayActions()).listBrowsers(flags));
  browsers
    .command('revoke')
    .description(
      'Revoke a paired browser by its id (from `browsers list`): no more tickets, its socket closes, its sites leave the list.',
    )
    .argument('<id>')
    .option(...dbOption)
    .action(async (id: string, flags: StoreFlags) => (await relayActions()).revokeBrowser(id, flags));
  relay
    .command('extension')
    .description('Print the folder to load in chrome://extensions (Developer mode, "Load unpacked").')
    .action(async () => (await import('./extensionFolder.ts')).printExtensionPath());
  return relay;
}
