// Raw JSON-RPC over Streamable HTTP, for tests of what an MCP endpoint answers to requests the SDK client would
// never send (an unknown session id, a body over the limit): `tabward mcp --http` and `tabward relay` alike.

/** POSTs `body` to an MCP endpoint with a bearer token, inside `session` when given. */
export function postMcp(url: string, token: string, body: string, session?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
    },
    body,
  });
}

/** An initialize request, padded (in its client info) to a chosen size. */
export function initializeBody(padding = ''): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1', padding },
    },
  });
}
