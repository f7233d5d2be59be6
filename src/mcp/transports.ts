// Serving the MCP server over stdio (one client) or Streamable HTTP on 127.0.0.1 (a server per session,
// all sharing one browser and one guard). Over HTTP every request must carry the bearer token (401 says how),
// the Host header is checked against DNS rebinding and a web page's Origin is refused (403). A session's server
// is its own: its elicitation questions go to that session's client only, never to another. A client that hangs
// up on a running call cancels it.

import { randomUUID } from 'node:crypto';
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { bearerMatches, checkLocalRequest, localHosts } from '../core/localRequest.ts';

export async function serveStdio(server: Server, onClose: () => Promise<void>): Promise<void> {
  const transport = new StdioServerTransport();
  transport.onclose = () => void onClose();
  process.stdin.on('end', () => void onClose());
  await server.connect(transport);
}

export interface HttpHandle {
  readonly url: string;
  close(): Promise<void>;
}

export interface HttpAuth {
  readonly token: string;
  /** Where the token is found, for the 401 answer (never the token itself). */
  readonly hint: string;
}

export async function serveHttp(
  makeServer: () => Server,
  port: number,
  auth: HttpAuth,
  host = '127.0.0.1',
): Promise<HttpHandle> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let allowedHosts: string[] = [];
  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`tabward: ${error instanceof Error ? error.message : String(error)}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const verdict = checkLocalRequest(req.headers.host, req.headers.origin, allowedHosts);
    if (verdict === 'bad-host') return reply(res, 403, 'Host not allowed');
    if (verdict === 'bad-origin')
      return reply(res, 403, 'Requests from web pages (an Origin other than this server) are refused');
    if (!req.url?.startsWith('/mcp')) return reply(res, 404, 'The MCP endpoint is /mcp');
    if (!bearerMatches(req.headers.authorization, auth.token)) {
      res.setHeader('www-authenticate', 'Bearer realm="tabward"');
      return reply(res, 401, `Unauthorized: send "Authorization: Bearer <token>"; ${auth.hint}`);
    }
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) {
      if (req.method !== 'POST') return existing.handleRequest(req, res);
      const posted = await readJson(req);
      if (posted === undefined) return reply(res, 400, 'The body is not JSON');
      cancelOnHangUp(existing, posted, res);
      return existing.handleRequest(req, res, posted);
    }
    if (req.method !== 'POST') return reply(res, 400, 'No such session; start with an initialize request');
    const body = await readJson(req);
    if (!isInitializeRequest(body))
      return reply(res, 400, 'No such session; start with an initialize request');
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await makeServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => resolve());
  });
  const bound = (http.address() as AddressInfo).port;
  allowedHosts = localHosts(host, bound);
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * A client that drops the connection of a call still running never reads its answer (there is no event store
 * to resume from): cancel the call as if the client had said so, which withdraws any question it waits on.
 */
function cancelOnHangUp(transport: StreamableHTTPServerTransport, body: unknown, res: ServerResponse): void {
  const ids = (Array.isArray(body) ? body : [body]).filter(isJSONRPCRequest).map((message) => message.id);
  if (!ids.length) return;
  res.on('close', () => {
    if (res.writableFinished) return;
    for (const requestId of ids)
      transport.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId, reason: 'the client disconnected' },
      });
  });
}

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage, limit = 4 * 1024 * 1024): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}
