// The write gate, decided from the recipe's shape before any browser starts: a recipe with a step marked
// `write` runs only when the request carries confirm: true.

import { TabwardError } from '../core/errors.ts';
import type { Recipe, RecipeStep } from './recipeSchema.ts';

export interface WriteStep {
  readonly index: number;
  readonly step: RecipeStep;
}

export function writeSteps(recipe: Recipe): WriteStep[] {
  return recipe.steps.flatMap((step, index) =>
    'write' in step && step.write === true ? [{ index, step }] : [],
  );
}

export function checkWriteGate(recipe: Recipe, confirm: boolean): void {
  const writes = writeSteps(recipe);
  if (writes.length === 0 || confirm) return;
  const named = writes.map(({ index, step }) => `steps[${index}] (${describeStep(step)})`).join(', ');
  throw new TabwardError(
    'not_allowed',
    `Refused before starting a browser: ${named} ${writes.length === 1 ? 'is a write step' : 'are write steps'}.`,
    // Webhands' words, which its clients and users know: "resend with confirm:true".
    'If you mean it to change things, resend with confirm:true (POST /run) or run it with --confirm (tabward run).',
  );
}

/** How a step reads in plans and logs; never contains a secret's value. */
export function describeStep(step: RecipeStep): string {
  switch (step.action) {
    case 'goto':
      return `goto ${step.url}${step.write ? ' (write)' : ''}`;
    case 'type':
      // Named secrets by name; a literal one only as "(secret)", Webhands' own wording.
      return `type into ${step.selector}${typeof step.secret === 'string' ? ` (secret ${step.secret})` : step.secret === true ? ' (secret)' : ''}${step.write ? ' (write)' : ''}`;
    case 'click':
      return `click ${step.selector}${step.write ? ' (write)' : ''}`;
    case 'waitFor':
      return `wait for ${step.selector}${step.state ? ` to be ${step.state}` : ''}`;
    case 'select':
      return `select ${JSON.stringify(step.value)} in ${step.selector}${step.write ? ' (write)' : ''}`;
    case 'press':
      return `press ${step.key}${step.selector ? ` in ${step.selector}` : ''}${step.write ? ' (write)' : ''}`;
    case 'scroll':
      return `scroll ${step.selector ?? step.to ?? 'bottom'}`;
    case 'waitForUrl':
      return `wait for URL ${step.url}`;
    case 'waitForNetworkIdle':
      return 'wait for network idle';
    case 'download':
      return `download ${step.selector ? `by clicking ${step.selector}` : step.url}${step.write ? ' (write)' : ''}`;
  }
}
