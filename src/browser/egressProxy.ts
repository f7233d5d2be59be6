// The egress proxy: the one choke point every request of a browser tabward starts passes (docs/architecture.md,
// "The choke point"). Chromium is started with --proxy-server pointing here and `<-loopback>` in its bypass list, so
// that nothing it sends goes direct: tabs, frames in any process, workers, service workers, requests sent as a
// document tears down (keepalive, fetchLater), requests of the browser process itself, WebSockets. TLS is ended here
// with a key of this proxy's own (browser/hostCertificates.ts) that only that browser trusts, so that each request is
// seen whole (method, URL) and judged on its own before anything reaches the network; DNS names are resolved here
// too, and only for requests that go. A request is judged once its head has arrived: refused, it gets a 403 that
// says why and nothing leaves; let go, it is sent on and what came back is reported (egressForwarding.ts). This
// file is the proxy's contract, its servers and its tunnels.

import {
  createServer,
  Agent as HttpAgent,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import {
  answerUnreadable,
  type Exchanges,
  forwardRequest,
  forwardUpgrade,
  maxRequestHead,
} from './egressForwarding.ts';
import type { HostCertificates } from './hostCertificates.ts';
import { LoopbackPeers } from './loopbackPeers.ts';

/** One request as it reaches the choke point. */
export interface EgressRequest {
  readonly method: string;
  /** Absolute: http(s) for requests, ws(s) for WebSocket handshakes. */
  readonly url: string;
  /** The token a CDP hook of tabward's put on the request when it judged it; removed before it leaves. */
  readonly tag: string | undefined;
  /** Sec-Fetch-Mode: navigate (a document request), where the browser sends it (secure origins). */
  readonly navigation: boolean;
  /**
   * The origin of the service or shared worker that sent it (known at the browser-wide gate only): judged with the
   * taint of ended recipe runs that loaded that site too (browser/requestTaint.ts, retired).
   */
  readonly worker?: string;
}

export interface EgressPolicy {
  /** Why the request must not leave, or undefined to send it on. */
  egressVerdict(request: EgressRequest): Promise<string | undefined>;
  /** For each message an open WebSocket sends: why it must not leave (the socket is then closed), or undefined. */
  socketMessageVerdict(request: EgressRequest): string | undefined;
  /**
   * What left: the request was written out (`status` undefined, told again once its answer came), and `status`
   * came back (0: the connection failed after it was written; notSent: before, so nothing left). `resent`: sent a
   * second time, on a connection of its own, the site having closed the first as it went out (upstreamRequest.ts).
   */
  egressSent(request: EgressRequest, status: number | undefined, resent?: boolean): void;
  /** A WebSocket closed for a message it would have sent: reported as a stop. */
  socketStopped(request: EgressRequest, reason: string): void;
}

export interface EgressProxyOptions {
  readonly policy: EgressPolicy;
  readonly certificates: HostCertificates;
  /** Where a host name is reached (tests map every name to 127.0.0.1, as the browser's --host-resolver-rules would). */
  readonly mapHost: (host: string) => string;
  /** Check upstream certificates (off only when the browser itself was told to ignore certificate errors). */
  readonly verifyUpstream: boolean;
}

export interface EgressProxy {
  readonly port: number;
  /** The Chromium switches that send everything the browser sends through this proxy. */
  readonly chromeArgs: readonly string[];
  /** Cuts every request in flight and open WebSocket whose URL `crosses` says; returns how many. */
  cut(crosses: (url: string) => boolean): number;
  close(): void;
}

/** Every name the browser would look up comes to nothing without a query; the proxy's own address is an IP. */
export const noLookups = 'MAP * ~NOTFOUND, EXCLUDE 127.0.0.1';

// Part of the proxy's contract (egressSent's status for nothing sent; the header a hook's token rides in), defined
// where requests are forwarded.
export { notSent, tagHeader } from './egressForwarding.ts';

interface Tunnel {
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;
}

export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const open = new Set<Socket>();
  const exchanges: Exchanges = new Map();
  const tunnels = new WeakMap<Socket, Tunnel>();
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  const keep = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  // Only the browser tabward started, which runs as this user: another local user gets nothing from this proxy
  // (it would fetch as the victim, and what it "read" would taint the victim's session and reach its audit). A
  // connection's requests wait for its verdict before anything of theirs is judged; a tunnel's, for its CONNECT's.
  const peers = new LoopbackPeers();
  const fromThisUser = (socket: Socket, then: () => void) =>
    void peers.ofSocket(socket).then((ours) => (ours ? then() : socket.destroy()));
  const forward = (req: IncomingMessage, res: ServerResponse, tunnel: Tunnel | undefined) =>
    void forwardRequest(req, res, targetOf(req, tunnel), options, agents, exchanges).catch(() =>
      res.destroy(),
    );
  // The server the tunnels' contents are parsed by: requests inside a CONNECT (TLS ended here, or plain).
  const inner = createServer({ maxHeaderSize: maxRequestHead }, (req, res) =>
    forward(req, res, tunnels.get(req.socket)),
  );
  inner.on(
    'upgrade',
    (req: IncomingMessage, socket: Socket, head: Buffer) =>
      void forwardUpgrade(
        req,
        socket,
        head,
        targetOf(req, tunnels.get(req.socket)),
        options,
        keep,
        exchanges,
      ),
  );
  inner.on('clientError', answerUnreadable);
  // The proxy itself: plain-HTTP requests in absolute form, and CONNECT for everything else.
  const outer: Server = createServer({ maxHeaderSize: maxRequestHead }, (req, res) =>
    fromThisUser(req.socket, () => forward(req, res, undefined)),
  );
  outer.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) =>
    fromThisUser(
      socket,
      () => void forwardUpgrade(req, socket, head, targetOf(req, undefined), options, keep, exchanges),
    ),
  );
  outer.on('connection', (socket: Socket) => {
    keep(socket);
    // Closed as soon as it is known to be another user's, whether or not it ever sends a request.
    void peers.ofSocket(socket).then((ours) => ours || socket.destroy());
  });
  outer.on('clientError', answerUnreadable);
  outer.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    // Nothing it sends is read until the verdict: the browser sends nothing before its 200 anyway.
    client.pause();
    fromThisUser(client, () => establish(req, client, head));
  });
  const establish = (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = /^(\[[^\]]+\]|[^\s:]+):(\d+)$/.exec(req.url ?? '');
    if (!target?.[1] || !target[2]) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const [, host, port] = target;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    // Nothing is opened upstream for a tunnel: a preconnect reaches no server, and no name is looked up.
    const start = (first: Buffer) => {
      client.pause();
      client.unshift(first);
      // Wrapped on the next turn, out of the 'data' event the first bytes came in: TLS then reads them from the
      // socket's buffer (wrapped inside the event, the handshake never started).
      setImmediate(() => wrap(first));
    };
    const wrap = (first: Buffer) => {
      const secure = first[0] === 0x16; // a TLS ClientHello; anything else is plain HTTP (a ws: handshake)
      const socket = secure
        ? new TLSSocket(client, {
            isServer: true,
            secureContext: options.certificates.contextFor(host.replace(/^\[|\]$/g, '')),
            ALPNProtocols: ['http/1.1'],
          })
        : client;
      if (secure) keep(socket);
      tunnels.set(socket, { host, port: Number(port), secure });
      inner.emit('connection', socket);
      client.resume();
    };
    if (head.length > 0) start(head);
    else {
      client.once('data', start);
      client.resume();
    }
  };
  await new Promise<void>((resolve, reject) => {
    outer.once('error', reject);
    outer.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = outer.address() as { port: number };
  return {
    port,
    chromeArgs: [
      `--proxy-server=http://127.0.0.1:${port}`,
      // Without it Chromium sends loopback addresses (127.0.0.1, localhost, [::1]) direct, unjudged.
      '--proxy-bypass-list=<-loopback>',
      options.certificates.chromeArg,
      // WebRTC sends UDP (STUN, media) past any HTTP proxy; this policy leaves it only TCP through the proxy, where a
      // tunnel carries nothing that is not HTTP. (--force-webrtc-ip-handling-policy did not stop STUN in Chromium 156.)
      '--webrtc-ip-handling-policy=disable_non_proxied_udp',
      // The browser looks no name up itself: every name is the proxy's to resolve, and only for requests that go.
      // Chromium 156 resolves a request's host on its own in some cases even behind a proxy (a service worker's
      // fetch refused at the browser-wide gate, a request whose connection the proxy closed: measured in its NetLog),
      // and a name a page made up carries what it holds to whoever answers for that domain. Chromium reads the last
      // --host-resolver-rules, so this one wins over a user's; the proxy follows the user's (proxySettings.ts).
      `--host-resolver-rules=${noLookups}`,
    ],
    cut: (crosses) => {
      let cut = 0;
      for (const [key, exchange] of exchanges)
        if (crosses(exchange.url)) {
          exchanges.delete(key);
          exchange.end();
          cut++;
        }
      return cut;
    },
    close: () => {
      outer.close();
      inner.close();
      // Ended first, as ends: destroying their sockets alone would look like a site's closed connection, sent again.
      for (const exchange of exchanges.values()) exchange.end();
      exchanges.clear();
      agents.http.destroy();
      agents.https.destroy();
      for (const socket of open) socket.destroy();
    },
  };
}

/** Where a request goes: the tunnel's host and port (never the Host header), or the absolute URL of a plain one. */
function targetOf(req: IncomingMessage, tunnel: Tunnel | undefined): URL | undefined {
  try {
    const upgrade = (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
    if (!tunnel) {
      const url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') return undefined;
      if (upgrade) url.protocol = 'ws:';
      return url;
    }
    const scheme = upgrade ? (tunnel.secure ? 'wss' : 'ws') : tunnel.secure ? 'https' : 'http';
    return new URL(`${scheme}://${tunnel.host}:${tunnel.port}${req.url ?? '/'}`);
  } catch {
    return undefined;
  }
}
