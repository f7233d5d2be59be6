// What keeps a page's JSON Schema from making tabward slow (issue 38): a site registers its tools' schemas, and the
// arguments an agent sends are checked against them on the relay's one thread (and in `tabward mcp`). A `pattern` is
// matched by RE2 (linear time: `^(\w+\s?)*$` against a long word froze the relay for 24 s under JavaScript's
// backtracking engine); a pattern RE2 cannot run (look-around, back-references) makes the schema refuse every call,
// saying so. Arguments are capped before any check (a 60,000-item array under `uniqueItems` stalled another
// workspace's call for 5.7 s), and so is the schema itself.

import { RE2JS } from 're2js';
import { TabwardError } from './errors.ts';

/** The largest arguments checked, as JSON text. */
export const maxArgumentBytes = 64 * 1024;
/** The longest array anywhere in the arguments (uniqueItems compares every pair). */
export const maxArrayItems = 1_000;
/** The largest schema compiled, as JSON text. */
export const maxSchemaBytes = 64 * 1024;

/**
 * Ajv's `code.regExp`: JSON Schema patterns are searched for, unanchored, as ECMAScript's test() does. (`code` names
 * it in generated standalone code, which tabward never makes.)
 */
export const linearRegExp = Object.assign(
  (pattern: string, flags: string): { test(text: string): boolean } => {
    const compiled = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
    return { test: (text) => compiled.test(text) };
  },
  { code: 're2js' },
);

/** Why arguments are too large to check, or undefined. */
export function argumentsProblem(args: unknown): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(args) ?? '');
  if (bytes > maxArgumentBytes)
    return `the arguments are ${bytes} bytes of JSON; at most ${maxArgumentBytes} are checked and sent`;
  const longest = longestArray(args, 0);
  if (longest > maxArrayItems)
    return `an array in the arguments has ${longest} items; at most ${maxArrayItems} are checked and sent`;
  return undefined;
}

/** Why a page's schema is too large to compile, or undefined. */
export function schemaProblem(schema: unknown): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(schema) ?? '');
  return bytes > maxSchemaBytes
    ? `its schema is ${bytes} bytes of JSON; at most ${maxSchemaBytes} are compiled`
    : undefined;
}

function longestArray(value: unknown, depth: number): number {
  if (depth > 64 || value === null || typeof value !== 'object') return 0;
  const inner = Object.values(value).reduce<number>(
    (most, item) => Math.max(most, longestArray(item, depth + 1)),
    0,
  );
  return Math.max(Array.isArray(value) ? value.length : 0, inner);
}

/** Refuses a call whose arguments or schema are too large to check, before anything is compiled or sent. */
export function refuseUncheckable(
  tool: { readonly name: string; readonly inputSchema: unknown },
  args: unknown,
): void {
  const problem = schemaProblem(tool.inputSchema) ?? argumentsProblem(args);
  if (problem)
    throw new TabwardError(
      'bad_input',
      `The call to "${tool.name}" cannot be checked: ${problem}. Nothing was sent to the browser.`,
      'Send less at once; a schema that large refuses every call.',
    );
}
