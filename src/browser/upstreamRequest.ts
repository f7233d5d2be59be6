// Sending one request the egress proxy let go on to its site (browser/egressForwarding.ts), as a browser would: on
// a kept-alive connection when one is free, and once more on a connection of its own when the site closed that
// connection as the request went out (its idle timeout ran out meanwhile). Chromium sends a request again in that
// case itself, but to the proxy it is then a second request whose hook token (browser/requestTags.ts) was spent by
// the first, refused as one no hook could tie to a tab: an approved navigation failed that way (docs/architecture.md,
// "The choke point").

import {
  type ClientRequest,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { request as httpsRequest } from 'node:https';

/** The largest body kept to be sent again; a larger one streams through and is not sent twice. */
const replayableBody = 2 ** 20;
/**
 * How soon the site must have closed the connection, having sent nothing on it, for the request to go again: a
 * connection its idle timeout closed fails at once, while one closed after the site has taken its time with the
 * request may have been acted on.
 */
const closedAtOnceMs = 1_000;
/** The errors of a kept-alive connection the other end closed before answering. */
const closedUnderUs = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

export interface UpstreamEvents {
  /** The request is being written out (its connection is open). */
  going(): void;
  /** Sent a second time, on a connection of its own. */
  resent(): void;
  response(answer: IncomingMessage): void;
  failed(): void;
}

/** Sends `req` with `options`; returns what ends the exchange (the attempt under way). */
export function sendUpstream(
  req: IncomingMessage,
  options: RequestOptions,
  secure: boolean,
  events: UpstreamEvents,
): { end(): void } {
  const kept = replayCopy(req);
  // Past the window, or once the site said anything, the copy can no longer be sent: it is let go.
  const window = setTimeout(() => kept.drop(), closedAtOnceMs);
  window.unref();
  const send = secure ? httpsRequest : httpRequest;
  let current: ClientRequest;
  // Ended by the proxy (the choke point cut it, the browser went away, the proxy closes): its error is that end, and
  // sending it again would undo it.
  let ended = false;
  const attempt = (body: Buffer | undefined) => {
    // The second attempt on a connection of its own: a pool's other idle connection may be just as stale.
    const upstream = send(body ? { ...options, agent: false } : options);
    current = upstream;
    // Whether the site answered anything on the connection since this request went out on it (a status line, a
    // 103, a part of one): then it read the request, and it goes no second time. Counted on what the HTTP client
    // reads (a TLS connection's close_notify, which its idle timeout may send, is no answer).
    let heard = false;
    const hear = () => {
      heard = true;
    };
    upstream.on('socket', (socket) => {
      // A kept-alive connection serves many requests: each takes its listener off as it ends.
      socket.on('data', hear);
      upstream.once('close', () => socket.off('data', hear));
      // Sent twice only once the second connection is open: one that fails to open sent nothing.
      const opened = () => {
        if (body) events.resent();
        events.going();
      };
      if (!socket.connecting) opened();
      else socket.once(secure ? 'secureConnect' : 'connect', opened);
    });
    upstream.on('information', () => kept.drop());
    upstream.on('response', (answer) => {
      kept.drop();
      clearTimeout(window);
      events.response(answer);
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      const again =
        !ended &&
        !body &&
        upstream.reusedSocket &&
        !heard &&
        closedUnderUs.has(error.code ?? '') &&
        kept.whole();
      if (!again) {
        kept.drop();
        return events.failed();
      }
      attempt(kept.body());
    });
    if (body) upstream.end(body);
    else req.pipe(upstream);
  };
  attempt(undefined);
  return {
    end: () => {
      ended = true;
      kept.drop();
      current.destroy();
    },
  };
}

/** A copy of the request's body as it streams through, while it is small enough, and may still be, sent again. */
function replayCopy(req: IncomingMessage): { whole(): boolean; body(): Buffer; drop(): void } {
  const chunks: Buffer[] = [];
  let size = 0;
  let dropped = false;
  const copy = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= replayableBody) chunks.push(chunk);
    else chunks.length = 0;
  };
  req.on('data', copy);
  return {
    whole: () => !dropped && req.readableEnded && size <= replayableBody,
    body: () => Buffer.concat(chunks),
    drop: () => {
      if (dropped) return;
      dropped = true;
      chunks.length = 0;
      req.off('data', copy);
    },
  };
}
