// `tabward rules check|list`: see why a page counts as sensitive, and which rules are in force.

import { Command } from 'commander';
import { loadRules, reportRuleProblems } from './config.ts';
import { collect } from './options.ts';

interface RulesFlags {
  readonly rules: string[];
  readonly json?: boolean;
}

export function rulesCommand(): Command {
  const rules = new Command('rules').description('Inspect the sensitive-page rules.');
  rules
    .command('check')
    .description(
      'Say for each URL whether it is sensitive, and which rule matched. Exit code: 0 none sensitive, 1 some sensitive, 2 bad input.',
    )
    .argument('<url...>', 'URLs to check')
    .option('--rules <file>', 'extra rules file (repeatable)', collect, [])
    .option('--json', 'print [{url, sensitive, rule}]')
    .action((urls: string[], flags: RulesFlags) => {
      const loaded = loadRules(flags.rules);
      reportRuleProblems([...loaded.problems, ...loaded.notes], (line) => process.stderr.write(`${line}\n`));
      const results = urls.map((url) => {
        const hit = loaded.rules.match(url);
        return {
          url,
          sensitive: hit !== undefined,
          rule: hit?.rule ?? null,
          origin: hit?.origin ?? null,
          valid: URL.canParse(url),
        };
      });
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify(
            results.map(({ url, sensitive, rule }) => ({ url, sensitive, rule })),
            null,
            2,
          )}\n`,
        );
      } else {
        for (const result of results) {
          const verdict = !result.valid
            ? 'not a URL (include the scheme)'
            : result.sensitive
              ? `SENSITIVE  ${result.rule}  (${result.origin})`
              : 'not sensitive';
          process.stdout.write(`${result.url}\n  ${verdict}\n`);
        }
      }
      // Scripts branch on it: 2 for a bad input, 1 when any URL is sensitive, 0 when none is.
      if (results.some((result) => !result.valid)) process.exitCode = 2;
      else if (results.some((result) => result.sensitive)) process.exitCode = 1;
    });
  rules
    .command('list')
    .description('Print the rules in force and where each came from.')
    .option('--rules <file>', 'extra rules file (repeatable)', collect, [])
    .option('--json', 'print [{pattern, origin}]')
    .action((flags: RulesFlags) => {
      const loaded = loadRules(flags.rules);
      reportRuleProblems([...loaded.problems, ...loaded.notes], (line) => process.stderr.write(`${line}\n`));
      const rows = loaded.rules.rules.map((rule) => ({ pattern: rule.pattern.source, origin: rule.origin }));
      if (flags.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else for (const row of rows) process.stdout.write(`${row.pattern.padEnd(40)} ${row.origin}\n`);
    });
  return rules;
}
