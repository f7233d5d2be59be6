// URL patterns for sensitive-page rules: the matcher lives in src/protocol/urlPattern.ts (the extension uses it
// too); here a pattern that does not parse becomes a TabwardError('bad_input').

import {
  compilePattern as compileProtocolPattern,
  compileWholeUrlGlob,
  type UrlPattern,
  UrlPatternError,
} from '../protocol/urlPattern.ts';
import { TabwardError } from './errors.ts';

export {
  matchesOrigin,
  matchesPattern,
  stripTrailingDot,
  type UrlParts,
  type UrlPattern,
  urlParts,
} from '../protocol/urlPattern.ts';

export function compilePattern(source: string): UrlPattern {
  try {
    return compileProtocolPattern(source);
  } catch (error) {
    if (error instanceof UrlPatternError) throw new TabwardError('bad_input', error.message, error.hint);
    throw error;
  }
}

/**
 * A rules-file line: a URL pattern, or else (PaiCLI's files: a glob over the whole URL) that glob, with the note
 * saying how it is read. Only a line that is neither is an error.
 */
export function compileRuleLine(source: string): { pattern: UrlPattern; note?: string } {
  try {
    return { pattern: compileProtocolPattern(source) };
  } catch (error) {
    if (!(error instanceof UrlPatternError)) throw error;
    try {
      return {
        pattern: compileWholeUrlGlob(source),
        note: `"${source.trim()}" is not a URL pattern (${error.message.replace(/^Bad URL pattern "[^"]*": /, '').replace(/\.$/, '')}); it is matched as a glob over the whole URL (\`*\` any run, \`?\` one character, any case), as PaiCLI does.`,
      };
    } catch (second) {
      if (second instanceof UrlPatternError) throw new TabwardError('bad_input', second.message, second.hint);
      throw second;
    }
  }
}
