// WebSockets that reach past Playwright's socket route, in a browser with no egress proxy (the user's Chrome, remote
// ones; docs/architecture.md "What holds in each mode"). There the route is all that judges a page's sockets, and a
// page can reach the browser's own WebSocket behind it (the route's stand-in keeps the real socket on a property; a
// blank frame has a WebSocket of its own). No CDP hook can hold a WebSocket handshake or message (measured on
// Chromium 156), but the tab's Network domain reports both as they go: one that the route would have refused went
// past it. It cannot be called back; it is told (the audit says it left) and the tab is stopped, so that it sends
// nothing more.

import type { CDPSession } from 'playwright-core';

export type SocketEvent = 'WEBSOCKET' | 'WEBSOCKET MESSAGE';

/**
 * Watches the sockets of one tab or frame session (its Network domain must be on): `verdict` says why a socket to
 * `url` may not carry anything now (undefined: it may); `bypassed` is told of each handshake or message that went
 * anyway. Set before the Network domain is enabled, so that no socket is missed.
 */
export function watchNativeSockets(
  cdp: CDPSession,
  verdict: (url: string) => string | undefined,
  bypassed: (what: SocketEvent, url: string, reason: string) => void,
): void {
  const urls = new Map<string, string>();
  const handshakesTold = new Set<string>();
  const judge = (requestId: string, what: SocketEvent) => {
    const url = urls.get(requestId);
    if (url === undefined) return;
    const reason = verdict(url);
    if (reason) bypassed(what, url, reason);
    return reason;
  };
  // Judged as it is made: the native constructor starts its handshake at once, and a renderer stopped for an earlier
  // one reports no later event of the sockets it made in the same moment.
  const handshake = (requestId: string) => {
    if (handshakesTold.has(requestId)) return;
    if (judge(requestId, 'WEBSOCKET')) handshakesTold.add(requestId);
  };
  cdp.on('Network.webSocketCreated', (event) => {
    const { requestId, url } = event as { requestId: string; url: string };
    urls.set(requestId, url);
    handshake(requestId);
  });
  cdp.on('Network.webSocketWillSendHandshakeRequest', (event) =>
    handshake((event as { requestId: string }).requestId),
  );
  cdp.on('Network.webSocketFrameSent', (event) =>
    judge((event as { requestId: string }).requestId, 'WEBSOCKET MESSAGE'),
  );
  cdp.on('Network.webSocketClosed', (event) => {
    const { requestId } = event as { requestId: string };
    urls.delete(requestId);
    handshakesTold.delete(requestId);
  });
}
