// Running a recipe: the write gate first (no browser yet), then live steps in a tab of their own or a dry plan,
// extraction, evidence, and one audit record. Every value that leaves here is redacted.

import type { RecipePage } from '../browser/recipePage.ts';
import type { BrowserSession } from '../browser/session.ts';
import type { AuditSink } from '../core/audit.ts';
import { CallPath } from '../core/callPath.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import type { Secrets } from '../core/secrets.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import type { ModelConfig } from '../llm/modelClient.ts';
import { describeExtract, extractData } from './extract.ts';
import type { Recipe } from './recipeSchema.ts';
import { resolveUrl, runStep } from './steps.ts';
import { checkWriteGate, describeStep, writeSteps } from './writeGate.ts';

export interface RunOptions {
  readonly confirm: boolean;
  readonly dryRun: boolean;
  /** The browser, started only when a live run needs it. */
  readonly browser: () => BrowserSession;
  readonly secrets: Secrets;
  readonly rules: RuleSet;
  readonly audit: AuditSink;
  readonly model: ModelConfig | undefined;
  readonly timeoutMs: number;
  /** Deadline of the whole run. */
  readonly deadlineMs: number;
  readonly screenshot: boolean;
  readonly frontEnd: string;
  readonly onStep?: (entry: StepLog) => void;
  /** The browser mode the run used, for the audit (the session's, once started). */
  readonly mode?: () => string;
}

export interface StepLog {
  readonly step: number | 'extract' | 'start';
  readonly detail: string;
  readonly ok: boolean;
  readonly ms: number;
  readonly error?: string;
}

export interface RecipeResult {
  readonly ok: boolean;
  readonly mode: 'live' | 'dry';
  readonly data: unknown;
  /** Base64 PNG: the final page, or the page where the run failed. */
  readonly screenshot: string | null;
  readonly steps: StepLog[];
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly step?: number | 'extract' | 'start';
  } | null;
}

export async function runRecipe(recipe: Recipe, options: RunOptions): Promise<RecipeResult> {
  const started = Date.now();
  let result: RecipeResult;
  try {
    if (options.dryRun) {
      // A dry run proves what a live one would need: every secret the steps name must be declared.
      for (const step of recipe.steps) if ('secret' in step && step.secret) options.secrets.get(step.secret);
      result = dryRun(recipe, options.confirm);
    } else {
      checkWriteGate(recipe, options.confirm);
      // A start or goto that is not http(s) is refused before any browser starts.
      for (const url of [
        recipe.url,
        ...recipe.steps.flatMap((step) => (step.action === 'goto' ? [step.url] : [])),
      ])
        resolveUrl(url, recipe.url, recipe.url);
      result = await liveRun(recipe, options);
    }
  } catch (error) {
    const failure = asTabwardError(error);
    result = {
      ok: false,
      mode: options.dryRun ? 'dry' : 'live',
      data: null,
      screenshot: null,
      steps: [],
      error: { code: failure.code, message: failure.describe() },
    };
  }
  const redacted = options.secrets.redactor.value(result);
  options.audit.record({
    time: new Date().toISOString(),
    frontEnd: options.frontEnd,
    tool: 'run_recipe',
    kind: writeSteps(recipe).length > 0 ? 'write' : 'read',
    args: options.secrets.redactor.value({
      name: recipe.name ?? null,
      url: recipe.url,
      steps: recipe.steps.length,
      confirm: options.confirm,
      dryRun: options.dryRun,
    }),
    mode: options.dryRun ? 'dry' : (options.mode?.() ?? 'isolated'),
    url: options.secrets.redactor.text(recipe.url),
    decision: redacted.error?.code === 'not_allowed' ? 'block' : 'allow',
    outcome: redacted.ok ? 'ok' : redacted.error?.code === 'not_allowed' ? 'blocked' : 'error',
    ...(redacted.error ? { error: redacted.error.message } : {}),
    durationMs: Date.now() - started,
  });
  return redacted;
}

/** The plan, with no browser: what would run, which steps write, and what is extracted. */
function dryRun(recipe: Recipe, confirm: boolean): RecipeResult {
  const plan = [`goto ${recipe.url}`, ...recipe.steps.map(describeStep)];
  const writes = writeSteps(recipe).map(({ index }) => index);
  return {
    ok: true,
    mode: 'dry',
    data: {
      plan,
      writeSteps: writes,
      needsConfirm: writes.length > 0 && !confirm,
      extract: describeExtract(recipe.extract),
    },
    screenshot: null,
    steps: [],
    error: null,
  };
}

async function liveRun(recipe: Recipe, options: RunOptions): Promise<RecipeResult> {
  const steps: StepLog[] = [];
  const log = (entry: StepLog) => {
    const safe = { ...entry, detail: options.secrets.redactor.text(entry.detail) };
    steps.push(safe);
    options.onStep?.(safe);
  };
  let page: RecipePage | undefined;
  let current: StepLog['step'] = 'start';
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TabwardError('timeout', `The run did not finish within ${options.deadlineMs} ms.`)),
      options.deadlineMs,
    );
  });
  const stopped = new AbortController();
  const work = async () => {
    const session = options.browser();
    const path = runPath(session, options);
    page = await session.openRunPage(options.timeoutMs);
    const base = resolveUrl(recipe.url, '', recipe.url);
    const context = (index: number) => ({
      base,
      confirm: options.confirm,
      secrets: options.secrets,
      path,
      index,
      recipeName: recipe.name ?? base,
      frontEnd: options.frontEnd,
      signal: stopped.signal,
    });
    // The start is a goto like any other: judged, and refused for anything but http(s).
    await timed(log, 'start', `goto ${base}`, () =>
      runStep(requirePage(page), { action: 'goto', url: base }, context(-1)),
    );
    for (const [index, step] of recipe.steps.entries()) {
      current = index;
      await timed(log, index, describeStep(step), () => runStep(requirePage(page), step, context(index)));
    }
    current = 'extract';
    const data = recipe.extract
      ? await timed(log, 'extract', describeExtract(recipe.extract), () =>
          extractData(requirePage(page), recipe.extract, options.model),
        )
      : null;
    const screenshot = options.screenshot ? (await requirePage(page).screenshot()).toString('base64') : null;
    return { ok: true, mode: 'live' as const, data, screenshot, steps, error: null };
  };
  try {
    return await Promise.race([work(), deadline]);
  } catch (error) {
    const failure = asTabwardError(error);
    const screenshot = page
      ? await page.screenshot().then(
          (png) => png.toString('base64'),
          () => null,
        )
      : null;
    return {
      ok: false,
      mode: 'live',
      data: null,
      screenshot,
      steps,
      error: { code: failure.code, message: failure.describe(), step: current },
    };
  } finally {
    clearTimeout(timer);
    stopped.abort();
    await page?.close();
  }
}

/** Each run has a call path of its own (its own taint) under the recipes' policy: destructive-looking writes ask. */
function runPath(session: BrowserSession, options: RunOptions): CallPath {
  return new CallPath({
    rules: options.rules,
    audit: options.audit,
    policy: 'destructive-asks',
    mode: () => session.mode,
    redactor: () => options.secrets.redactor,
    ...(session.config.network ? { backstop: session.config.network } : {}),
    passMaxMs: options.timeoutMs * 4,
  });
}

function requirePage(page: RecipePage | undefined): RecipePage {
  if (!page) throw new TabwardError('internal', 'The run has no tab.');
  return page;
}

async function timed<T>(
  log: (entry: StepLog) => void,
  step: StepLog['step'],
  detail: string,
  work: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  try {
    const value = await work();
    log({ step, detail, ok: true, ms: Date.now() - started });
    return value;
  } catch (error) {
    log({ step, detail, ok: false, ms: Date.now() - started, error: asTabwardError(error).describe() });
    throw error;
  }
}
