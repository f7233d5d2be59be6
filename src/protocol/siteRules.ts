// What both the relay and the extension judge about a site tool call, so they judge it the same way: whether a
// tool's read-only hint can be believed (not when its name or its description reads as destructive, by the same
// words the recipes' click check uses: `deleteAll` marked read-only is a lie or a bug), and whether a document
// URL matches a sensitive rule (the shipped defaults plus the rules the relay sends). The relay's verdict comes from core/guard.ts; the extension checks it with these.

import { defaultRuleSeeds } from './defaultRules.ts';
import { destructiveVerbs, destructiveWordIn, isVerbForm, nameWords, wordsOf } from './destructiveWords.ts';

export { nameWords };

import { hasMixedScripts, quotedForDisplay } from './displayText.ts';
import {
  compilePattern,
  compileWholeUrlGlob,
  matchesPattern,
  type UrlPattern,
  urlParts,
} from './urlPattern.ts';

/** A tool's name makes an action of these too, which in an address name pages (`/checkout`, `/archive`). */
const destructiveNameVerbs = [
  ...destructiveVerbs,
  'drop',
  'reset',
  'checkout',
  'send',
  'publish',
  'submit',
  'archive',
  'merge',
  'grant',
  'ship',
  'approve',
];

/**
 * The name says the tool changes something, whatever its hint says: one of its words is a destructive verb or a form
 * of one (compatibility forms, accents and hidden characters taken away: `ｄｅｌｅｔｅ`, `déleté`), or it mixes
 * alphabets. A name that is one word of letters in one case (`removeall`, `DELETEALL`, `refundorder`) cannot be
 * split: it reads destructive when it begins or ends with such a verb. A consistency check, not a defence: a site
 * that means to lie names its write `getData`.
 */
export function nameReadsDestructive(name: string): boolean {
  // Letters of another alphabet drawn like Latin ones (a Cyrillic е in `dеleteOrders`) hide a word from any list.
  if (hasMixedScripts(name.normalize('NFKC'))) return true;
  const words = wordsOf(name);
  if (words.some((word) => destructiveNameVerbs.some((verb) => isVerbForm(word, verb, true)))) return true;
  const [only] = words;
  return (
    words.length === 1 &&
    only !== undefined &&
    destructiveNameVerbs.some((verb) => only.startsWith(verb) || only.endsWith(verb))
  );
}

/** A site tool as the page declared it: what the judgement of its read-only hint reads. */
export interface HintedTool {
  readonly name: string;
  readonly description?: string;
  readonly readOnly: boolean;
}

/**
 * Why the page's read-only hint is not believed, in words for the human and the agent; undefined when the tool
 * does not claim to be read-only, or its name and description agree with the claim.
 */
export function distrustedHint(tool: HintedTool): string | undefined {
  if (!tool.readOnly) return undefined;
  if (nameReadsDestructive(tool.name))
    return `the page marks ${quotedForDisplay(tool.name, 60)} read-only, but its name reads as destructive`;
  const word = destructiveWordIn(tool.description ?? '');
  if (word)
    return `the page marks ${quotedForDisplay(tool.name, 60)} read-only, but its description says "${word.slice(0, 40)}"`;
  return undefined;
}

/** The page's read-only hint, believed only when neither the name nor the description contradicts it. */
export function trustedReadOnly(tool: HintedTool): boolean {
  return tool.readOnly && distrustedHint(tool) === undefined;
}

/** Sensitive-page rules as the extension holds them: the defaults it ships and the patterns the relay sent. */
export class SiteRules {
  private readonly patterns: readonly UrlPattern[];

  constructor(extra: readonly string[] = []) {
    const sources = [...defaultRuleSeeds.map((seed) => seed.pattern), ...extra];
    const patterns: UrlPattern[] = [];
    for (const source of new Set(sources)) {
      try {
        patterns.push(compilePattern(source));
      } catch {
        // A PaiCLI-style line (a glob over the whole URL) is read as the relay reads it; one neither can read is
        // skipped (the relay judged with what it could).
        try {
          patterns.push(compileWholeUrlGlob(source));
        } catch {
          // skipped
        }
      }
    }
    this.patterns = patterns;
  }

  /** The source of the first rule the URL matches; unparsable URLs match nothing (the relay fails closed). */
  match(url: string): string | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return undefined;
    }
    const parts = urlParts(parsed);
    return this.patterns.find((pattern) => matchesPattern(pattern, parts))?.source;
  }
}
