// A call's arguments as every question shows them (elicitation, `tabward approvals`, the approval page, the
// terminal, the extension popup): whole, each key and string made visible (displayText.ts), or the question is not
// asked at all. A question that cut its arguments let an agent pad the part that matters past the cut (a private
// key's path after 600 characters of `./`, an SSH key after a long title) and have the human approve what they
// never saw (docs/security.md). In protocol: the extension asks the same way.

import { visibleText } from './displayText.ts';

/** Most characters a question shows of a call's arguments, as shown: beyond it, nobody is asked. */
export const questionArgsMaxChars = 4000;

/** `value` with every string (keys too) made visible, never cut. */
export function visibleArgs(value: unknown): unknown {
  if (typeof value === 'string') return visibleText(value, Number.POSITIVE_INFINITY);
  if (Array.isArray(value)) return value.map(visibleArgs);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        visibleText(key, Number.POSITIVE_INFINITY),
        visibleArgs(inner),
      ]),
    );
  return value;
}

/** The arguments as one JSON line, whole. */
export function shownArgsLine(args: unknown): string {
  return JSON.stringify(visibleArgs(args)) ?? '{}';
}

/** Why a question about `args` would not show them whole, or undefined when it would. */
export function argsTooLongToAsk(args: unknown): string | undefined {
  const length = shownArgsLine(args).length;
  if (length <= questionArgsMaxChars) return undefined;
  return (
    `The arguments are too long for the human to read whole in the question (${length} characters as shown, at ` +
    `most ${questionArgsMaxChars}). Nothing was done: tabward asks only about what it can show in full.`
  );
}

/** What to do about it, for the agent. */
export const argsTooLongHint = 'Use shorter values, or split the work over several calls.';
