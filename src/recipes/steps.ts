// One recipe step in a live run, as an action on the one call path (core/callPath.ts): the step says what it
// does (navigates, types, clicks, presses, selects, only reads), its live facts come from the page, and the guard
// decides like it does for every front end. A recipe has no human at hand: a step the guard would ask about runs
// only when the step is marked `write` and the run is confirmed, and fails the run otherwise.

import { STATUS_CODES } from 'node:http';
import type { RecipePage } from '../browser/recipePage.ts';
import { activatingKey } from '../core/activatingKeys.ts';
import type { Approver } from '../core/approvals.ts';
import type { ActionFacts, ActionLook, CallPath, GuardedAction } from '../core/callPath.ts';
import { destructiveReason, type Target } from '../core/destructive.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import { originOf, urlCarriesData } from '../core/guard.ts';
import type { Secrets } from '../core/secrets.ts';
import { type DownloadedFile, readDownload } from './downloadedFile.ts';
import { checkLiteralPlacement, isLiteralSecret, secretNameOf } from './literalSecrets.ts';
import type { RecipeStep } from './recipeSchema.ts';
import { describeStep } from './writeGate.ts';

export interface StepContext {
  readonly base: string;
  readonly confirm: boolean;
  readonly secrets: Secrets;
  readonly path: CallPath;
  readonly index: number;
  readonly recipeName: string;
  readonly frontEnd: string;
  readonly signal: AbortSignal;
  /** Where download steps put their files, by name (the run's result). */
  readonly files: Record<string, DownloadedFile>;
}

/** Runs a step through the call path; a step the guard would ask about fails unless it is a confirmed write. */
export async function runStep(page: RecipePage, step: RecipeStep, context: StepContext): Promise<void> {
  const approver = consent(step, context);
  try {
    await context.path.run(stepAction(page, step, context), {
      frontEnd: context.frontEnd,
      approver,
      signal: context.signal,
    });
  } catch (error) {
    const failure = asTabwardError(error);
    if (failure.code !== 'rejected') throw failure;
    throw new TabwardError(
      'not_allowed',
      `${context.index < 0 ? 'the start' : `steps[${context.index}]`}: refused to ${describeStep(step)}: ${approver.lastReason ?? failure.message}.`,
      context.index < 0 && step.action === 'goto'
        ? sensitiveStartFix(step.url, context)
        : 'If this is meant to change something (or to reach that page), mark the step "write": true and run with confirm.',
    );
  }
}

/**
 * The start is not a step and cannot be marked: the fix is a start on a page the rules leave alone, and a first
 * step, marked write, that goes to the sensitive one (run with confirm).
 */
function sensitiveStartFix(url: string, context: StepContext): string {
  const root = `${new URL(url).origin}/`;
  const start = context.path.rules.match(root) ? '<a page of another site the rules leave alone>' : root;
  const edit = `"url": "${start}", "steps": [{ "action": "goto", "url": "${url}", "write": true }, …the steps as they are]`;
  return `The start cannot be marked write. Start on a page the rules leave alone and go to this one in a first step marked write: { ${edit} }, then run with --confirm (serve: "confirm": true).`;
}

/**
 * The recipe's stand-in for a human: yes to a confirmed write step, no (saying why) to anything else. A
 * request the network backstop held (one the step was not predicted to send) is never the step's to approve:
 * the recipe's author confirmed what the step shows, not what the page does behind it.
 */
function consent(step: RecipeStep, context: StepContext): Approver & { lastReason?: string } {
  const confirmed = 'write' in step && step.write === true && context.confirm;
  const approver: Approver & { lastReason?: string } = {
    name: confirmed ? 'the confirmed write step' : 'the recipe (no confirmed write step)',
    ask: async (request) => {
      if (confirmed && request.kind !== 'request') return { choice: 'approve' };
      approver.lastReason = request.reason;
      return { choice: 'reject', reason: request.reason };
    },
  };
  return approver;
}

function stepAction(page: RecipePage, step: RecipeStep, context: StepContext): GuardedAction<void> {
  /** The origin of the document the step types a secret into (its field's frame), from the step's last look. */
  let secretOrigin: string | undefined;
  return {
    name: `recipe ${step.action}`,
    auditKind: step.action,
    args: stepArgs(step),
    subject: { recipe: context.recipeName, step: context.index },
    look: async () => {
      const look = await lookAt(page, step, context);
      secretOrigin = look.facts.secrets?.[0]?.origin;
      return look;
    },
    // Judged before the deadline, acting after it: no. A run that was cut off does nothing more.
    act: () => {
      if (context.signal.aborted)
        return Promise.reject(new TabwardError('timeout', 'The run was cut off; this step did not act.'));
      // Before the value is in the page: the page can keep what it is given and send it anywhere later, so the
      // run's requests to other sites are judged from here on as after a sensitive read (as the agent's are).
      if (secretOrigin !== undefined) context.path.secretTyped(secretOrigin);
      return perform(page, step, context);
    },
    // What the run has on screen once the step acted is what it has read: the path taints the rest of the run by
    // each sensitive page (or frame) of it.
    readsOf: () => page.frameUrls(),
    skipped: () => undefined,
  };
}

/** The step's arguments for the audit: never a secret's value (the call path redacts the rest). */
function stepArgs(step: RecipeStep): Record<string, unknown> {
  if (step.action !== 'type') return { ...step };
  if (typeof step.secret === 'string') return { ...step };
  // A literal secret does not even give away its length.
  if (step.secret === true) return { ...step, text: '(secret)' };
  return { ...step, text: `(${step.text?.length ?? 0} characters)` };
}

/** What a step would act on, as the guard sees it: also what `tabward run --check` reports. */
export async function lookAt(page: RecipePage, step: RecipeStep, context: StepContext): Promise<ActionLook> {
  const tool = `recipe ${step.action}`;
  switch (step.action) {
    case 'download':
      if (step.selector) return elementLook(page, step, step.selector, false, context);
      return lookAt(
        page,
        { action: 'goto', url: step.url ?? '', ...(step.write ? { write: true } : {}) },
        context,
      );
    case 'goto': {
      const destination = resolveUrl(step.url, page.url(), context.base);
      // A goto to /orders/17/refund reads as a click on a link there does: unmarked, it is refused.
      const looksDestructive = destructiveReason('', [destination]);
      const facts: ActionFacts = {
        tool,
        kind: 'navigate',
        frames: [],
        destination,
        carriesData: urlCarriesData(destination),
        ...(looksDestructive ? { looksDestructive } : {}),
      };
      return { facts, binding: `goto ${destination}`, url: destination };
    }
    case 'click':
    case 'select':
    case 'type':
      return elementLook(page, step, step.selector, step.action !== 'click', context);
    case 'press':
      return step.selector ? elementLook(page, step, step.selector, true, context) : focusLook(page, step);
    default: {
      const facts: ActionFacts = { tool, kind: 'read', frames: page.topFrames(), carriesData: false };
      return { facts, binding: describeStep(step), url: page.url() };
    }
  }
}

async function elementLook(
  page: RecipePage,
  step: RecipeStep,
  selector: string,
  asField: boolean,
  context: StepContext,
): Promise<ActionLook> {
  const element = await page.element(selector, asField);
  const origin = element.frames[0] ? originOf(element.frames[0].url, element.frames[0].creatorUrl) : '';
  const secret = secretNameOf(step, context.index);
  if (isLiteralSecret(step)) checkLiteralPlacement(context.index, origin, originOf(context.base));
  const facts: ActionFacts = {
    tool: `recipe ${step.action}`,
    kind: 'write',
    frames: element.frames,
    // A key that activates nothing (a letter) opens no pass toward the element's form or link.
    effects: step.action === 'press' && !activatingKey(step.key) ? [] : element.effects,
    carriesData: step.action !== 'click',
    ...destructive(step, element),
    // A recipe's secrets belong to the recipe's own site unless the secrets file binds them elsewhere.
    ...(secret
      ? {
          secrets: [
            { name: secret, origin, ...context.secrets.placement(secret, origin, [originOf(context.base)]) },
          ],
        }
      : {}),
  };
  const url = element.frames[0]?.url ?? page.url();
  return {
    facts,
    binding: `${describeStep(step)} ${element.fingerprint}`,
    url,
    element: { role: element.tag.toLowerCase(), name: element.name },
  };
}

async function focusLook(page: RecipePage, step: RecipeStep): Promise<ActionLook> {
  const focus = await page.focused();
  const facts: ActionFacts = {
    tool: 'recipe press',
    kind: 'write',
    frames: focus.frames,
    // A key that activates nothing (a letter) opens no pass toward the focused element's form or link.
    effects: step.action === 'press' && !activatingKey(step.key) ? [] : focus.effects,
    carriesData: true,
    ...destructive(step, focus),
  };
  return {
    facts,
    binding: `${describeStep(step)} ${JSON.stringify(focus)}`,
    url: focus.frames[0]?.url ?? page.url(),
    element: { role: focus.tag.toLowerCase(), name: focus.name },
  };
}

/** A label or a target that reads as delete, refund, pay...: a fact the guard asks about under the recipes' policy. */
function destructive(
  step: RecipeStep,
  element: { readonly name: string; readonly tag: string; readonly effects: readonly Target[] },
): { looksDestructive?: string } {
  // Text typed into a field named "Refund amount" refunds nothing; what a click or key press on a button reads does,
  // and so does where a select or a key press in a field submits its form.
  if (step.action === 'type') return {};
  const field = ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tag) && step.action !== 'click';
  const reason = destructiveReason(field ? '' : element.name, element.effects);
  return reason ? { looksDestructive: reason } : {};
}

async function perform(page: RecipePage, step: RecipeStep, context: StepContext): Promise<void> {
  switch (step.action) {
    case 'goto': {
      const url = resolveUrl(step.url, page.url(), context.base);
      const status = await page.goto(url);
      if (status !== undefined && status >= 400 && step.allowHttpError !== true)
        throw httpError(url, status, context.index);
      return;
    }
    case 'type': {
      const secret = secretNameOf(step, context.index);
      if (secret !== undefined) {
        await page.fill(step.selector, context.secrets.get(secret));
        return;
      }
      // A literal typed into a password field (as it is before, or once typed: a page can make it one as it takes
      // the focus) is masked from every record, as the agent's is (tools/common.ts literalIntoSecretField): a page
      // that wrote it into a button's label put it in the audit and the run's output.
      const text = step.text ?? '';
      const secretField = async () =>
        (await page.element(step.selector, false).catch(() => undefined))?.secretKind !== '';
      if (await secretField()) context.secrets.redactTyped(text);
      await page.fill(step.selector, text);
      if (await secretField()) context.secrets.redactTyped(text);
      return;
    }
    case 'click':
      await page.click(step.selector);
      return;
    case 'press':
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
    case 'download': {
      const url = step.url ? resolveUrl(step.url, page.url(), context.base) : undefined;
      const got = await page.download(
        { ...(step.selector ? { selector: step.selector } : {}), ...(url ? { url } : {}) },
        step.timeoutMs ?? 30_000,
      );
      const name = step.as ?? `file${Object.keys(context.files).length + 1}`;
      context.files[name] = await readDownload(step, got.suggested, got.path, `steps[${context.index}]`);
      return;
    }
  }
}

/** A page that answered 404 or 500 is not the page the recipe expected: say so, and how to accept it. */
function httpError(url: string, status: number, index: number): TabwardError {
  const where = index < 0 ? 'the start' : `steps[${index}]`;
  const reason = STATUS_CODES[status];
  return new TabwardError(
    'http_error',
    `${where}: goto ${url}: the site answered HTTP ${status}${reason ? ` ${reason}` : ''}.`,
    `Check the URL (and any login before it); if that status is expected, add "allowHttpError": true to ${index < 0 ? 'the recipe' : 'the step'}.`,
  );
}

/** An http(s) URL, absolute or relative to where the run is; anything else is refused before the browser sees it. */
export function resolveUrl(url: string, current: string, base: string): string {
  let resolved: URL;
  try {
    resolved = new URL(url, current.startsWith('http') ? current : base);
  } catch {
    throw new TabwardError(
      'bad_input',
      `"${url}" is not a URL.`,
      'Use an http(s) URL, absolute or relative to the recipe url.',
    );
  }
  if (resolved.protocol !== 'http:' && resolved.protocol !== 'https:')
    throw new TabwardError(
      'bad_input',
      `Refusing to open ${resolved.protocol} URLs in a recipe (${url}).`,
      'Recipes open http and https pages only.',
    );
  return resolved.href;
}
