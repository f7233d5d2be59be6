// Reading a recipe: JSON text or a parsed value, validated against the schema, with every problem named by
// its place (`steps[2].selector: ...`) so the author can find it.

import type { z } from 'zod';
import { TabwardError } from '../core/errors.ts';
import { type Recipe, recipeSchema, stepActions } from './recipeSchema.ts';

export function parseRecipeText(text: string, source: string): Recipe {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new TabwardError(
      'bad_input',
      `${source}:${lineAndColumn(text, why)} is not valid JSON: ${why.replace(/ in JSON at position \d+.*$/, '')}.`,
      'Check for a missing comma or quote, or a trailing comma, just before that place.',
    );
  }
  return parseRecipe(raw, source);
}

/** V8 names the character offset ("at position 42"), or none at the end of input: say line and column. */
function lineAndColumn(text: string, message: string): string {
  const match = /at position (\d+)/.exec(message);
  const offset = match ? Number(match[1]) : text.length;
  const before = text.slice(0, offset).split('\n');
  return `${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
}

export function parseRecipe(raw: unknown, source = 'the recipe'): Recipe {
  const parsed = recipeSchema.safeParse(raw);
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
