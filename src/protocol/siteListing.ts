// How a site's tool listing reaches an agent (issue 38): names, descriptions and schemas are the page's text, so
// each is shown as page text. A description is one line with its quotes escaped and every control, bidi and
// invisible character made visible (displayText.ts); a definition's JSON writes such characters as \u escapes (the
// same value, now visible). Neither can carry a newline, so nothing a page writes can pass for a line of tabward's
// own (another site's origin header, a tool "of" another site). Front ends wrap the lines in an untrusted block.

import { quotedForDisplay } from './displayText.ts';

/** The most of a description shown: past that a page is writing instructions, not a description. */
const maxDescriptionChars = 300;

/** One tool's line: `  name (hint): "description"`. */
export function toolLine(name: string, hint: string, description: string): string {
  return `  ${name}${hint}: ${quotedForDisplay(description, maxDescriptionChars)}`;
}

// What JSON.stringify leaves raw inside strings: DEL and the C1 controls, format characters (bidi overrides,
// zero-width), line and paragraph separators. (It escapes the C0 controls itself; its own newlines are layout.)
const invisible = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/** A page's JSON (a tool's schema or whole definition) with every invisible character written as an escape. */
export function visibleJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    invisible,
    (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}
