// The append-only audit log: one JSON object a line. Appends are synchronous so that records keep the order
// of the calls and survive a crash right after. A call writes a start record and a completion record with the
// same call id; readers pair them, and show a start alone as a call that never ended.

import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditEntry, AuditSink, AuditStart } from '../core/audit.ts';

export class AuditLog implements AuditSink {
  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
  }

  record(entry: AuditEntry | AuditStart): void {
    appendFileSync(this.path, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
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

export function formatUnfinished(start: AuditStart): string {
  return `${start.time} ${start.frontEnd} ${start.mode} ${start.tool} started, no end recorded (cut short or still running)`;
}

export function formatAuditEntry(entry: AuditEntry): string {
  const where = entry.url ? ` ${entry.url}` : '';
  const tab = entry.tab ? ` ${entry.tab}[${entry.owner ?? '?'}]` : '';
  const asked = entry.choice ? ` → ${entry.approver ?? '?'}: ${entry.choice}` : '';
  const rule = entry.rule ? ` rule=${entry.rule}` : '';
  const error = entry.error ? ` — ${entry.error}` : '';
  return `${entry.time} ${entry.frontEnd} ${entry.mode} ${entry.tool}${tab}${where} ${entry.decision}${rule}${asked} ${entry.outcome} ${entry.durationMs}ms${error}`;
}
