// What the egress proxy (browser/egressProxy.ts) does with one request once it knows where it goes: judged by the
// policy, then refused with a 403 that says why, or sent on and what came back reported; a WebSocket's handshake
// judged the same way, then each message the page sends on it. And what it answers a request it cannot read.

import type { Agent as HttpAgent, IncomingMessage, ServerResponse } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { type Socket, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { EgressProxyOptions, EgressRequest } from './egressProxy.ts';
import { sendUpstream } from './upstreamRequest.ts';

/** EgressPolicy.egressSent's status for a request whose connection failed before it was written out. */
export const notSent = -1;

/** Requests sent on and sockets open, each with what ends it (both sides at once). */
export type Exchanges = Map<object, { readonly url: string; readonly end: () => void }>;

/**
 * The largest request head read (request line and headers): above what Chromium sends (a URL of up to 2 MiB, cookies,
 * headers a page set), so that every request it makes is read and judged. Node's default (16 KiB) made a long URL's
 * request fail unjudged, as a connection closed.
 */
export const maxRequestHead = 4 * 2 ** 20;
/** The largest response head read from a site: Chromium's own limit (256 KiB); Node's 16 KiB broke larger ones. */
const maxResponseHead = 256 * 2 ** 10;

/** The header a CDP hook of tabward's sets on a request it judged (browser/requestTags.ts). */
export const tagHeader = 'x-tabward-request';
const hopHeaders = new Set(['proxy-connection', 'proxy-authorization', 'proxy-authenticate', tagHeader]);

function egressRequestOf(req: IncomingMessage, url: URL): EgressRequest {
  const tag = req.headers[tagHeader];
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    url: url.href,
    tag: typeof tag === 'string' ? tag : undefined,
    navigation: req.headers['sec-fetch-mode'] === 'navigate',
  };
}

/** The request's headers as they arrived, less the proxy's and tabward's own. */
function outgoingHeaders(req: IncomingMessage): string[] {
  const out: string[] = [];
  for (let at = 0; at + 1 < req.rawHeaders.length; at += 2) {
    const name = req.rawHeaders[at] ?? '';
    if (!hopHeaders.has(name.toLowerCase())) out.push(name, req.rawHeaders[at + 1] ?? '');
  }
  return out;
}

export async function forwardRequest(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL | undefined,
  options: EgressProxyOptions,
  agents: { http: HttpAgent; https: HttpsAgent },
  exchanges: Exchanges,
): Promise<void> {
  if (!url) {
    refuse(res, 'its address cannot be read, so it cannot be judged');
    return;
  }
  const egress = egressRequestOf(req, url);
  const reason = await options.policy
    .egressVerdict(egress)
    .catch((error: unknown) => `it could not be judged (${String(error)})`);
  if (reason) {
    req.resume();
    refuse(res, reason);
    return;
  }
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  // Told as sent once it starts going out (its connection open), whenever its body ends and its answer comes (a
  // server may take a large body slowly and answer long after the action that sent it returned: the action's audit
  // record still names it), and told again with the answer; sent twice, the audit says so.
  let written = false;
  let resent = false;
  const exchange = sendUpstream(
    req,
    {
      host: options.mapHost(hostname),
      port: url.port || (secure ? 443 : 80),
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: outgoingHeaders(req),
      agent: secure ? agents.https : agents.http,
      maxHeaderSize: maxResponseHead,
      ...(secure
        ? {
            servername: /^[\d.]+$|:/.test(hostname) ? '' : hostname,
            rejectUnauthorized: options.verifyUpstream,
          }
        : {}),
    },
    secure,
    {
      going: () => {
        if (written) return;
        written = true;
        options.policy.egressSent(egress, undefined);
      },
      resent: () => {
        resent = true;
      },
      response: (answer) => {
        options.policy.egressSent(egress, answer.statusCode ?? 0, resent);
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        answer.pipe(res);
      },
      // A site that cannot be reached fails in the browser as a connection would (no answer), not as an HTTP error
      // of the proxy's: pages, recipes and the agent see what they would see without it.
      failed: () => {
        options.policy.egressSent(egress, written ? 0 : notSent, resent);
        res.destroy();
      },
    },
  );
  const key = {};
  exchanges.set(key, {
    url: egress.url,
    end: () => {
      exchange.end();
      res.destroy();
    },
  });
  res.on('close', () => {
    exchanges.delete(key);
    if (!res.writableFinished) exchange.end();
  });
}

/**
 * A request whose head cannot be read (larger than `maxRequestHead`, malformed) is answered, not dropped: a closed
 * connection is a failure the browser may follow with a lookup of its own, and the page would learn nothing of why.
 */
export function answerUnreadable(error: Error & { code?: string }, socket: Socket): void {
  // The rest of a head already answered: read and dropped below, until the client goes.
  if (answered.has(socket)) return;
  // Not writable, or an answer to an earlier request still going out on it: nothing can be said in order.
  if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  const [status, why] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['431 Request Header Fields Too Large', `its head is over ${maxRequestHead / 2 ** 20} MiB`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['408 Request Timeout', 'its head did not arrive in time']
        : ['400 Bad Request', 'it is not well-formed HTTP'];
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\n\r\ntabward stopped this request: ${why}, so it cannot be judged\n`,
  );
  // What the client still sends of it is read and dropped, so that it reads the answer, not a reset; for a few
  // seconds at most.
  socket.on('data', () => undefined);
  socket.resume();
  setTimeout(() => socket.destroy(), 5_000).unref();
}

/** Sockets whose unreadable request has been answered. */
const answered = new WeakSet<Socket>();

function refuse(res: ServerResponse, reason: string): void {
  res
    .writeHead(403, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
    .end(`tabward stopped this request: ${reason}\n`);
}

/**
 * A WebSocket: its handshake judged like a request (its whole URL, path and query included), then every message the
 * page sends judged again as it goes (after a sensitive read, a socket opened before may not carry it off).
 */
export async function forwardUpgrade(
  req: IncomingMessage,
  client: Socket,
  head: Buffer,
  url: URL | undefined,
  options: EgressProxyOptions,
  keep: (socket: Socket) => void,
  exchanges: Exchanges,
): Promise<void> {
  keep(client);
  // Nothing the page sends before the handshake is judged may be lost, nor go ahead of it.
  client.pause();
  if (!url || !/^wss?:$/.test(url.protocol)) {
    client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    return;
  }
  const egress = { ...egressRequestOf(req, url), method: 'WEBSOCKET' };
  const reason = await options.policy
    .egressVerdict(egress)
    .catch((error: unknown) => `it could not be judged (${String(error)})`);
  if (reason) {
    client.end(
      `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\ntabward stopped this WebSocket: ${reason}\n`,
    );
    return;
  }
  const secure = url.protocol === 'wss:';
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (secure ? 443 : 80));
  const host = options.mapHost(hostname);
  const upstream: Socket = secure
    ? tlsConnect({
        host,
        port,
        ...(/^[\d.]+$|:/.test(hostname) ? {} : { servername: hostname }),
        rejectUnauthorized: options.verifyUpstream,
        ALPNProtocols: ['http/1.1'],
      })
    : tcpConnect(port, host);
  keep(upstream);
  const key = {};
  exchanges.set(key, {
    url: egress.url,
    end: () => {
      upstream.destroy();
      client.destroy();
    },
  });
  upstream.on('close', () => client.destroy());
  client.on('close', () => {
    exchanges.delete(key);
    upstream.destroy();
  });
  upstream.once(secure ? 'secureConnect' : 'connect', () => {
    options.policy.egressSent(egress, 101);
    const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`];
    const headers = outgoingHeaders(req);
    for (let at = 0; at + 1 < headers.length; at += 2) lines.push(`${headers[at]}: ${headers[at + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      const stop = options.policy.socketMessageVerdict(egress);
      if (stop) {
        options.policy.socketStopped(egress, stop);
        client.destroy();
        return;
      }
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    client.resume();
  });
  upstream.once('error', () => client.destroy());
}
