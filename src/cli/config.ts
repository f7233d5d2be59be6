// Where tabward keeps its files, and loading the user's rules and secrets from them. TABWARD_HOME relocates
// ~/.tabward (tests use it).

import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import type { BrowserConfig } from '../browser/session.ts';
import { swallowed } from '../core/debug.ts';
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
  /** The rule files read, the user's own first. */
  readonly files: readonly string[];
  /** Lines read as PaiCLI reads them (a glob over the whole URL), each with how. */
  readonly notes: readonly RuleProblem[];
}

/** Defaults, then ~/.tabward/sensitive_patterns.txt (missing is fine), then each --rules file (must exist). */
export function loadRules(extraFiles: readonly string[] = []): LoadedRules {
  const all: SensitiveRule[] = defaultRules();
  const problems: RuleProblem[] = [];
  const notes: RuleProblem[] = [];
  const userFile = userRulesPath();
  const files = [...(existsSync(userFile) ? [userFile] : []), ...extraFiles.map((file) => resolve(file))];
  for (const file of files) {
    const parsed = parseRulesText(readUserFile(file, 'Rules file', '--rules'), file);
    all.push(...parsed.rules);
    problems.push(...parsed.problems);
    notes.push(...parsed.notes);
  }
  return { rules: new RuleSet(all), problems, notes, files };
}

/** A file the user named (rules, secrets), read or refused in one line that names it and the flag. */
function readUserFile(file: string, what: string, flag: string): string {
  if (!existsSync(file))
    throw new TabwardError('bad_input', `${what} ${file} does not exist.`, `Check ${flag}.`);
  if (statSync(file).isDirectory())
    throw new TabwardError('bad_input', `${what} ${file} is a folder.`, `Give ${flag} a file.`);
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new TabwardError(
      'bad_input',
      `${what} ${file} cannot be read (${(error as { code?: string }).code ?? String(error)}).`,
      `Check its permissions, or ${flag}.`,
    );
  }
}

/**
 * A dotenv file of secrets. A name may carry the origins it belongs to: `NAME@https://login.example=value`
 * (several joined by commas); typing it anywhere else asks the human.
 */
export function loadSecretsFile(
  file: string | undefined,
  log: (line: string) => void = () => undefined,
): Map<string, DeclaredSecret> {
  if (!file) return new Map();
  const text = readUserFile(file, 'Secrets file', '--secrets');
  warnIfShared(file, log);
  refuseMalformedLines(text, file);
  const bindings = new Map<string, string[]>();
  const plain = text
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

/** A secrets file others may read is not secret: say so (it still loads, the user may have reasons). */
function warnIfShared(file: string, log: (line: string) => void): void {
  const mode = statSync(file).mode & 0o777;
  if (mode & 0o077)
    log(
      `tabward: warning: secrets file ${file} can be read by other users (mode ${mode.toString(8).padStart(3, '0')}); run \`chmod 600 ${file}\`.`,
    );
}

/**
 * Every line must be blank, a comment, or NAME[@origins]=value; a line the dotenv parser would read some other
 * way (a name with a space, a missing "=") is refused with its number instead of becoming a strange secret.
 * Quoted values may span lines: their continuation lines are not judged.
 */
function refuseMalformedLines(text: string, file: string): void {
  const bad: number[] = [];
  let openQuote: string | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (openQuote) {
      if (line.includes(openQuote)) openQuote = undefined;
      return;
    }
    if (/^\s*(#|$)/.test(line)) return;
    const entry = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*(?:@[^=\s]+)?\s*=\s*(.*)$/.exec(line);
    if (!entry) {
      bad.push(index + 1);
      return;
    }
    const value = entry[1] ?? '';
    const quote = /^["'`]/.exec(value)?.[0];
    if (quote && !value.slice(1).includes(quote)) openQuote = quote;
  });
  if (bad.length)
    throw new TabwardError(
      'bad_input',
      `Secrets file ${file}: line${bad.length > 1 ? 's' : ''} ${bad.join(', ')} ${bad.length > 1 ? 'are' : 'is'} not NAME=value.`,
      'Fix or remove them (a name is letters, digits and _; comments start with #).',
    );
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
    } catch (error) {
      // reported below
      swallowed('cli', 'config.parseOrigins: reported below', error);
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
  ignoreBadRules = false,
) {
  const { rules, problems, notes } = loadRules(ruleFiles);
  refuseBadRules(problems, ignoreBadRules, log);
  // Said once, at start: how a line tabward reads otherwise than its own syntax is matched.
  for (const note of notes) log(`tabward: ${note.origin}: ${note.message}`);
  const declared = new Map([...loadSecretsFile(secretsFile, log), ...secretsFromEnv(secretEnv)]);
  return { rules, secrets: new Secrets(declared) };
}

/**
 * A bad line in a rules file means a page the user meant to protect is not protected: refuse to start, unless
 * the user said to go on without those lines (then they are reported and skipped).
 */
export function refuseBadRules(
  problems: readonly RuleProblem[],
  ignoreBadRules: boolean,
  log: (line: string) => void,
): void {
  if (!problems.length) return;
  if (ignoreBadRules) {
    reportRuleProblems(problems, log);
    return;
  }
  const first = problems[0];
  throw new TabwardError(
    'bad_input',
    `${first?.origin}: ${first?.message.replace(/ This line is skipped\.$/, '')}${problems.length > 1 ? ` (and ${problems.length - 1} more bad line${problems.length > 2 ? 's' : ''})` : ''}`,
    'Fix the rule (`tabward rules list` shows them), or start with --ignore-bad-rules to skip bad lines.',
  );
}
