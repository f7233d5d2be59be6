// `tabward audit`: read the audit log.

import { Command } from 'commander';
import { formatAuditEntry, formatUnfinished, readAuditLog } from '../audit/auditLog.ts';
import { defaultAuditPath } from './config.ts';
import { positiveInt } from './options.ts';

interface AuditFlags {
  readonly json?: boolean;
  readonly tail?: number;
  readonly auditLog?: string;
}

export function auditCommand(): Command {
  return new Command('audit')
    .description("Show the audit log: every tool call, the guard's decision, the approval and the outcome.")
    .option('--json', 'print the records as a JSON array')
    .option('--tail <n>', 'only the last N records', positiveInt('--tail'))
    .option('--audit-log <file>', 'audit log path (default: ~/.tabward/audit.jsonl)')
    .action((flags: AuditFlags) => {
      const path = flags.auditLog ?? defaultAuditPath();
      const { entries, unfinished, badLines } = readAuditLog(path, flags.tail);
      if (flags.json) process.stdout.write(`${JSON.stringify([...entries, ...unfinished], null, 2)}\n`);
      else if (entries.length + unfinished.length === 0)
        process.stdout.write(`No audit records in ${path}.\n`);
      else {
        for (const entry of entries) process.stdout.write(`${formatAuditEntry(entry)}\n`);
        for (const start of unfinished) process.stdout.write(`${formatUnfinished(start)}\n`);
      }
      if (badLines.length > 0)
        process.stderr.write(`tabward: ${path}: unreadable lines ${badLines.join(', ')}\n`);
    });
}
