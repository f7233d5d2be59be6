// Several MCP clients of one running `tabward mcp --http`, for the tests of issue 36 (severalClients,
// attackSeveralClients): the server started as a user starts it, real SDK clients over Streamable HTTP connected to
// it (each its own session), their calls, a client leaving (its DELETE), and the server stopped.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { testChromeArgs } from './fixtureServer.ts';
import { callThrough } from './mcpClient.ts';
import { type RunningTabward, startTabward } from './tabwardProcess.ts';

export interface Connected {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
}

/** `tabward mcp --http 0 ARGS` (with the test browser's flags), once it has printed its URL and token. */
export function startMcpHttp(args: readonly string[], home: string): Promise<RunningTabward> {
  return startTabward(
    ['mcp', '--http', '0', ...args, ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg])],
    /new bearer token for MCP over HTTP.*: \S+\n/,
    { home },
  );
}

/** Connect and call helpers for one running `tabward mcp --http`; `open` collects the clients to close after. */
export function clientsOf(tabward: () => RunningTabward, open: Connected[]) {
  const endpoint = () => /MCP over Streamable HTTP at (\S+)/.exec(tabward().output())?.[1] ?? '';
  const token = () => /new bearer token for MCP over HTTP.*: (\S+)\n/.exec(tabward().output())?.[1] ?? '';
  const connect = async (name = 'several-clients-test'): Promise<Connected> => {
    const client = new Client({ name, version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(endpoint()), {
      requestInit: { headers: { Authorization: `Bearer ${token()}` } },
    });
    await client.connect(transport);
    const connected = { client, transport };
    open.push(connected);
    return connected;
  };
  const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
    callThrough(client, name, args, 60_000);
  /** The client ends its session (DELETE) and closes. */
  const leave = async (connected: Connected) => {
    await connected.transport.terminateSession().catch(() => undefined);
    await connected.client.close().catch(() => undefined);
  };
  return { endpoint, token, connect, call, leave };
}

/** Closes the clients still open, then stops tabward (SIGTERM), waiting up to 10 s for it to exit. */
export async function stopAll(
  tabward: RunningTabward | undefined,
  open: readonly Connected[],
): Promise<void> {
  await Promise.all(open.map(({ client }) => client.close().catch(() => undefined)));
  if (!tabward) return;
  const exited = new Promise((resolve) => tabward.child.once('exit', resolve));
  tabward.child.kill('SIGTERM');
  if (tabward.child.exitCode === null)
    await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
}
