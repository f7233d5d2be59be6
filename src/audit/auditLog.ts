// The append-only audit log: one JSON object a line. A call writes a start record and a completion record with
// the same call id; readers pair them, and show a start alone as a call that never ended.
// Durability: every record is written to the operating system (one write(2) on a descriptor opened for append,
// kept open rather than opened and closed per line) before record() returns. A record is therefore never lost
// when tabward exits, crashes, or is killed with SIGKILL, nor when its browser crashes; only the machine itself
// going down (power, kernel) can lose the lines not yet flushed to disk, as with any log that does not fsync.
// Other processes may append to the same file (call ids say whose); a log moved or deleted is opened afresh.
// Every record carries the session of the process that wrote it: `tabward audit --recipe` saves one session.

import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditEntry, AuditSink, AuditStart } from '../core/audit.ts';
import { visibleText } from '../core/displayText.ts';

/** This process's session id: one per tabward process, on every record it writes. */
export const processSession = `s${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

export class AuditLog implements AuditSink {
  private fd: number | undefined;
  private inode = -1;
  readonly session = processSession;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
  }

  record(entry: AuditEntry | AuditStart): void {
    const { time, ...rest } = entry;
    const line = Buffer.from(
      `${JSON.stringify({ time, session: entry.session ?? this.session, ...rest })}\n`,
    );
    const fd = this.descriptor();
    let written = 0;
    while (written < line.length) written += writeSync(fd, line, written);
  }

  /** The open descriptor, reopened when the file at the path is no longer the one it points to. */
  private descriptor(): number {
    const now = statSync(this.path, { throwIfNoEntry: false })?.ino ?? -2;
    if (this.fd !== undefined && now === this.inode) return this.fd;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = openSync(this.path, 'a', 0o600);
    this.inode = statSync(this.path).ino;
    return this.fd;
  }
}

export interface AuditRead {
  /** Completion records and events, oldest first (the last `tail` of them when asked). */
  readonly entries: AuditEntry[];
  /** Calls that started and have no completion record: cut short (tabward killed) or still running. */
  readonly unfinished: AuditStart[];
  readonly badLines: number[];
}

/** Reads the log; lines that do not parse are reported rather than dropped silently. */
export function readAuditLog(path: string, tail?: number): AuditRead {
  if (!existsSync(path)) return { entries: [], unfinished: [], badLines: [] };
  const lines = readFileSync(path, 'utf8').split('\n');
  const entries: AuditEntry[] = [];
  const starts = new Map<string, AuditStart>();
  const badLines: number[] = [];
  lines.forEach((line, index) => {
    if (!line.trim()) return;
    try {
      const record = JSON.parse(line) as AuditEntry | AuditStart;
      if (record.outcome === 'started') starts.set(record.call, record);
      else entries.push(record);
    } catch {
      badLines.push(index + 1);
    }
  });
  for (const entry of entries) if (entry.call) starts.delete(entry.call);
  return {
    entries: tail === undefined ? entries : entries.slice(-tail),
    unfinished: [...starts.values()],
    badLines,
  };
}

/**
 * A record as one line a terminal shows as it is: pages choose much of it (addresses, an error quoting a script's
 * exception, a site tool's own error text), and an escape sequence or a line break there cleared the screen and
 * forged records above the real ones (an attack review). Controls and invisible characters become marks, line
 * breaks too, and a record is cut at `maxLineChars`; `tabward audit --json` has it whole.
 */
const maxLineChars = 2000;
const oneLine = (text: string) => visibleText(text, maxLineChars);

export function formatUnfinished(start: AuditStart): string {
  return oneLine(
    `${start.time} ${start.frontEnd} ${start.mode} ${start.tool} started, no end recorded (cut short or still running)`,
  );
}

export function formatAuditEntry(entry: AuditEntry): string {
  const where = entry.url
    ? ` ${entry.url}${entry.loadedFrom ? ` (loaded from ${entry.loadedFrom})` : ''}`
    : '';
  const tab = entry.tab ? ` ${entry.tab}[${entry.owner ?? '?'}]` : '';
  const asked = entry.choice ? ` → ${entry.approver ?? '?'}: ${entry.choice}` : '';
  const rule = entry.rule ? ` rule=${entry.rule}` : '';
  // A stop no call carries a message for (the egress proxy's): its reason says why.
  const why = entry.error ?? (entry.decision === 'block' ? entry.reason : undefined);
  const error = why ? ` — ${why}` : '';
  return oneLine(
    `${entry.time} ${entry.frontEnd} ${entry.mode} ${entry.tool}${tab}${where} ${entry.decision}${rule}${asked} ${entry.outcome} ${entry.durationMs}ms${error}`,
  );
}
