// URL patterns for sensitive-page rules: the matcher lives in src/protocol/urlPattern.ts (the extension uses it
// too); here a pattern that does not parse becomes a TabwardError('bad_input').

import {
  compilePattern as compileProtocolPattern,
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
