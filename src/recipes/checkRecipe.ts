// `tabward run --check`: walks a recipe in a browser and, before each click, press and select, reports what it
// would act on (role, name, form action or link, frame) and whether it looks like a write (a destructive label or
// target, a sensitive page), against whether the step is marked `write`. The check performs only what a run
// without --confirm would perform anyway (gotos, typing, waits, and clicks the guard lets through that are
// neither marked nor look like writes), so that it can get past a login; it never performs a step marked
// `write` or one that looks like one, and stops walking there: later steps are reported as not reached.

import type { RecipePage } from '../browser/recipePage.ts';
import type { ActionLook, CallPath } from '../core/callPath.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import { runSecrets } from './literalSecrets.ts';
import type { Recipe, RecipeStep } from './recipeSchema.ts';
import { type RunOptions, runPath } from './runRecipe.ts';
import { lookAt, resolveUrl, runStep, type StepContext } from './steps.ts';
import { describeStep } from './writeGate.ts';

export interface StepCheck {
  readonly step: number;
  readonly detail: string;
  /** The step says `write: true`. */
  readonly marked: boolean;
  /** What a click, press or select would act on, as the page shows it now. */
  readonly target?: {
    readonly role: string;
    readonly name: string;
    readonly formAction?: string;
    readonly link?: string;
    readonly frame?: string;
  };
  /** Why it looks like a write (destructive label or target, a sensitive page), when it does. */
  readonly looksLikeWrite?: string;
  readonly outcome: 'performed' | 'checked, not performed' | 'not reached' | 'failed';
  readonly problem?: string;
}

export interface CheckResult {
  readonly ok: boolean;
  readonly mode: 'check';
  readonly steps: StepCheck[];
  /** Steps that look like writes and are not marked `write`: the reason for exit code 1. */
  readonly unmarkedWrites: number[];
  readonly error: { readonly code: string; readonly message: string } | null;
}

export type CheckOptions = Pick<
  RunOptions,
  'browser' | 'secrets' | 'rules' | 'audit' | 'timeoutMs' | 'deadlineMs' | 'frontEnd'
>;

const inspected = new Set(['click', 'press', 'select']);

export async function checkRecipe(recipe: Recipe, given: CheckOptions): Promise<CheckResult> {
  const options = { ...given, secrets: runSecrets(recipe, given.secrets) };
  const steps: StepCheck[] = [];
  let page: RecipePage | undefined;
  let timer: NodeJS.Timeout | undefined;
  const stopped = new AbortController();
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stopped.abort();
      reject(new TabwardError('timeout', `The check did not finish within ${options.deadlineMs} ms.`));
    }, options.deadlineMs);
  });
  let path: CallPath | undefined;
  try {
    const session = options.browser();
    const judged = runPath(session, options);
    path = judged;
    const opening = session.openRunPage(options.timeoutMs);
    // A tab that opens after the deadline won the race is nobody's: closed as soon as it is there.
    void opening.then(
      (opened) => (stopped.signal.aborted && page !== opened ? opened.close() : undefined),
      () => undefined,
    );
    page = await Promise.race([opening, deadline]);
    const base = resolveUrl(recipe.url, '', recipe.url);
    const files = {};
    const context = (index: number): StepContext => ({
      files,
      base,
      confirm: false,
      secrets: options.secrets,
      path: judged,
      index,
      recipeName: recipe.name ?? base,
      frontEnd: options.frontEnd,
      signal: stopped.signal,
    });
    const open = page;
    await Promise.race([runStep(open, { action: 'goto', url: base }, context(-1)), deadline]);
    const walk = async () => {
      let walking = true;
      for (const [index, step] of recipe.steps.entries()) {
        const checked = walking
          ? await checkStep(open, step, context(index), options)
          : notReached(index, step);
        steps.push(checked);
        if (checked.outcome !== 'performed') walking = false;
      }
    };
    await Promise.race([walk(), deadline]);
    const unmarkedWrites = steps.filter((s) => s.looksLikeWrite && !s.marked).map((s) => s.step);
    return { ok: unmarkedWrites.length === 0, mode: 'check', steps, unmarkedWrites, error: null };
  } catch (error) {
    const failure = asTabwardError(error);
    const unmarkedWrites = steps.filter((s) => s.looksLikeWrite && !s.marked).map((s) => s.step);
    return {
      ok: false,
      mode: 'check',
      steps,
      unmarkedWrites,
      error: { code: failure.code, message: options.secrets.redactor.text(failure.describe()) },
    };
  } finally {
    clearTimeout(timer);
    stopped.abort();
    // The tab goes first: what it sends as it closes is judged with the check's taint (runRecipe.ts liveRun).
    await page?.close();
    path?.close();
  }
}

function isMarked(step: RecipeStep): boolean {
  return 'write' in step && step.write === true;
}

function notReached(index: number, step: RecipeStep): StepCheck {
  return { step: index, detail: describeStep(step), marked: isMarked(step), outcome: 'not reached' };
}

/** One step: inspected first when it clicks, presses or selects; performed only when nothing says it writes. */
async function checkStep(
  page: RecipePage,
  step: RecipeStep,
  context: StepContext,
  options: CheckOptions,
): Promise<StepCheck> {
  const base = { step: context.index, detail: describeStep(step), marked: isMarked(step) };
  let look: ActionLook | undefined;
  try {
    look = inspected.has(step.action) ? await lookAt(page, step, context) : undefined;
  } catch (error) {
    return { ...base, outcome: 'failed', problem: asTabwardError(error).describe() };
  }
  const seen = look ? describeTarget(look) : {};
  const looksLikeWrite = look ? writeReason(look, options) : undefined;
  const judged = { ...base, ...seen, ...(looksLikeWrite ? { looksLikeWrite } : {}) };
  if (base.marked || looksLikeWrite) {
    const problem =
      looksLikeWrite && !base.marked ? 'looks like a write but is not marked "write": true' : undefined;
    return { ...judged, outcome: 'checked, not performed', ...(problem ? { problem } : {}) };
  }
  try {
    await runStep(page, step, context);
    return { ...judged, outcome: 'performed' };
  } catch (error) {
    return { ...judged, outcome: 'failed', problem: asTabwardError(error).describe() };
  }
}

function describeTarget(look: ActionLook): Pick<StepCheck, 'target'> {
  const effects = look.facts.effects ?? [];
  const form = effects.find((effect) => effect.submitsForm)?.url;
  const link = effects.find((effect) => !effect.submitsForm)?.url;
  const frame = look.facts.frames[0]?.url;
  return {
    target: {
      role: roleOf(look.element?.role ?? ''),
      name: look.element?.name ?? '',
      ...(form ? { formAction: form } : {}),
      ...(link ? { link } : {}),
      ...(frame ? { frame } : {}),
    },
  };
}

/** The element's tag in the words of ARIA roles, which is how people and the snapshot name them. */
function roleOf(tag: string): string {
  const roles: Record<string, string> = {
    a: 'link',
    button: 'button',
    select: 'combobox',
    textarea: 'textbox',
    input: 'textbox',
  };
  return roles[tag] ?? (tag || 'focused element');
}

/** A destructive label or target (the guard's own fact), or a sensitive page it acts on or sends to. */
function writeReason(look: ActionLook, options: CheckOptions): string | undefined {
  if (look.facts.looksDestructive) return look.facts.looksDestructive;
  const urls = [
    ...look.facts.frames.map((frame) => frame.url),
    ...(look.facts.effects ?? []).map((e) => e.url),
  ];
  for (const url of urls) {
    const hit = options.rules.match(url);
    if (hit) return `it acts on the sensitive page ${url} (rule ${hit.rule})`;
  }
  return undefined;
}
