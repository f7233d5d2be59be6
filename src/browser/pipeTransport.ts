// The DevTools protocol over the two pipes Chromium opens with --remote-debugging-pipe (it reads commands on its fd 3
// and writes answers and events on its fd 4, each message JSON ended by a NUL byte), shaped as the transport
// Playwright's connectOverCDP takes. Why tabward spawns the browser itself rather than let Playwright launch it:
// the browser then boots while playwright-core is still loading (launchIsolated.ts), and still no debugging port
// exists that another local process could reach.

import type { Readable, Writable } from 'node:stream';
import type { ConnectOverCDPTransport } from 'playwright-core';
import { KeptHttpCache } from './keptHttpCache.ts';
import { ownCommandId, PipeSession, type PipeSessions, sessionOf } from './pipeSession.ts';

/** The largest message read from the browser (bytes); a larger one fails its command (see keep). */
export const maxMessageBytes = 256 * 2 ** 20;

export class PipeTransport implements ConnectOverCDPTransport, PipeSessions {
  onmessage?: (message: object) => void;
  onclose?: (reason?: string) => void;
  /** Playwright closed it: nothing more is delivered. */
  private closedByPlaywright = false;
  private ended = false;
  /** The bytes of a message still arriving (a screenshot spans many chunks): joined once, when its NUL comes. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** A message past `maxMessageBytes`: only its head and tail are kept, to answer its command with an error. */
  private oversize: { head: Buffer; tail: Buffer; bytes: number } | undefined;
  /** Playwright's routes leave the HTTP cache on (keptHttpCache.ts). */
  private readonly cache = new KeptHttpCache();
  /** tabward's own sessions on this pipe (pipeSession.ts): their messages are handled as read, never Playwright's. */
  private readonly own = new Set<PipeSession>();
  /** Whose each session id those ever had is: a late message of one left never reaches Playwright (it asserts). */
  private readonly owners = new Map<string, PipeSession>();

  constructor(
    private readonly toBrowser: Writable,
    fromBrowser: Readable,
  ) {
    fromBrowser.on('data', (chunk: Buffer) => this.received(chunk));
    fromBrowser.on('close', () => this.end('the browser closed its pipe'));
    fromBrowser.on('error', (error) => this.end(error.message));
    // Writing to a browser that has just exited fails with EPIPE: the read side reports the end.
    toBrowser.on('error', () => undefined);
  }

  send(message: object): void {
    if (this.ended) return;
    this.toBrowser.write(`${JSON.stringify(this.cache.outgoing(message))}\0`);
  }

  /** A session of tabward's own on a target (a tab), or on the browser target, beside Playwright's. */
  async open(targetId?: string): Promise<PipeSession> {
    const session = new PipeSession(
      (text) => {
        if (!this.ended) this.toBrowser.write(`${text}\0`);
      },
      (sessionId) => this.owners.set(sessionId, session),
      () => this.own.delete(session),
    );
    this.own.add(session);
    try {
      await session.attach(targetId);
    } catch (error) {
      this.own.delete(session);
      throw error;
    }
    return session;
  }

  close(): void {
    this.closedByPlaywright = true;
    this.toBrowser.end();
    this.end('closed');
  }

  private received(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(0); end !== -1; end = chunk.indexOf(0, start)) {
      this.keep(chunk.subarray(start, end));
      const oversize = this.oversize;
      const text = oversize ? undefined : Buffer.concat(this.partial).toString('utf8');
      this.partial = [];
      this.partialBytes = 0;
      this.oversize = undefined;
      start = end + 1;
      const mine = text === undefined ? undefined : this.ownerOf(text);
      // tabward's own sessions' messages are handled now, ahead of what waits for Playwright (pipeSession.ts); one
      // for a session already left is dropped.
      if (mine && text !== undefined) {
        if (mine !== 'left') this.handleOwn(mine, text);
      }
      // One message per task, as Playwright's own transports deliver them: what a message's handlers await settles
      // before the next message is seen.
      else if (text !== undefined) setImmediate(() => this.deliver(text));
      else if (oversize) setImmediate(() => this.refuse(oversize));
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /**
   * Adds bytes to the message arriving. Past `maxMessageBytes` (a page can make an answer as large as it likes: a
   * DOM snapshot carries every attribute) the bytes are no longer kept: decoded, they would pass the longest string
   * V8 makes (an exception thrown in this stream's handler: the process down) or take gigabytes to parse.
   */
  private keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (!this.oversize && this.partialBytes + bytes.length <= maxMessageBytes) {
      this.partial.push(bytes);
      this.partialBytes += bytes.length;
      return;
    }
    if (!this.oversize) {
      // The message's first bytes (its id) are in what was kept, or in this chunk when it is the first.
      const head = Buffer.concat([...this.partial, bytes.subarray(0, 64)]).subarray(0, 64);
      this.oversize = { head: Buffer.from(head), tail: Buffer.alloc(0), bytes: this.partialBytes };
      this.partial = [];
      this.partialBytes = 0;
    }
    const oversize = this.oversize;
    oversize.bytes += bytes.length;
    const tail = Buffer.concat([oversize.tail, bytes]);
    oversize.tail = Buffer.from(tail.subarray(Math.max(0, tail.length - 256)));
  }

  /**
   * A message too large to read: the answer to a command (its id leads it, its session's id ends it) is given as
   * the command's error, so that its caller fails rather than wait; an event that large is dropped.
   */
  private refuse(oversize: { head: Buffer; tail: Buffer; bytes: number }): void {
    if (this.closedByPlaywright) return;
    const id = /^\{"id":(\d+),/.exec(oversize.head.toString('latin1'))?.[1];
    if (id === undefined) return;
    const sessionId = sessionOf(oversize.tail.toString('latin1').trimEnd());
    this.onmessage?.({
      id: Number(id),
      ...(sessionId ? { sessionId } : {}),
      error: {
        code: -32000,
        message: `the browser's answer was too large to read (${Math.round(oversize.bytes / 2 ** 20)} MB, ${maxMessageBytes / 2 ** 20} MB at most)`,
      },
    });
  }

  /** Which of tabward's own sessions a message is for ('left': one no longer open), or undefined: Playwright's. */
  private ownerOf(text: string): PipeSession | 'left' | undefined {
    const id = ownCommandId(text);
    if (id !== undefined) return [...this.own].find((session) => session.awaits(id)) ?? 'left';
    const owner = this.owners.size > 0 ? this.owners.get(sessionOf(text) ?? '') : undefined;
    if (owner === undefined) return undefined;
    return this.own.has(owner) ? owner : 'left';
  }

  private handleOwn(session: PipeSession, text: string): void {
    try {
      session.handle(text);
    } catch {
      // What the browser sent its own session did not parse: that session goes on without it (its pause times out).
    }
  }

  private deliver(text: string): void {
    if (this.closedByPlaywright) return;
    let message: object;
    try {
      message = JSON.parse(text) as object;
    } catch {
      // The browser never sends anything else: a pipe that does is not one to go on trusting.
      this.close();
      return;
    }
    this.onmessage?.(this.cache.incoming(message));
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    for (const session of this.own) session.end(reason);
    // After the messages already received: a browser's last answers are not lost to its exit.
    setImmediate(() => this.onclose?.(reason));
  }
}
