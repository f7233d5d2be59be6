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
 * How soon the site must have closed the connection for the request to go again: a connection its idle timeout
 * closed fails at once, while one closed after the site has taken its time with the request may have been acted on.
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
  const send = secure ? httpsRequest : httpRequest;
  let current: ClientRequest;
  // Ended by the proxy (the choke point cut it, the browser went away, the proxy closes): its error is that end, and
  // sending it again would undo it.
  let ended = false;
  const attempt = (body: Buffer | undefined) => {
    // The second attempt on a connection of its own: a pool's other idle connection may be just as stale.
    const upstream = send(body ? { ...options, agent: false } : options);
    const sentAt = Date.now();
    current = upstream;
    let answered = false;
    upstream.on('socket', (socket) => {
      if (!socket.connecting) events.going();
      else socket.once(secure ? 'secureConnect' : 'connect', () => events.going());
    });
    upstream.on('response', (answer) => {
      answered = true;
      events.response(answer);
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      const again =
        !ended &&
        !body &&
        !answered &&
        upstream.reusedSocket &&
        Date.now() - sentAt < closedAtOnceMs &&
        closedUnderUs.has(error.code ?? '') &&
        kept.whole();
      if (!again) return events.failed();
      events.resent();
      attempt(kept.body());
    });
    if (body) upstream.end(body);
    else req.pipe(upstream);
  };
  attempt(undefined);
  return {
    end: () => {
      ended = true;
      current.destroy();
    },
  };
}

/** A copy of the request's body as it streams through, while it is small enough to send again. */
function replayCopy(req: IncomingMessage): { whole(): boolean; body(): Buffer } {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= replayableBody) chunks.push(chunk);
    else chunks.length = 0;
  });
  return {
    whole: () => req.readableEnded && size <= replayableBody,
    body: () => Buffer.concat(chunks),
  };
}
