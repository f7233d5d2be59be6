// The DevTools protocol over the two pipes Chromium opens with --remote-debugging-pipe (it reads commands on its fd 3
// and writes answers and events on its fd 4, each message JSON ended by a NUL byte), shaped as the transport
// Playwright's connectOverCDP takes. Why tabward spawns the browser itself rather than let Playwright launch it:
// the browser then boots while playwright-core is still loading (launchIsolated.ts), and still no debugging port
// exists that another local process could reach.

import type { Readable, Writable } from 'node:stream';
import type { ConnectOverCDPTransport } from 'playwright-core';

export class PipeTransport implements ConnectOverCDPTransport {
  onmessage?: (message: object) => void;
  onclose?: (reason?: string) => void;
  /** Playwright closed it: nothing more is delivered. */
  private closedByPlaywright = false;
  private ended = false;
  /** The bytes of a message still arriving (a screenshot spans many chunks): joined once, when its NUL comes. */
  private partial: Buffer[] = [];

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
    this.toBrowser.write(`${JSON.stringify(message)}\0`);
  }

  close(): void {
    this.closedByPlaywright = true;
    this.toBrowser.end();
    this.end('closed');
  }

  private received(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(0); end !== -1; end = chunk.indexOf(0, start)) {
      this.partial.push(chunk.subarray(start, end));
      const text = Buffer.concat(this.partial).toString('utf8');
      this.partial = [];
      start = end + 1;
      // One message per task, as Playwright's own transports deliver them: what a message's handlers await settles
      // before the next message is seen.
      setImmediate(() => this.deliver(text));
    }
    if (start < chunk.length) this.partial.push(chunk.subarray(start));
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
    this.onmessage?.(message);
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    // After the messages already received: a browser's last answers are not lost to its exit.
    setImmediate(() => this.onclose?.(reason));
  }
}
