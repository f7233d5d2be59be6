// Reading a recipe: JSON text or a parsed value, validated against the schema, with every problem named by
// its place (`steps[2].selector: ...`) so the author can find it.

import type { z } from 'zod';
import { TabwardError } from '../core/errors.ts';
import { type Recipe, recipeSchemas, stepActions } from './recipeSchema.ts';

export function parseRecipeText(text: string, source: string): Recipe {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    // V8 quotes the text around the error (`..."d":"hunter2x"... is not valid JSON`), which may be a piece of a
    // "secret": true text: the line and column say where instead.
    const said = why
      .replace(/ in JSON at position \d+.*$/, '')
      .replace(/, (\.\.\.)?".*" is not valid JSON$/s, '');
    throw new TabwardError(
      'bad_input',
      `${source}:${lineAndColumn(text, why)} is not valid JSON: ${said}.`,
      'Check for a missing comma or quote, or a trailing comma, just before that place.',
    );
  }
  return parseRecipe(raw, source);
}

/**
 * V8 names the character offset ("at position 42"), or quotes the text around an unexpected token, or says
 * nothing at the end of input: say line and column.
 */
function lineAndColumn(text: string, message: string): string {
  const before = text.slice(0, errorOffset(text, message)).split('\n');
  return `${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
}

function errorOffset(text: string, message: string): number {
  const position = /at position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  // `Unexpected token 'x', ..."abc, x]}" is not valid JSON`: about ten characters of context before the token.
  const quoted = /^Unexpected token '(.)', (\.\.\.)?"([\s\S]*)"(?:\.\.\.)? is not valid JSON$/.exec(message);
  const [, token = '', cut, snippet = ''] = quoted ?? [];
  const start = quoted ? text.indexOf(snippet) : -1;
  const at = start < 0 ? -1 : snippet.indexOf(token, cut ? 9 : 0);
  return at < 0 ? text.length : start + at;
}

export function parseRecipe(raw: unknown, source = 'the recipe'): Recipe {
  const parsed = recipeSchemas().recipeSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 10).map((issue) => describeIssue(issue, raw));
  throw new TabwardError(
    'bad_input',
    `${source} is not a valid recipe: ${problems.join('; ')}.`,
    'The format is in schema/recipe.v1.json.',
  );
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  const inner = closestBranch(issue);
  if (inner) return describeIssue(inner, raw);
  const place = placeOf(issue.path);
  const value = valueAt(raw, issue.path);
  if (isStepActionPath(issue.path) && !stepActions.includes(String(value))) {
    return `${place}: unknown action ${JSON.stringify(value)} (known: ${stepActions.join(', ')})`;
  }
  if (issue.code === 'unrecognized_keys')
    return `${place || 'recipe'}: unknown field(s) ${issue.keys.join(', ')}`;
  return `${place || 'recipe'}: ${issue.message}`;
}

/**
 * A value that matches no form of a union ("Invalid input") is described by the form it came closest to: the one
 * whose problem lies deepest inside the value (a field list with a name given twice, not "not a prompt").
 */
function closestBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue | undefined {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return undefined;
  let best: z.core.$ZodIssue | undefined;
  for (const branch of issue.errors)
    for (const candidate of branch) if (!best || depth(candidate) > depth(best)) best = candidate;
  return best ? { ...best, path: [...issue.path, ...best.path] } : undefined;
}

function depth(issue: z.core.$ZodIssue): number {
  const nested = closestBranch(issue);
  return nested ? depth(nested) : issue.path.length;
}

function isStepActionPath(path: readonly PropertyKey[]): boolean {
  return path.length === 3 && path[0] === 'steps' && typeof path[1] === 'number' && path[2] === 'action';
}

function placeOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (text, key) =>
      typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key),
    '',
  );
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let current = raw;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
