// The append-only audit log: one JSON object a line. Appends are synchronous so that records keep the order
// of the calls and survive a crash right after.

import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditEntry, AuditSink } from '../core/audit.ts';

export class AuditLog implements AuditSink {
  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
  }

  record(entry: AuditEntry): void {
    appendFileSync(this.path, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  }
}

/** Reads the last `tail` records; lines that do not parse are reported rather than dropped silently. */
export function readAuditLog(path: string, tail?: number): { entries: AuditEntry[]; badLines: number[] } {
  if (!existsSync(path)) return { entries: [], badLines: [] };
  const lines = readFileSync(path, 'utf8').split('\n');
  const entries: AuditEntry[] = [];
  const badLines: number[] = [];
  lines.forEach((line, index) => {
    if (!line.trim()) return;
    try {
      entries.push(JSON.parse(line) as AuditEntry);
    } catch {
      badLines.push(index + 1);
    }
  });
  return { entries: tail === undefined ? entries : entries.slice(-tail), badLines };
}

export function formatAuditEntry(entry: AuditEntry): string {
  const where = entry.url ? ` ${entry.url}` : '';
  const tab = entry.tab ? ` ${entry.tab}[${entry.owner ?? '?'}]` : '';
  const asked = entry.choice ? ` → ${entry.approver ?? '?'}: ${entry.choice}` : '';
  const rule = entry.rule ? ` rule=${entry.rule}` : '';
  const error = entry.error ? ` — ${entry.error}` : '';
  return `${entry.time} ${entry.frontEnd} ${entry.mode} ${entry.tool}${tab}${where} ${entry.decision}${rule}${asked} ${entry.outcome} ${entry.durationMs}ms${error}`;
}
