// Page-derived text made safe to show a human (terminal, elicitation, approval page, extension popup). A page
// controls element names, titles, URLs and tool descriptions, and it must not be able to repaint the question
// the human answers: escape sequences, carriage returns, bidi overrides and invisible characters are shown as
// visible `<U+XXXX>` marks, whitespace runs collapse, the length is capped, and look-alike letters from another
// script are flagged. Lives in protocol/ so the extension and the Node side share one implementation.

export const defaultDisplayChars = 120;

export const mixedScriptsWarning = ' ⚠ mixed scripts';

// Controls (C0, DEL, C1), format characters (bidi marks and overrides, zero-width, tags, soft hyphen), line and
// paragraph separators, surrogates, private use, unassigned, and everything Unicode says renders as nothing
// (Hangul fillers, variation selectors, ...). Braille blank looks like a space without being one.
const hidden =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u{2800}\u{3164}\u{FFA0}]/u;
// Emoji presentation selectors are the one default-ignorable that ordinary text carries.
const harmlessSelectors = new Set(['\u{FE0E}', '\u{FE0F}']);
const space = /^[\p{Zs}\t]$/u;
const mark = /^\p{M}$/u;
// More stacked marks than any real script needs only serve to paint over neighbouring lines.
const maxMarksPerLetter = 3;

/** `text` as a human may safely see it: visible, single-line, at most `maxChars` (plus a script warning). */
export function forDisplay(text: string, maxChars = defaultDisplayChars): string {
  const shown = cap(visibleTokens(text), maxChars);
  return hasMixedScripts(text) ? `${shown}${mixedScriptsWarning}` : shown;
}

/** forDisplay without the script warning, for text that is shown as part of a larger, flagged whole. */
export function visibleText(text: string, maxChars = defaultDisplayChars): string {
  return cap(visibleTokens(text), maxChars);
}

/** forDisplay inside double quotes, with quotes and backslashes escaped so the page cannot close the quote. */
export function quotedForDisplay(text: string, maxChars = defaultDisplayChars): string {
  const shown = cap(
    visibleTokens(text).map((token) => (token === '"' || token === '\\' ? `\\${token}` : token)),
    maxChars,
  );
  return `"${shown}"${hasMixedScripts(text) ? mixedScriptsWarning : ''}`;
}

/**
 * Text of many lines (a model's answer, streamed; an audit record's error) as a terminal may show it: line breaks
 * and tabs kept, every other control, escape, bidi or invisible character shown as a mark, so that nothing written
 * can move the cursor, clear the screen, set a scroll region or retitle the window over the question the human
 * answers next. Neither collapsed nor capped: each piece of a stream may be marked on its own (a mark split
 * across two pieces is marked in the first; only the cap on stacked accents starts again with each piece).
 */
export function visibleLines(text: string): string {
  let shown = '';
  let marks = 0;
  for (const char of text) {
    if (char === '\n' || char === '\t') {
      shown += char;
      marks = 0;
    } else if (hidden.test(char) && !harmlessSelectors.has(char)) {
      shown += codePointMark(char);
      marks = 0;
    } else if (mark.test(char)) {
      if (++marks <= maxMarksPerLetter) shown += char;
    } else {
      shown += char;
      marks = 0;
    }
  }
  return shown;
}

/**
 * Text shown character for character, for what a human approves as it will be used (a call's arguments): nothing
 * collapsed, trimmed, dropped or cut, so that two different texts never look the same. Every character that does
 * not show as itself is named as a mark: line breaks, tabs, spaces other than U+0020, controls, bidi and invisible
 * characters, and combining marks past the third on one letter (which would otherwise stack out of sight).
 */
export function exactText(text: string): string {
  let shown = '';
  let marks = 0;
  for (const char of text) {
    if (char === ' ') {
      shown += char;
      marks = 0;
    } else if ((hidden.test(char) && !harmlessSelectors.has(char)) || space.test(char)) {
      shown += codePointMark(char);
      marks = 0;
    } else if (mark.test(char)) {
      shown += ++marks <= maxMarksPerLetter ? char : codePointMark(char);
    } else {
      shown += char;
      marks = 0;
    }
  }
  return shown;
}

/** `<U+202E>` for U+202E: the code point named, so the human sees that something invisible is there. */
export function codePointMark(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

function visibleTokens(text: string): string[] {
  const tokens: string[] = [];
  let marks = 0;
  for (const char of text) {
    if (space.test(char)) {
      if (tokens.length && tokens[tokens.length - 1] !== ' ') tokens.push(' ');
      marks = 0;
    } else if (hidden.test(char) && !harmlessSelectors.has(char)) {
      tokens.push(codePointMark(char));
      marks = 0;
    } else if (mark.test(char)) {
      if (++marks <= maxMarksPerLetter) tokens.push(char);
    } else {
      tokens.push(char);
      marks = 0;
    }
  }
  if (tokens[tokens.length - 1] === ' ') tokens.pop();
  return tokens;
}

// Tokens are never split: a cut never leaves half of a `<U+XXXX>` mark.
function cap(tokens: readonly string[], maxChars: number): string {
  let length = 0;
  for (const token of tokens) length += [...token].length;
  if (length <= maxChars) return tokens.join('');
  let kept = '';
  let used = 0;
  for (const token of tokens) {
    const size = [...token].length;
    if (used + size > maxChars - 1) break;
    kept += token;
    used += size;
  }
  return `${kept.trimEnd()}…`;
}

// Alphabets whose letters pass for Latin ones.
const scripts: readonly RegExp[] = [
  /\p{Script=Latin}/u,
  /\p{Script=Cyrillic}/u,
  /\p{Script=Greek}/u,
  /\p{Script=Armenian}/u,
  /\p{Script=Cherokee}/u,
];
// Cyrillic and Greek letters drawn like Latin ones: a word made only of these poses as a Latin word.
const latinLookAlikes = new Set('аеорсухіјѕԁһӏԛԝьАВЕКМНОРСТХІЈЅԜҮαοινρτυκχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ'.split(''));

/**
 * True when one word mixes alphabets ("Pаypal" with a Cyrillic а), or when a word made only of Cyrillic or
 * Greek look-alikes of Latin letters stands in Latin text ("Save" next to a Cyrillic "Ѕаvе").
 */
export function hasMixedScripts(text: string): boolean {
  const words = text.match(/[\p{L}\p{M}]+/gu) ?? [];
  const hasLatin = /\p{Script=Latin}/u.test(text);
  return words.some((word) => {
    const found = scripts.filter((script) => script.test(word));
    if (found.length > 1) return true;
    if (!hasLatin || found.length !== 1 || found[0] === scripts[0]) return false;
    return [...word].every((char) => latinLookAlikes.has(char) || mark.test(char));
  });
}
