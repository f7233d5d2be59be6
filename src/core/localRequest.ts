// Who may talk to tabward's local HTTP servers (`serve`, `mcp --http`): the Host header must name this server
// (no DNS rebinding), an Origin header — browsers send one, command-line clients do not — must be this
// server's own, and the bearer token is compared in constant time.

/** The Host header values that name a server listening on `host:port`. */
export function localHosts(host: string, port: number): string[] {
  const named = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return [...new Set([named, `127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])];
}

export type LocalRequestVerdict = 'ok' | 'bad-host' | 'bad-origin';

/** Host first, then Origin: a web page elsewhere (or a rebinding one) never gets through. */
export function checkLocalRequest(
  host: string | undefined,
  origin: string | undefined,
  hosts: readonly string[],
): LocalRequestVerdict {
  if (!hosts.includes(host ?? '')) return 'bad-host';
  if (origin !== undefined && !hosts.some((name) => origin === `http://${name}`)) return 'bad-origin';
  return 'ok';
}

/** `Authorization: Bearer <token>` with the right token, compared in constant time. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];
  return given !== undefined && sameSecret(given, token);
}

/**
 * Constant time in what was given: every character of the wanted secret is compared, no early exit, so the
 * time taken says nothing about how much of a guess was right.
 */
export function sameSecret(given: string, wanted: string): boolean {
  let difference = given.length ^ wanted.length;
  for (let i = 0; i < wanted.length; i++) difference |= (given.charCodeAt(i) || 0) ^ wanted.charCodeAt(i);
  return difference === 0 && wanted.length > 0;
}
