// Where tabward keeps its files, and loading the user's rules and secrets from them. TABWARD_HOME relocates
// ~/.tabward (tests use it).

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { TabwardError } from '../core/errors.ts';
import {
  defaultRules,
  parseRulesText,
  type RuleProblem,
  RuleSet,
  type SensitiveRule,
} from '../core/sensitiveRules.ts';

export function tabwardHome(): string {
  return process.env.TABWARD_HOME ? resolve(process.env.TABWARD_HOME) : join(homedir(), '.tabward');
}

export function defaultAuditPath(): string {
  return join(tabwardHome(), 'audit.jsonl');
}

export function userRulesPath(): string {
  return join(tabwardHome(), 'sensitive_patterns.txt');
}

export interface LoadedRules {
  readonly rules: RuleSet;
  readonly problems: RuleProblem[];
}

/** Defaults, then ~/.tabward/sensitive_patterns.txt (missing is fine), then each --rules file (must exist). */
export function loadRules(extraFiles: readonly string[] = []): LoadedRules {
  const all: SensitiveRule[] = defaultRules();
  const problems: RuleProblem[] = [];
  const userFile = userRulesPath();
  const files = [...(existsSync(userFile) ? [userFile] : []), ...extraFiles.map((file) => resolve(file))];
  for (const file of files) {
    if (!existsSync(file))
      throw new TabwardError('bad_input', `Rules file ${file} does not exist.`, 'Check --rules.');
    const parsed = parseRulesText(readFileSync(file, 'utf8'), file);
    all.push(...parsed.rules);
    problems.push(...parsed.problems);
  }
  return { rules: new RuleSet(all), problems };
}

export function loadSecretsFile(file: string | undefined): Map<string, string> {
  if (!file) return new Map();
  if (!existsSync(file))
    throw new TabwardError('bad_input', `Secrets file ${file} does not exist.`, 'Check --secrets.');
  return new Map(
    Object.entries(parseEnv(readFileSync(file, 'utf8'))).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
}

export function reportRuleProblems(problems: readonly RuleProblem[], write: (line: string) => void): void {
  for (const problem of problems) write(`tabward: ${problem.origin}: ${problem.message}`);
}
