// The set of sensitive-page rules in force (defaults, the user's file, --rules files) and the question
// every caller asks of it: is this URL sensitive, and by which rule?

import { defaultRuleSeeds } from './defaultRules.ts';
import { isTabwardError } from './errors.ts';
import { compilePattern, matchesPattern, type UrlPattern, urlParts } from './urlPattern.ts';

export interface SensitiveRule {
  readonly pattern: UrlPattern;
  /** Where the rule came from: "default (cloud consoles)", a file path with its line number, ... */
  readonly origin: string;
}

export interface RuleProblem {
  readonly origin: string;
  readonly message: string;
}

export interface RuleMatch {
  readonly rule: string;
  readonly origin: string;
}

export function defaultRules(): SensitiveRule[] {
  return defaultRuleSeeds.map((seed) => ({
    pattern: compilePattern(seed.pattern),
    origin: `default (${seed.category})`,
  }));
}

/** Parses a rules file: one pattern a line, `#` comments, blank lines ignored; bad lines are reported, not fatal. */
export function parseRulesText(
  text: string,
  fileName: string,
): { rules: SensitiveRule[]; problems: RuleProblem[] } {
  const rules: SensitiveRule[] = [];
  const problems: RuleProblem[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!line) return;
    const origin = `${fileName}:${index + 1}`;
    try {
      rules.push({ pattern: compilePattern(line), origin });
    } catch (error) {
      if (!isTabwardError(error)) throw error;
      problems.push({ origin, message: `${error.message} This line is skipped.` });
    }
  });
  return { rules, problems };
}

export class RuleSet {
  readonly rules: readonly SensitiveRule[];

  constructor(rules: readonly SensitiveRule[]) {
    this.rules = rules;
  }

  /**
   * The first rule matching the URL, or undefined. `creatorUrl` is the URL of the document that created an
   * about:blank or srcdoc frame, whose origin such a frame inherits.
   */
  match(url: string, creatorUrl?: string): RuleMatch | undefined {
    const parsed = effectiveUrl(url, creatorUrl);
    if (!parsed) return undefined;
    const parts = urlParts(parsed);
    for (const rule of this.rules) {
      if (matchesPattern(rule.pattern, parts)) return { rule: rule.pattern.source, origin: rule.origin };
    }
    return undefined;
  }
}

/** The URL whose origin a document really has: blob: uses its inner URL, about:blank/srcdoc their creator's. */
export function effectiveUrl(url: string, creatorUrl?: string): URL | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol === 'blob:') return effectiveUrl(parsed.pathname, creatorUrl);
  if (parsed.protocol === 'about:' && creatorUrl) return effectiveUrl(creatorUrl);
  return parsed;
}

/** Opaque documents (data:, about: without a creator, sandboxed) whose origin cannot be judged. */
export function isOpaqueUrl(url: string): boolean {
  const parsed = effectiveUrl(url);
  return !parsed || parsed.origin === 'null';
}
