// `tabward audit`: read the audit log, or save one session's browsing as a recipe (--recipe).

import { Command } from 'commander';
import { formatAuditEntry, formatUnfinished, readAuditLog } from '../audit/auditLog.ts';
import type { AuditEntry } from '../core/audit.ts';
import { recipeFromLog, recipeText } from '../recipes/savedRecipes.ts';
import { writeSteps } from '../recipes/writeGate.ts';
import { defaultAuditPath } from './config.ts';
import { writePrivateFile } from './home.ts';
import { positiveInt } from './options.ts';
import { terminalJson, terminalJsonText } from './terminalText.ts';

interface AuditFlags {
  readonly json?: boolean;
  readonly tail?: number;
  readonly auditLog?: string;
  readonly recipe?: boolean;
  readonly session?: string;
  readonly out?: string;
  readonly redis?: string;
}

export function auditCommand(): Command {
  return new Command('audit')
    .description("Show the audit log: every tool call, the guard's decision, the approval and the outcome.")
    .option('--json', 'print the records as a JSON array')
    .option('--tail <n>', 'only the last N records', positiveInt('--tail'))
    .option('--audit-log <file>', 'audit log path (default: ~/.tabward/audit.jsonl)')
    .option('--recipe', "print a session's successful steps as a recipe for tabward run")
    .option('--session <id>', 'with --recipe: the session to save (default: the latest that browsed)')
    .option('--out <file>', 'with --recipe: write the recipe to this file (mode 600) instead of stdout')
    .option('--redis <url>', "read every worker's records from the Redis stream tabward:audit instead")
    .action(async (flags: AuditFlags) => {
      if (flags.redis) return printStream(flags.redis, flags);
      const path = flags.auditLog ?? defaultAuditPath();
      if (flags.recipe) return printRecipe(path, flags);
      const { entries, unfinished, badLines } = readAuditLog(path, flags.tail);
      if (flags.json) process.stdout.write(`${terminalJson([...entries, ...unfinished])}\n`);
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

/** The recipe on stdout (or in --out), what it holds and what was left out on stderr. */
function printRecipe(path: string, flags: AuditFlags): void {
  const saved = recipeFromLog(path, { session: flags.session });
  const text = recipeText(saved);
  if (flags.out) writePrivateFile(flags.out, text);
  else process.stdout.write(terminalJsonText(text));
  const writes = writeSteps(saved.recipe).length;
  const where = flags.out ? ` to ${flags.out}` : '';
  process.stderr.write(
    `tabward: saved session ${saved.session}${where}: ${saved.recipe.steps.length} steps, ${writes} marked write` +
      `${writes > 0 ? ' (tabward run needs --confirm)' : ''}.\n`,
  );
  for (const note of saved.notes) process.stderr.write(`tabward: note: ${note}.\n`);
}

/** The records `tabward worker`s added to the Redis stream (each worker's own file keeps them too). */
async function printStream(url: string, flags: AuditFlags): Promise<void> {
  const { readAuditStream } = await import('../queue/auditStream.ts');
  const records = await readAuditStream(url, flags.tail ?? 1_000);
  const entries = records.filter((record): record is AuditEntry => record.outcome !== 'started');
  if (flags.json) process.stdout.write(`${terminalJson(entries)}\n`);
  else if (entries.length === 0) process.stdout.write(`No audit records in the stream at ${url}.\n`);
  else for (const entry of entries) process.stdout.write(`${formatAuditEntry(entry)}\n`);
}
