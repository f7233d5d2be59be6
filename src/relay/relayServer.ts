// `tabward relay`: one HTTP server on 127.0.0.1 for three audiences. The extension pairs (POST /pair with a
// code a human made), fetches single-use one-minute tickets (POST /ticket with its credential) and opens its
// WebSocket (/extension?ticket=...) from the pinned extension Origin. Agents speak MCP over Streamable HTTP at
// /mcp with their bearer token. Every request's Host header is checked (no DNS rebinding), and a browser's Origin
// on /mcp must be the relay's own. Behind a TLS-terminating proxy (`--public-url https://...`) the public name is
// accepted as Host only on requests the proxy marks `X-Forwarded-Proto: https`, so that a token is never taken
// over plain HTTP by that name. An MCP request body
// may be up to 1 MiB, in a session or starting one (413 above); an unknown session id is 404, which tells a
// client to initialize again (a restarted relay forgets its sessions). Stopping answers every call in flight
// ("the relay is stopping") before the connections close.

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
import { maxSocketMessageBytes, relayCloseCodes, ticketLifetimeMs } from '../protocol/siteTools.ts';
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
  /** The https URL agents and the extension use when a TLS-terminating proxy is in front. */
  readonly publicUrl?: string | undefined;
  readonly callDeadlineMs: number;
  readonly version: string;
  /** Every site call is recorded here. */
  readonly audit: AuditSink;
}

export interface RelayHandle {
  readonly url: string;
  readonly hub: ExtensionHub;
  /** Answers the calls in flight ("the relay is stopping"), lets their answers out (bounded), then closes. */
  close(): Promise<void>;
}

/** The one limit on an MCP request body, before and inside a session. */
export const maxMcpBodyBytes = 1024 * 1024;
/** How long stopping waits for the answers of calls in flight to be written. */
const drainMs = 3000;

export async function startRelay(options: RelayOptions): Promise<RelayHandle> {
  const hub = new ExtensionHub(
    options.store,
    options.rules.rules.map((rule) => rule.pattern.source),
  );
  // Calls that were running when a previous relay went down may or may not have run: their keys say so.
  options.store.markInterrupted();
  const calls = new SiteToolCalls({ ...options, hub });
  const allowedOrigins = options.extensionIds.map((id) => `chrome-extension://${id}`);
  const allowedHosts = new Set(options.publicHosts);
  const publicHost = options.publicUrl === undefined ? undefined : new URL(options.publicUrl).host;
  if (publicHost) allowedHosts.add(publicHost);
  /** Why a request may not come in by its Host header, or undefined when it may. */
  const hostRefusal = (req: IncomingMessage): string | undefined => {
    const host = req.headers.host ?? '';
    if (!allowedHosts.has(host)) return 'Host not allowed';
    if (host === publicHost && req.headers['x-forwarded-proto'] !== 'https')
      return 'The public name is served over https only, through the TLS proxy';
    return undefined;
  };
  // A browser page may reach /mcp only from the relay's own origins (an agent's client sends no Origin).
  const mcpOriginRefused = (req: IncomingMessage): boolean => {
    const origin = req.headers.origin;
    if (origin === undefined) return false;
    return ![...allowedHosts].some((host) =>
      host === publicHost
        ? origin === `https://${host}`
        : origin === `http://${host}` || origin === `https://${host}`,
    );
  };
  const api = extensionApi(options.store, allowedOrigins, hub);
  const apiListener = getRequestListener(api.fetch);
  const mcp = mcpSessions(options.store, (agent) => createRelayMcpServer(agent, calls, options.version));
  const sockets = new WebSocketServer({ noServer: true, maxPayload: maxSocketMessageBytes });
  const inFlight = new Set<ServerResponse>();

  const http = createServer((req, res) => {
    const refused = hostRefusal(req);
    if (refused) return reply(res, 403, { error: refused });
    if (req.url?.startsWith('/mcp')) {
      if (mcpOriginRefused(req))
        return reply(res, 403, { error: 'Origin not allowed: browser pages may not call the relay.' });
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
      mcp
        .handle(req, res)
        .catch((error: unknown) => rpcError(res, 500, `The relay failed: ${String(error)}`));
      return;
    }
    void apiListener(req, res);
  });
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (status: number, why: string): void => {
      socket.end(`HTTP/1.1 ${status} ${why}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    const url = new URL(req.url ?? '/', 'http://relay');
    if (hostRefusal(req)) return refuse(403, 'Host not allowed');
    if (url.pathname !== '/extension') return refuse(404, 'Not Found');
    if (!allowedOrigins.includes(req.headers.origin ?? '')) return refuse(403, 'Origin not allowed');
    const ticket = url.searchParams.get('ticket');
    if (!ticket) return refuse(401, 'Ticket required');
    const extension = options.store.spendTicket(ticket);
    if (extension === 'revoked') return refuse(401, 'This browser was unpaired');
    if (typeof extension === 'string') return refuse(401, `Ticket ${extension}`);
    // Refused after the handshake, with a close code: a browser's WebSocket cannot read an HTTP status.
    void hub.admit(extension).then((admitted) =>
      sockets.handleUpgrade(req, socket, head, (ws) => {
        if (admitted) hub.attach(ws, extension);
        else ws.close(relayCloseCodes.taken, 'another connection already speaks for this browser');
      }),
    );
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
      calls.stop('The relay is stopping');
      // The calls just answered write their results; a GET stream stays open for ever, so only POSTs count.
      const end = Date.now() + drainMs;
      while ([...inFlight].some((res) => res.req.method === 'POST') && Date.now() < end)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await mcp.closeAll();
      hub.closeAll();
      sockets.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** POST /pair, /ticket and /unpair (extension only, by Origin), GET /health. */
function extensionApi(store: RelayStore, allowedOrigins: readonly string[], hub: ExtensionHub): Hono {
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
  app.use('/unpair', async (c, next) => {
    if (!allowedOrigins.includes(c.req.header('origin') ?? ''))
      return c.json({ error: 'Only the tabward extension may unpair itself.' }, 403);
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
    return c.json({
      credential: paired.credential,
      workspace: paired.extension.workspace,
      browser: paired.extension.id,
    });
  });
  app.post('/ticket', (c) => {
    const credential = bearer(c.req.header('authorization'));
    const extension = credential ? store.extensionByCredential(credential) : undefined;
    if (!extension) return c.json({ error: 'Unknown extension credential: pair again from the popup.' }, 401);
    if (extension.revoked) return c.json({ error: revokedMessage(extension.id) }, 401);
    return c.json({
      ticket: store.issueTicket(extension.id, ticketLifetimeMs),
      workspace: extension.workspace,
    });
  });
  // The popup's Unpair: the credential dies here, not only in the extension's storage.
  app.post('/unpair', (c) => {
    const credential = bearer(c.req.header('authorization'));
    const extension = credential ? store.extensionByCredential(credential) : undefined;
    if (!extension) return c.json({ error: 'Unknown extension credential: nothing to unpair.' }, 401);
    if (store.revokeExtension(extension.id)) hub.revoke(extension.id, 'unpaired from its popup');
    return c.json({ revoked: extension.id });
  });
  app.notFound((c) => c.json({ error: 'Not found. Agents use /mcp.' }, 404));
  return app;
}

/** Streamable HTTP MCP sessions, each bound to the agent whose bearer token opened it. */
function mcpSessions(
  store: RelayStore,
  makeServer: (agent: AgentRecord) => ReturnType<typeof createRelayMcpServer>,
): { handle(req: IncomingMessage, res: ServerResponse): Promise<void>; closeAll(): Promise<void> } {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; agentId: string }>();
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const token = bearer(req.headers.authorization);
    const agent = token ? store.agentByToken(token) : undefined;
    if (!agent)
      return reply(res, 401, {
        error:
          'A valid agent token is required: Authorization: Bearer <token from `tabward relay token create`>.',
      });
    const sessionId = req.headers['mcp-session-id'];
    if (sessionId !== undefined) {
      const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      // 404 is the spec's "start a new session": the relay restarted, or the session was closed.
      if (!existing)
        return rpcError(res, 404, 'No such MCP session (the relay restarted or it ended): initialize again.');
      if (existing.agentId !== agent.id)
        return reply(res, 403, { error: 'This session belongs to another agent.' });
      if (req.method !== 'POST') return existing.transport.handleRequest(req, res);
      const body = await readBody(req, res);
      if (body === tooLarge) return;
      return existing.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST') return rpcError(res, 400, 'No session yet: start with an initialize request.');
    const body = await readBody(req, res);
    if (body === tooLarge) return;
    if (!isInitializeRequest(body))
      return rpcError(res, 400, 'No session yet: start with an initialize request.');
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
  const closeAll = async (): Promise<void> => {
    for (const { transport } of [...sessions.values()]) await transport.close().catch(() => undefined);
  };
  return { handle, closeAll };
}

function revokedMessage(id: string): string {
  return `This browser (${id}) was unpaired: its pairing was revoked at the relay. Pair again from the popup with a new code (tabward relay pair --workspace NAME).`;
}

function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return match?.[1];
}

const tooLarge = Symbol('too large');

/**
 * The parsed JSON body (undefined when it is not JSON, for the transport to refuse), or `tooLarge` once a 413
 * has been sent: the same limit whether or not a session exists (the SDK's own would be 4 MiB inside one).
 */
function readBody(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number(req.headers['content-length'] ?? 0) > maxMcpBodyBytes;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // What is over the limit is read on and dropped, so the client reads the 413 instead of a reset; a
      // sender that goes on far beyond it is cut off.
      if (size > 64 * maxMcpBodyBytes) req.destroy();
      if (over || size > maxMcpBodyBytes) {
        over = true;
        chunks.length = 0;
      } else chunks.push(chunk);
    });
    req.once('error', () => resolve(tooLarge));
    req.once('close', () => resolve(tooLarge));
    req.once('end', () => {
      if (over) {
        rpcError(
          res,
          413,
          `The request body is over the relay's ${maxMcpBodyBytes}-byte (1 MiB) limit; nothing was run. Send smaller arguments.`,
        );
        return resolve(tooLarge);
      }
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(undefined);
      }
    });
  });
}

/** A JSON-RPC error answer, the shape MCP clients read. */
function rpcError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
