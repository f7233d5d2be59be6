// Serving the MCP server over stdio (one client) or Streamable HTTP on 127.0.0.1 (a server per session; what
// each session's server drives, a world of its own or one shared, is the caller's makeServer's choice). Sessions
// are limited in number, and one whose client is gone is closed (SessionLiveness). Over HTTP every request must carry the bearer token (401 says how),
// the Host header is checked against DNS rebinding and a web page's Origin is refused (403). A session's server
// is its own: its elicitation questions go to that session's client only, never to another. A client that hangs
// up on a running call cancels it. An unknown session id is 404 (the spec's "initialize again": the server
// restarted); a body over 4 MiB is 413, in a session or starting one.

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
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { bearerMatches, checkLocalRequest, localHosts } from '../core/localRequest.ts';

export interface StdioHandle {
  /** Closes the transport: calls still running are cancelled (their questions withdrawn), nothing more is sent. */
  close(): Promise<void>;
}

/**
 * Serves one client over stdin/stdout. The client is gone when its end of a pipe closes: stdin ends, closes or
 * fails, or a write to stdout fails (EPIPE once the client was killed). None of these may take tabward down with
 * an unhandled 'error' event: each one closes the transport (cancelling the calls still running) and then runs
 * `onGone` (the shutdown), once.
 */
export async function serveStdio(
  server: Server,
  onGone: () => Promise<void>,
  log: (line: string) => void = () => undefined,
): Promise<StdioHandle> {
  const transport = new StdioServerTransport();
  // Set once tabward is shutting down, by the client leaving or otherwise: later signs of it are expected.
  let ending = false;
  const close = async () => {
    ending = true;
    await transport.close().catch(() => undefined);
  };
  const gone = (why: string) => {
    if (ending) return;
    log(`tabward: the MCP client is gone (${why}); shutting down.`);
    void close().then(onGone);
  };
  process.stdout.on('error', (error: NodeJS.ErrnoException) =>
    gone(`stdout: ${error.code ?? error.message}`),
  );
  process.stdin.on('error', (error: NodeJS.ErrnoException) => gone(`stdin: ${error.code ?? error.message}`));
  process.stdin.on('end', () => gone('stdin closed'));
  process.stdin.on('close', () => gone('stdin closed'));
  transport.onclose = () => gone('transport closed');
  await server.connect(transport);
  // The SDK passes transport errors (a line that is not JSON) to onerror; they are the client's, not fatal.
  const onError = transport.onerror;
  transport.onerror = (error) => {
    onError?.(error);
    log(`tabward: MCP stdio: ${error.message}`);
  };
  return { close };
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

/** How many sessions may be open at once, and when a session whose client is gone is closed. */
export interface HttpSessionLimits {
  /** Sessions open at once; an initialize past it is refused (503) with what to do. */
  readonly maxSessions: number;
  /** A session with no request open for this long is closed (its client forgot it). */
  readonly idleMs: number;
  /** How often sessions are checked; tests shorten it. */
  readonly sweepMs?: number;
}

const defaultLimits: HttpSessionLimits = { maxSessions: 16, idleMs: 30 * 60_000 };

export async function serveHttp(
  makeServer: () => Server,
  port: number,
  auth: HttpAuth,
  host = '127.0.0.1',
  limits: HttpSessionLimits = defaultLimits,
): Promise<HttpHandle> {
  // Loaded here, not with the module: the HTTP transport (and the web server library under it) is about 10 ms of
  // every stdio start, where it is never used.
  const { StreamableHTTPServerTransport } = await import(
    '@modelcontextprotocol/sdk/server/streamableHttp.js'
  );
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const liveness = new SessionLiveness(limits);
  // Sessions being initialized: counted against the limit before they have an id.
  let starting = 0;
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
    if (sessionId !== undefined && !existing)
      return reply(res, 404, 'No such MCP session (the server restarted or it ended): initialize again');
    if (existing && typeof sessionId === 'string') liveness.seen(sessionId, req, res);
    if (existing) {
      if (req.method !== 'POST') return existing.handleRequest(req, res);
      const posted = await readJson(req);
      if (posted === tooLarge) return tooLargeReply(res);
      if (posted === undefined) return reply(res, 400, 'The body is not JSON');
      cancelOnHangUp(existing, posted, res);
      return existing.handleRequest(req, res, posted);
    }
    if (req.method !== 'POST') return reply(res, 400, 'No such session; start with an initialize request');
    const body = await readJson(req);
    if (body === tooLarge) return tooLargeReply(res);
    if (!isInitializeRequest(body))
      return reply(res, 400, 'No such session; start with an initialize request');
    if (sessions.size + starting >= limits.maxSessions)
      return reply(
        res,
        503,
        `tabward serves at most ${limits.maxSessions} MCP sessions at once (--max-sessions), each with a browser context of its own, and all are open. End one (a client's DELETE, or closing it) or start tabward with a higher --max-sessions`,
      );
    starting++;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        liveness.seen(id, req, res);
      },
    });
    transport.onclose = () => {
      if (!transport.sessionId) return;
      sessions.delete(transport.sessionId);
      liveness.forget(transport.sessionId);
    };
    try {
      await makeServer().connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      starting--;
    }
    // Refused (a bad initialize): no session was made, and its server closes with its transport.
    if (!transport.sessionId) await transport.close();
  }
  const sweep = setInterval(() => {
    for (const id of liveness.gone()) void sessions.get(id)?.close();
  }, limits.sweepMs ?? 5_000);
  sweep.unref();

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => resolve());
  });
  const bound = (http.address() as AddressInfo).port;
  allowedHosts = localHosts(host, bound);
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    close: async () => {
      clearInterval(sweep);
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * Which sessions' clients are gone. Streamable HTTP has no hang-up: a client that quits without its DELETE
 * leaves its session (and its browser context) open. A session counts as alive while any request of it is open
 * (the client's event stream, a call running); one with none open is gone after a minute when it had an event
 * stream (its client kept one open, and that connection closed), else after the idle time.
 */
class SessionLiveness {
  private readonly state = new Map<string, { open: number; lastSeen: number; streamed: boolean }>();

  constructor(private readonly limits: HttpSessionLimits) {}

  seen(id: string, req: IncomingMessage, res: ServerResponse): void {
    const entry = this.state.get(id) ?? { open: 0, lastSeen: Date.now(), streamed: false };
    this.state.set(id, entry);
    entry.open++;
    if (req.method === 'GET') entry.streamed = true;
    res.once('close', () => {
      entry.open--;
      entry.lastSeen = Date.now();
    });
  }

  forget(id: string): void {
    this.state.delete(id);
  }

  /** Sessions to close now. */
  gone(): string[] {
    const now = Date.now();
    const streamGoneMs = Math.min(60_000, this.limits.idleMs);
    return [...this.state]
      .filter(
        ([, entry]) =>
          entry.open <= 0 && now - entry.lastSeen > (entry.streamed ? streamGoneMs : this.limits.idleMs),
      )
      .map(([id]) => id);
  }
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

/** The one limit on a request body, before and inside a session. */
export const maxHttpBodyBytes = 4 * 1024 * 1024;
const tooLarge = Symbol('too large');

function tooLargeReply(res: ServerResponse): void {
  reply(
    res,
    413,
    `The request body is over the ${maxHttpBodyBytes}-byte (4 MiB) limit; nothing was run. Send smaller arguments`,
  );
}

/** The parsed body, undefined when it is not JSON, or `tooLarge` (the rest is read and dropped, for the 413). */
function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 16 * maxHttpBodyBytes) req.destroy();
      if (size <= maxHttpBodyBytes) chunks.push(chunk);
    });
    req.once('close', () => resolve(tooLarge));
    req.once('end', () => {
      if (size > maxHttpBodyBytes) return resolve(tooLarge);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(undefined);
      }
    });
  });
}
