// `tabward relay`: one HTTP server on 127.0.0.1 for three audiences. The extension pairs (POST /pair with a
// code a human made), fetches single-use one-minute tickets (POST /ticket with its credential) and opens its
// WebSocket (/extension?ticket=...) from the pinned extension Origin. Agents speak MCP over Streamable HTTP at
// /mcp with their bearer token. Every request's Host header is checked (no DNS rebinding).

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { WebSocketServer } from 'ws';
import type { AuditSink } from '../core/audit.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import { maxSocketMessageBytes, ticketLifetimeMs } from '../protocol/siteTools.ts';
import { ExtensionHub } from './extensionHub.ts';
import { createRelayMcpServer } from './relayMcp.ts';
import type { AgentRecord, RelayStore } from './relayStore.ts';
import { SiteToolCalls } from './siteToolCalls.ts';

export interface RelayOptions {
  readonly store: RelayStore;
  readonly rules: RuleSet;
  readonly port: number;
  readonly host: string;
  /** Chrome extension ids whose Origin may pair, fetch tickets and open the socket. */
  readonly extensionIds: readonly string[];
  /** Extra Host header values to accept (when the relay is reached through a proxy or another name). */
  readonly publicHosts: readonly string[];
  readonly callDeadlineMs: number;
  readonly version: string;
  /** Every site call is recorded here. */
  readonly audit: AuditSink;
}

export interface RelayHandle {
  readonly url: string;
  readonly hub: ExtensionHub;
  close(): Promise<void>;
}

export async function startRelay(options: RelayOptions): Promise<RelayHandle> {
  const hub = new ExtensionHub(
    options.store,
    options.rules.rules.map((rule) => rule.pattern.source),
  );
  const calls = new SiteToolCalls({ ...options, hub });
  const allowedOrigins = options.extensionIds.map((id) => `chrome-extension://${id}`);
  const allowedHosts = new Set(options.publicHosts);
  const api = extensionApi(options.store, allowedOrigins);
  const apiListener = getRequestListener(api.fetch);
  const mcp = mcpSessions(options.store, (agent) => createRelayMcpServer(agent, calls, options.version));
  const sockets = new WebSocketServer({ noServer: true, maxPayload: maxSocketMessageBytes });

  const http = createServer((req, res) => {
    if (!allowedHosts.has(req.headers.host ?? '')) return reply(res, 403, { error: 'Host not allowed' });
    if (req.url?.startsWith('/mcp')) {
      mcp(req, res).catch((error: unknown) => reply(res, 500, { error: String(error) }));
      return;
    }
    void apiListener(req, res);
  });
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (status: number, why: string): void => {
      socket.end(`HTTP/1.1 ${status} ${why}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    const url = new URL(req.url ?? '/', 'http://relay');
    if (!allowedHosts.has(req.headers.host ?? '')) return refuse(403, 'Host not allowed');
    if (url.pathname !== '/extension') return refuse(404, 'Not Found');
    if (!allowedOrigins.includes(req.headers.origin ?? '')) return refuse(403, 'Origin not allowed');
    const ticket = url.searchParams.get('ticket');
    if (!ticket) return refuse(401, 'Ticket required');
    const extension = options.store.spendTicket(ticket);
    if (typeof extension === 'string') return refuse(401, `Ticket ${extension}`);
    sockets.handleUpgrade(req, socket, head, (ws) => hub.attach(ws, extension));
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  for (const name of ['127.0.0.1', 'localhost', '[::1]', options.host]) allowedHosts.add(`${name}:${port}`);
  return {
    url: `http://127.0.0.1:${port}`,
    hub,
    close: async () => {
      hub.closeAll();
      sockets.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** POST /pair and POST /ticket (extension only, by Origin), GET /health. */
function extensionApi(store: RelayStore, allowedOrigins: readonly string[]): Hono {
  const app = new Hono();
  app.use('*', bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.json({ error: 'Body too large' }, 413) }));
  app.get('/health', (c) => c.json({ ok: true }));
  app.use('/pair', async (c, next) => {
    if (!allowedOrigins.includes(c.req.header('origin') ?? ''))
      return c.json({ error: 'Only the tabward extension may pair.' }, 403);
    await next();
  });
  app.use('/ticket', async (c, next) => {
    if (!allowedOrigins.includes(c.req.header('origin') ?? ''))
      return c.json({ error: 'Only the tabward extension may ask for tickets.' }, 403);
    await next();
  });
  app.post('/pair', async (c) => {
    const body = (await c.req.json().catch(() => ({}))) as { code?: unknown };
    const paired = typeof body.code === 'string' ? store.redeemPairingCode(body.code) : undefined;
    if (!paired)
      return c.json(
        {
          error: 'Unknown or expired pairing code. Run `tabward relay pair --workspace NAME` for a new one.',
        },
        401,
      );
    return c.json({ credential: paired.credential, workspace: paired.extension.workspace });
  });
  app.post('/ticket', (c) => {
    const credential = bearer(c.req.header('authorization'));
    const extension = credential ? store.extensionByCredential(credential) : undefined;
    if (!extension) return c.json({ error: 'Unknown extension credential: pair again from the popup.' }, 401);
    return c.json({
      ticket: store.issueTicket(extension.id, ticketLifetimeMs),
      workspace: extension.workspace,
    });
  });
  app.notFound((c) => c.json({ error: 'Not found. Agents use /mcp.' }, 404));
  return app;
}

/** Streamable HTTP MCP sessions, each bound to the agent whose bearer token opened it. */
function mcpSessions(
  store: RelayStore,
  makeServer: (agent: AgentRecord) => ReturnType<typeof createRelayMcpServer>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; agentId: string }>();
  return async (req, res) => {
    const token = bearer(req.headers.authorization);
    const agent = token ? store.agentByToken(token) : undefined;
    if (!agent)
      return reply(res, 401, {
        error:
          'A valid agent token is required: Authorization: Bearer <token from `tabward relay token create`>.',
      });
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) {
      if (existing.agentId !== agent.id)
        return reply(res, 403, { error: 'This session belongs to another agent.' });
      return existing.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return reply(res, 400, { error: 'No such session; start with initialize.' });
    const body = await readJson(req);
    if (!isInitializeRequest(body))
      return reply(res, 400, { error: 'No such session; start with initialize.' });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, agentId: agent.id });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await makeServer(agent).connect(transport);
    await transport.handleRequest(req, res, body);
  };
}

function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return match?.[1];
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxSocketMessageBytes) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
