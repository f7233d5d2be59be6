// One recipe step in a live run. Clicks (and Enter in a form) are judged first: one that looks destructive,
// or lands on a sensitive page, runs only when the step is marked `write` and the run is confirmed.

import type { RecipePage } from '../browser/recipePage.ts';
import { judgeClick } from '../core/destructive.ts';
import { TabwardError } from '../core/errors.ts';
import type { Secrets } from '../core/secrets.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import type { RecipeStep } from './recipeSchema.ts';

export interface StepContext {
  readonly base: string;
  readonly confirm: boolean;
  readonly secrets: Secrets;
  readonly rules: RuleSet;
  readonly index: number;
}

export async function runStep(page: RecipePage, step: RecipeStep, context: StepContext): Promise<void> {
  switch (step.action) {
    case 'goto':
      await page.goto(new URL(step.url, page.url().startsWith('http') ? page.url() : context.base).href);
      return;
    case 'type':
      await page.fill(
        step.selector,
        step.secret !== undefined ? context.secrets.get(step.secret) : (step.text ?? ''),
      );
      return;
    case 'click':
      await checkClick(page, step.selector, step.write === true, context);
      await page.click(step.selector);
      return;
    case 'press':
      if (step.key.toLowerCase() === 'enter' && step.selector)
        await checkClick(page, step.selector, step.write === true, context, true);
      await page.press(step.key, step.selector);
      return;
    case 'waitFor':
      await page.waitFor(step.selector, step.state ?? 'visible', step.timeoutMs ?? 15_000);
      return;
    case 'select':
      await page.select(step.selector, step.value);
      return;
    case 'scroll':
      await page.scroll(step.selector, step.to ?? 'bottom');
      return;
    case 'waitForUrl':
      await page.waitForUrl(step.url, step.timeoutMs ?? 15_000);
      return;
    case 'waitForNetworkIdle':
      await page.waitForNetworkIdle(step.timeoutMs ?? 15_000);
      return;
  }
}

async function checkClick(
  page: RecipePage,
  selector: string,
  markedWrite: boolean,
  context: StepContext,
  keyPress = false,
): Promise<void> {
  if (markedWrite && context.confirm) return;
  const target = await page.clickTarget(selector);
  const verdict = judgeClick(
    {
      name: keyPress ? '' : target.name,
      ...(target.formAction ? { formAction: target.formAction } : {}),
      pageUrl: page.url(),
    },
    context.rules,
  );
  if (!verdict.destructive) return;
  throw new TabwardError(
    'not_allowed',
    `steps[${context.index}]: refused to ${keyPress ? 'submit' : 'click'} ${JSON.stringify(target.name || selector)} (${selector}): ${verdict.why}.`,
    'If this is meant to change something, mark the step "write": true and run with confirm.',
  );
}
