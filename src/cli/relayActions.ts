// What the `tabward relay` commands do: open the store, start the server, print tokens and codes.

import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AuditLog } from '../audit/auditLog.ts';
import { TabwardError } from '../core/errors.ts';
import { bundledExtensionId } from '../protocol/siteTools.ts';
import { startRelay } from '../relay/relayServer.ts';
import { RelayStore } from '../relay/relayStore.ts';
import { loadRules, reportRuleProblems } from './config.ts';
import { extensionPath } from './extensionFolder.ts';
import { ensureHome, homeAuditPath } from './home.ts';
import { version } from './packageRoot.ts';
import type { RelayFlags, StoreFlags } from './relayCommand.ts';

const pairingLifetimeMs = 10 * 60_000;

function openStore(flags: StoreFlags): RelayStore {
  if (flags.db === undefined) return new RelayStore(join(ensureHome(), 'relay.db'));
  mkdirSync(dirname(flags.db), { recursive: true });
  return new RelayStore(flags.db);
}

const loopbackHosts = ['127.0.0.1', 'localhost', '::1'];

/**
 * The public URL as given (https, a host, nothing after it), or a refusal: beyond loopback, tokens and pairing
 * codes would travel in clear without a TLS proxy in front, so the relay does not listen there without one.
 */
export function checkPublicUrl(host: string, publicUrl: string | undefined): string | undefined {
  if (publicUrl === undefined) {
    if (loopbackHosts.includes(host)) return undefined;
    throw new TabwardError(
      'bad_input',
      `Refusing to listen on ${host} without TLS: agent tokens and pairing codes would cross the network in clear.`,
      'Put a TLS-terminating proxy in front (docs/relay.md has a Caddy and an nginx configuration) and pass its address with --public-url https://relay.example.com; or keep --host 127.0.0.1.',
    );
  }
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    throw new TabwardError(
      'bad_input',
      `--public-url ${publicUrl} is not a URL.`,
      'Example: https://relay.example.com',
    );
  }
  if (
    url.protocol !== 'https:' ||
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    url.pathname !== '/'
  )
    throw new TabwardError(
      'bad_input',
      `--public-url must be the https address of the proxy, with no path: ${publicUrl} is not.`,
      'Example: https://relay.example.com (the proxy terminates TLS and forwards to this relay).',
    );
  return url.origin;
}

export async function serveRelay(flags: RelayFlags): Promise<void> {
  const publicUrl = checkPublicUrl(flags.host, flags.publicUrl);
  const loaded = loadRules(flags.rules);
  reportRuleProblems([...loaded.problems, ...loaded.notes], (line) => process.stderr.write(`${line}\n`));
  const store = openStore(flags);
  const relay = await startRelay({
    store,
    rules: loaded.rules,
    port: flags.port,
    host: flags.host,
    extensionIds: flags.extensionId.length ? flags.extensionId : [bundledExtensionId],
    publicHosts: flags.publicHost,
    publicUrl,
    callDeadlineMs: flags.callTimeout * 1000,
    version,
    audit: new AuditLog(flags.auditLog ?? homeAuditPath()),
  }).catch((error: unknown) => {
    store.close();
    const busy = (error as { code?: string }).code === 'EADDRINUSE';
    throw new TabwardError(
      'bad_input',
      busy ? `Port ${flags.port} is in use.` : `The relay cannot start: ${String(error)}`,
      busy ? 'Is a relay already running? Else pick another with --port.' : undefined,
    );
  });
  store.setPublicUrl(publicUrl);
  const base = publicUrl ?? relay.url;
  process.stderr.write(
    `tabward relay ${version} listening on ${relay.url}\n` +
      (publicUrl
        ? `  public:    ${publicUrl} (through the TLS proxy; X-Forwarded-Proto: https required)\n`
        : '') +
      `  agents:    ${base}/mcp  (token: tabward relay token create --workspace NAME)\n` +
      `  extension: load ${extensionPath()} in chrome://extensions, then pair with ${base}: tabward relay pair --workspace NAME\n`,
  );
  const stop = async (): Promise<void> => {
    await relay.close();
    store.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

export function pair(flags: StoreFlags & { workspace: string }): void {
  const store = openStore(flags);
  const code = store.createPairingCode(checkWorkspace(flags.workspace), pairingLifetimeMs);
  const publicUrl = store.publicUrl();
  store.close();
  process.stdout.write(
    `Pairing code for workspace "${flags.workspace}": ${code}\n` +
      `Open the tabward extension popup, enter the relay URL${publicUrl ? ` ${publicUrl}` : ''} and this code, and press Pair. It works once, for 10 minutes.\n`,
  );
}

export function createToken(
  flags: StoreFlags & { workspace: string; name: string; port: number; newWorkspace?: boolean },
): void {
  const store = openStore(flags);
  // A typo in the name would make a token that sees nothing, silently: an unknown workspace must be meant.
  if (!flags.newWorkspace && !store.hasWorkspace(checkWorkspace(flags.workspace))) {
    store.close();
    throw new TabwardError(
      'bad_input',
      `Workspace "${flags.workspace}" has no paired browser and no agents.`,
      `Pair a browser first (tabward relay pair --workspace ${flags.workspace}), or add --new-workspace to start it with this token.`,
    );
  }
  const { token, agent } = store.createAgentToken(checkWorkspace(flags.workspace), flags.name);
  // Behind a TLS proxy the agent is elsewhere: it reaches the relay by the public URL its last start gave.
  const publicUrl = store.publicUrl();
  store.close();
  const url = `${publicUrl ?? `http://127.0.0.1:${flags.port}`}/mcp`;
  process.stdout.write(
    `Agent token for "${agent.name}" in workspace "${agent.workspace}" (id ${agent.id}); shown once:\n${token}\n\n` +
      `Add the relay to Claude Code:\n  claude mcp add --transport http tabward-relay ${url} --header "Authorization: Bearer ${token}"\n` +
      `Any other MCP client: Streamable HTTP at ${url} with that Authorization header.\n`,
  );
}

export function listTokens(flags: StoreFlags): void {
  const store = openStore(flags);
  const agents = store.listAgents();
  store.close();
  if (!agents.length)
    process.stdout.write('No agent tokens. Create one: tabward relay token create --workspace NAME\n');
  for (const agent of agents)
    process.stdout.write(
      `${agent.id}  ${agent.workspace}  ${agent.name}  ${agent.createdAt}${agent.revoked ? '  REVOKED' : ''}\n`,
    );
}

export function revokeToken(id: string, flags: StoreFlags): void {
  const store = openStore(flags);
  const done = store.revokeAgent(id);
  store.close();
  if (!done)
    throw new TabwardError(
      'bad_input',
      `No active agent token with id ${id}.`,
      'See `tabward relay token list`.',
    );
  process.stdout.write(`Revoked ${id}.\n`);
}

export function listBrowsers(flags: StoreFlags): void {
  const store = openStore(flags);
  const browsers = store.listExtensions();
  store.close();
  if (!browsers.length)
    process.stdout.write('No paired browsers. Pair one: tabward relay pair --workspace NAME\n');
  for (const browser of browsers)
    process.stdout.write(
      `${browser.id}  ${browser.workspace}  paired ${browser.createdAt}  ${browser.revoked ? 'REVOKED' : `${browser.sharedSites} site(s) shared`}\n`,
    );
}

export function revokeBrowser(id: string, flags: StoreFlags): void {
  const store = openStore(flags);
  const done = store.revokeExtension(id);
  store.close();
  if (!done)
    throw new TabwardError(
      'bad_input',
      `No paired browser with id ${id} (or it is revoked already).`,
      'See `tabward relay browsers list`.',
    );
  // A running relay reads the revocation from the same file: the browser's socket closes the next time it
  // speaks (it pings every 20 s) or a call would go to it, and its tickets are refused at once.
  process.stdout.write(
    `Revoked ${id}: its credential gets no more tickets and a running relay drops its socket (within 5 s).\n`,
  );
}

function checkWorkspace(name: string): string {
  if (!/^[\w.-]{1,64}$/.test(name))
    throw new TabwardError(
      'bad_input',
      `Workspace "${name}" is not a valid name.`,
      'Use letters, digits, ".", "-" or "_".',
    );
  return name;
}
