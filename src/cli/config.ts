// Where tabward keeps its files, and loading the user's rules and secrets from them. TABWARD_HOME relocates
// ~/.tabward (tests use it).

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import type { BrowserConfig } from '../browser/session.ts';
import { TabwardError } from '../core/errors.ts';
import type { BrowserMode } from '../core/kinds.ts';
import { type DeclaredSecret, Secrets } from '../core/secrets.ts';
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

/**
 * A dotenv file of secrets. A name may carry the origins it belongs to: `NAME@https://login.example=value`
 * (several joined by commas); typing it anywhere else asks the human.
 */
export function loadSecretsFile(file: string | undefined): Map<string, DeclaredSecret> {
  if (!file) return new Map();
  if (!existsSync(file))
    throw new TabwardError('bad_input', `Secrets file ${file} does not exist.`, 'Check --secrets.');
  const bindings = new Map<string, string[]>();
  const plain = readFileSync(file, 'utf8')
    .split('\n')
    .map((line, index) => {
      const bound = /^(\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*)@([^=\s]+)(\s*=.*)$/s.exec(line);
      if (!bound) return line;
      const [, name = '', origins = '', rest = ''] = bound;
      bindings.set(name.replace(/^\s*(export\s+)?/, ''), parseOrigins(origins, `${file}:${index + 1}`));
      return `${name}${rest}`;
    })
    .join('\n');
  const secrets = new Map<string, DeclaredSecret>();
  for (const [name, value] of Object.entries(parseEnv(plain))) {
    if (value === undefined || value === '') continue;
    secrets.set(name, { value, origins: bindings.get(name) ?? [], source: file });
  }
  return secrets;
}

/** `--secret-env NAME` or `NAME@https://origin`: an environment variable the agent may type by name. */
export function secretsFromEnv(specs: readonly string[]): Map<string, DeclaredSecret> {
  const secrets = new Map<string, DeclaredSecret>();
  for (const spec of specs) {
    const [name = '', origins] = spec.split(/@(.*)/s);
    const value = process.env[name];
    if (!value)
      throw new TabwardError(
        'bad_input',
        `--secret-env ${name}: the environment variable ${name} is not set or empty.`,
        'Export it before starting tabward, or drop the flag.',
      );
    secrets.set(name, {
      value,
      origins: origins ? parseOrigins(origins, `--secret-env ${spec}`) : [],
      source: '--secret-env',
    });
  }
  return secrets;
}

function parseOrigins(list: string, where: string): string[] {
  return list.split(',').map((raw) => {
    try {
      const origin = new URL(raw).origin;
      if (origin !== 'null') return origin;
    } catch {
      // reported below
    }
    throw new TabwardError(
      'bad_input',
      `${where}: "${raw}" is not an origin.`,
      'Bind a secret like NAME@https://login.example.com=value.',
    );
  });
}

export function reportRuleProblems(problems: readonly RuleProblem[], write: (line: string) => void): void {
  for (const problem of problems) write(`tabward: ${problem.origin}: ${problem.message}`);
}

/** The browser flags every command shares, as given on the command line. */
export interface BrowserFlags {
  readonly headless: boolean;
  readonly executablePath?: string | undefined;
  readonly chromeArg: readonly string[];
  readonly userDataDir?: string | undefined;
  readonly browserUrl?: string | undefined;
  readonly wsEndpoint?: string | undefined;
  readonly attachTimeout: number;
}

/** A browser session's configuration from the command line's flags. */
export function browserConfig(
  mode: BrowserMode,
  flags: BrowserFlags,
  notify: (line: string) => void,
): BrowserConfig {
  return {
    mode,
    headless: flags.headless,
    ...(flags.executablePath ? { executablePath: flags.executablePath } : {}),
    chromeArgs: flags.chromeArg,
    attach: {
      ...(flags.userDataDir ? { userDataDir: flags.userDataDir } : {}),
      ...(flags.browserUrl ? { browserUrl: flags.browserUrl } : {}),
      ...(flags.wsEndpoint ? { wsEndpoint: flags.wsEndpoint } : {}),
    },
    attachTimeoutMs: flags.attachTimeout,
    notify,
  };
}

/** Rules in force (problems reported) and the secrets, as every command loads them. */
export function loadRulesAndSecrets(
  ruleFiles: readonly string[],
  secretsFile: string | undefined,
  log: (line: string) => void,
  secretEnv: readonly string[] = [],
) {
  const { rules, problems } = loadRules(ruleFiles);
  reportRuleProblems(problems, log);
  const declared = new Map([...loadSecretsFile(secretsFile), ...secretsFromEnv(secretEnv)]);
  return { rules, secrets: new Secrets(declared) };
}
