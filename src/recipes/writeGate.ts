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
    'Run it with --confirm (tabward run) or {"confirm": true} (POST /run) if you mean it to change things.',
  );
}

/** How a step reads in plans and logs; never contains a secret's value. */
export function describeStep(step: RecipeStep): string {
  switch (step.action) {
    case 'goto':
      return `goto ${step.url}${step.write ? ' (write)' : ''}`;
    case 'type':
      return step.secret !== undefined
        ? `type into ${step.selector} (secret ${step.secret})${step.write ? ' (write)' : ''}`
        : `type into ${step.selector}${step.write ? ' (write)' : ''}`;
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
  }
}
