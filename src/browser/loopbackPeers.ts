// Who is on the other end of a loopback TCP connection. The egress proxy serves one browser that tabward started,
// as the user tabward runs as; any other local user could otherwise connect to it and have it fetch as the victim,
// taint the victim's session by "reading" a sensitive page through it, or write lines into the victim's audit
// (docs/security.md, "Other local users"). On Linux the kernel says which user owns each socket in /proc/net/tcp;
// elsewhere (macOS) there is no cheap way to ask, and connections are taken as they come (a limit, documented).

import { accessSync, constants } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';

const table = '/proc/net/tcp';

/** Whether this platform can tell a loopback peer's user (asked once: Linux with /proc mounted, or not). */
let readable: boolean | undefined;
function canTell(): boolean {
  if (readable === undefined) {
    try {
      accessSync(table, constants.R_OK);
      readable = process.platform === 'linux';
    } catch {
      readable = false;
    }
  }
  return readable;
}

/** `127.0.0.1`, 8080 as /proc/net/tcp writes them: the address's bytes in host (little-endian) order, then the port. */
function procAddress(address: string, port: number): string | undefined {
  const parts = address
    .replace(/^::ffff:/, '')
    .split('.')
    .map(Number);
  if (parts.length !== 4 || parts.some((part) => !Number.isInteger(part))) return undefined;
  const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
  return `${parts
    .reverse()
    .map((part) => hex(part, 2))
    .join('')}:${hex(port, 4)}`;
}

/**
 * Tells, for each connection accepted on a loopback IPv4 port, whether its other end belongs to the user this
 * process runs as. True where the platform cannot tell; false when it can and the peer is another user's, or is not
 * found (fail closed: a connection the kernel does not list is not one to trust). The kernel's table is read off the
 * event loop, and once for all the connections of a burst (a page opening six at once): the read walks every socket
 * of the machine and takes milliseconds, which one read per connection on the loop would have cost each page load.
 */
export class LoopbackPeers {
  private readonly verdicts = new WeakMap<Socket, Promise<boolean>>();
  private reading: Promise<Owners> | undefined;
  private next: Promise<Owners> | undefined;

  /** The verdict on `socket`'s peer: begun on its first call (call it as the connection is accepted), then kept. */
  ofSocket(socket: Socket): Promise<boolean> {
    let verdict = this.verdicts.get(socket);
    if (!verdict) {
      verdict = this.judge(socket);
      this.verdicts.set(socket, verdict);
    }
    return verdict;
  }

  private async judge(socket: Socket): Promise<boolean> {
    if (!canTell() || typeof process.getuid !== 'function') return true;
    const { remoteAddress, remotePort, localAddress, localPort } = socket;
    if (!remoteAddress || !remotePort || !localAddress || !localPort) return false;
    // The peer's own socket: its local end is our remote end, and the other way round.
    const peerLocal = procAddress(remoteAddress, remotePort);
    const peerRemote = procAddress(localAddress, localPort);
    if (!peerLocal || !peerRemote) return false;
    try {
      return (await this.tableReadFromNow()).get(`${peerLocal} ${peerRemote}`) === process.getuid();
    } catch {
      return false;
    }
  }

  /** The table as read by a read begun after this call (one in flight may predate the connection): shared. */
  private tableReadFromNow(): Promise<Owners> {
    if (!this.reading) return this.read();
    this.next ??= this.reading
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.read();
      });
    return this.next;
  }

  private read(): Promise<Owners> {
    const reading = readFile(table, 'latin1').then(ownersIn);
    this.reading = reading;
    const done = () => {
      if (this.reading === reading) this.reading = undefined;
    };
    reading.then(done, done);
    return reading;
  }
}

/** Each live connection's owner, by "local remote" address as the kernel writes them. */
type Owners = Map<string, number>;

/** The table parsed once for every connection waiting on it. */
function ownersIn(text: string): Owners {
  const owners: Owners = new Map();
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    // Only a live connection (state 01, ESTABLISHED) has an owner: one the peer closed at once sits in TIME_WAIT,
    // listed as uid 0 with no inode, which a tabward running as root took for its own (an attack review).
    if (fields[3] === '01' && fields[9] !== '0') owners.set(`${fields[1]} ${fields[2]}`, Number(fields[7]));
  }
  return owners;
}
