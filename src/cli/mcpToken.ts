// The bearer token of `tabward mcp --http`: TABWARD_MCP_TOKEN, else the one kept in ~/.tabward/mcp-token,
// made on first start and shown once, in the line that adds tabward to an MCP client.

import type { HttpAuth } from '../mcp/transports.ts';
import { type BearerToken, bearerToken } from './home.ts';

export const mcpTokenEnv = 'TABWARD_MCP_TOKEN';

export function mcpHttpToken(): BearerToken {
  return bearerToken({ fileName: 'mcp-token', envName: mcpTokenEnv });
}

export function mcpHttpAuth(kept: BearerToken): HttpAuth {
  return {
    token: kept.token,
    hint:
      kept.source === 'env'
        ? `the token is the one in ${mcpTokenEnv} where tabward runs.`
        : `the token is kept in ${kept.file} (or set ${mcpTokenEnv}).`,
  };
}

/** The client-config line; the token itself only when it was just made (it is in the file from then on). */
export function announceMcpToken(kept: BearerToken, url: string, log: (line: string) => void): void {
  const header = (value: string) =>
    `  claude mcp add --transport http tabward ${url} --header "Authorization: Bearer ${value}"`;
  if (kept.source === 'new') {
    log(`tabward: new bearer token for MCP over HTTP, kept in ${kept.file} (shown this once): ${kept.token}`);
    log(header(kept.token));
  } else if (kept.source === 'env') {
    log(`tabward: clients must send the bearer token from ${mcpTokenEnv}:`);
    log(header(`$${mcpTokenEnv}`));
  } else {
    log(`tabward: clients must send the bearer token kept in ${kept.file}:`);
    log(header(`$(cat '${kept.file}')`));
  }
  log('  Any other MCP client: Streamable HTTP at that URL with that Authorization header.');
}
