// A call's arguments as every question shows them (elicitation, `tabward approvals`, the approval page, the
// terminal, the extension popup): whole and character for character (displayText.ts exactText), or the question is
// not asked at all. A question that cut its arguments let an agent pad the part that matters past the cut (a private
// key's path after 600 characters of `./`, an SSH key after a long title); one that collapsed or dropped characters
// let two different arguments look the same (`"to "` shown as `"to"`, beside the real `"to"`; a fifth accent) or
// carry a payload out of sight. The human would approve what they never saw (docs/security.md). In protocol: the
// extension asks the same way.

import { exactText } from './displayText.ts';

/** Most characters a question shows of a call's arguments, as shown: beyond it, nobody is asked. */
export const questionArgsMaxChars = 10_000;

/** `value` with every string (keys too) shown character for character, never cut. */
export function visibleArgs(value: unknown): unknown {
  if (typeof value === 'string') return exactText(value);
  if (Array.isArray(value)) return value.map(visibleArgs);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [exactText(key), visibleArgs(inner)]),
    );
  return value;
}

/** A name as a reader takes it in: case, spacing, invisible characters, accents and compatibility forms set aside. */
const nameAsRead = (key: string): string =>
  key
    .normalize('NFKD')
    .replace(/[\s\p{M}\p{Cf}\p{Cc}_-]/gu, '')
    .toLowerCase();

/** Two names of one object that read alike (`to` and `to `), anywhere in `value`: the first pair found. */
function lookAlikeNames(value: unknown): [string, string] | undefined {
  if (Array.isArray(value)) {
    for (const inner of value) {
      const found = lookAlikeNames(inner);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const seen = new Map<string, string>();
  for (const [key, inner] of Object.entries(value)) {
    const other = seen.get(nameAsRead(key));
    if (other !== undefined) return [other, key];
    seen.set(nameAsRead(key), key);
    const found = lookAlikeNames(inner);
    if (found) return found;
  }
  return undefined;
}

/** The arguments as one JSON line, whole. */
export function shownArgsLine(args: unknown): string {
  return JSON.stringify(visibleArgs(args)) ?? '{}';
}

/** Why a question about `args` would not show them whole and unmistakable, or undefined when it would. */
export function argsUnaskable(args: unknown): string | undefined {
  const alike = lookAlikeNames(args);
  if (alike)
    return (
      `Two argument names read alike (${JSON.stringify(exactText(alike[0]))} and ${JSON.stringify(exactText(alike[1]))}): ` +
      'a question cannot show the human which one the page would use. Nothing was done.'
    );
  const length = shownArgsLine(args).length;
  if (length <= questionArgsMaxChars) return undefined;
  return (
    `The arguments are too long for the human to read whole in the question (${length} characters as shown, at ` +
    `most ${questionArgsMaxChars}). Nothing was done: tabward asks only about what it can show in full.`
  );
}

/** What to do about it, for the agent. */
export const argsUnaskableHint =
  'Give each argument once, under its own name, and use shorter values or split the work over several calls.';
