// The set of sensitive-page rules in force (defaults, the user's file, --rules files) and the question
// every caller asks of it: is this URL sensitive, and by which rule?

import { defaultRuleSeeds } from './defaultRules.ts';
import { isTabwardError } from './errors.ts';
import { RuleIndex } from './ruleIndex.ts';
import {
  compilePattern,
  compileRuleLine,
  matchesOrigin,
  matchesPattern,
  type UrlParts,
  type UrlPattern,
  urlParts,
} from './urlPattern.ts';

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
): { rules: SensitiveRule[]; problems: RuleProblem[]; notes: RuleProblem[] } {
  const rules: SensitiveRule[] = [];
  const problems: RuleProblem[] = [];
  const notes: RuleProblem[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!line) return;
    const origin = `${fileName}:${index + 1}`;
    try {
      const { pattern, note } = compileRuleLine(line);
      rules.push({ pattern, origin });
      if (note) notes.push({ origin, message: note });
    } catch (error) {
      if (!isTabwardError(error)) throw error;
      problems.push({ origin, message: `${error.message} This line is skipped.` });
    }
  });
  return { rules, problems, notes };
}

/** Where the rules in force come from, for browser_status: "defaults (N rules)" and each file with its count. */
export function ruleSources(set: RuleSet): string[] {
  const counts = new Map<string, number>();
  for (const rule of set.rules) {
    const source = rule.origin.startsWith('default (') ? 'defaults' : rule.origin.replace(/:\d+$/, '');
    counts.set(source, (counts.get(source) ?? 0) + 1);
  }
  return [...counts].map(([source, count]) => `${source} (${count} rule${count === 1 ? '' : 's'})`);
}

export class RuleSet {
  readonly rules: readonly SensitiveRule[];
  private readonly index: RuleIndex<SensitiveRule>;
  /** URLs parsed lately: one decision asks about the same frames and destination several times. */
  private readonly parsed = new Map<string, UrlParts | undefined>();

  constructor(rules: readonly SensitiveRule[]) {
    this.rules = rules;
    this.index = new RuleIndex(rules);
  }

  /**
   * The first rule matching the URL, or undefined. `creatorUrl` is the URL of the document that created an
   * about:blank or srcdoc frame, whose origin such a frame inherits.
   */
  match(url: string, creatorUrl?: string): RuleMatch | undefined {
    const parts = this.partsOf(url, creatorUrl);
    if (!parts) return undefined;
    for (const rule of this.index.candidates(parts)) {
      if (matchesPattern(rule.pattern, parts)) return { rule: rule.pattern.source, origin: rule.origin };
    }
    return undefined;
  }

  /**
   * The first rule that marks some page of this URL's origin sensitive, whatever the path: a script running on
   * any page of the origin can reach that page (fetch it, frame it, post to it) with the user's session.
   */
  matchOrigin(url: string, creatorUrl?: string): RuleMatch | undefined {
    const parts = this.partsOf(url, creatorUrl);
    if (!parts) return undefined;
    for (const rule of this.index.candidates(parts)) {
      if (matchesOrigin(rule.pattern, parts)) return { rule: rule.pattern.source, origin: rule.origin };
    }
    return undefined;
  }

  private partsOf(url: string, creatorUrl: string | undefined): UrlParts | undefined {
    const key = creatorUrl === undefined ? url : `${url}\n${creatorUrl}`;
    if (this.parsed.has(key)) return this.parsed.get(key);
    const effective = effectiveUrl(url, creatorUrl);
    const parts = effective ? urlParts(effective) : undefined;
    if (this.parsed.size >= 256) this.parsed.clear();
    this.parsed.set(key, parts);
    return parts;
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
