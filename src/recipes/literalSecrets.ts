// Webhands' sensitive literal: a type step's `text` marked `secret: true`. For one run each becomes a secret like
// a declared one, named after its step and bound to the recipe's own origin, so that the one redactor masks it in
// step logs, audit, errors and results, and the guard sees where it would be typed. Unlike a declared secret it
// cannot be bound anywhere else: typing it on another origin is refused, whatever the run's confirmation says.

import { TabwardError } from '../core/errors.ts';
import { originOf } from '../core/guard.ts';
import type { DeclaredSecret, Secrets } from '../core/secrets.ts';
import type { Recipe, RecipeStep } from './recipeSchema.ts';

/** The name a literal secret goes by in guard reasons and audit records: never its value. */
export function literalSecretName(index: number): string {
  return `steps[${index}].text`;
}

/** The secret a step types, by name: a declared one, its own literal, or none. */
export function secretNameOf(step: RecipeStep, index: number): string | undefined {
  if (step.action !== 'type') return undefined;
  if (typeof step.secret === 'string') return step.secret;
  return step.secret === true ? literalSecretName(index) : undefined;
}

export function isLiteralSecret(step: RecipeStep): boolean {
  return step.action === 'type' && step.secret === true;
}

/** The run's secrets: the declared ones plus the recipe's literals, each bound to the recipe's origin. */
export function runSecrets(recipe: Recipe, declared: Secrets): Secrets {
  const origin = originOf(recipe.url);
  const literals = new Map<string, DeclaredSecret>();
  for (const [index, step] of recipe.steps.entries())
    if (step.action === 'type' && step.secret === true && step.text !== undefined)
      literals.set(literalSecretName(index), {
        value: step.text,
        origins: [origin],
        source: 'the recipe (secret: true)',
      });
  return literals.size > 0 ? declared.withMore(literals) : declared;
}

/** Fails closed when a literal secret would be typed anywhere but the recipe's own origin. */
export function checkLiteralPlacement(index: number, origin: string, recipeOrigin: string): void {
  if (origin === recipeOrigin) return;
  throw new TabwardError(
    'not_allowed',
    `steps[${index}]: refused to type its secret text on ${origin}: a "secret": true text is typed only on the recipe's own origin (${recipeOrigin}).`,
    'To type a secret on another site, declare it in a --secrets file bound to that origin (NAME@https://origin=value) and name it: "secret": "NAME".',
  );
}
