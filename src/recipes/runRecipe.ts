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
import type { DownloadedFile } from './downloadedFile.ts';
import { describeExtract, extractData } from './extract.ts';
import { runSecrets } from './literalSecrets.ts';
import type { Recipe, RecipeStep } from './recipeSchema.ts';
import { resolveUrl, runStep } from './steps.ts';
import { checkWriteGate, describeStep, writeSteps } from './writeGate.ts';

export interface RunOptions {
  readonly confirm: boolean;
  readonly dryRun: boolean;
  /** The browser, started only when a live run needs it. */
  readonly browser: () => RunBrowser;
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
  /** Aborted when the run is to stop now (Ctrl-C, a server stopping); its reason says why, in words. */
  readonly cancel?: AbortSignal;
}

/** What a run needs of its browser: a tab of its own, and the mode and backstop its call path reads. */
export type RunBrowser = Pick<BrowserSession, 'mode' | 'config' | 'openRunPage'>;

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
  /** What the run did but may not have meant: an extraction selector that matched nothing, for one. */
  readonly warnings: string[];
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly step?: number | 'extract' | 'start';
  } | null;
  /** On a browser grid: the endpoint the run's browser started on (its credentials shown as ***). */
  readonly endpoint?: string;
  /** What the run's download steps brought, by their `as` names (recipes/downloadedFile.ts). */
  readonly files?: Readonly<Record<string, DownloadedFile>>;
}

export async function runRecipe(recipe: Recipe, given: RunOptions): Promise<RecipeResult> {
  const started = Date.now();
  // The recipe's own `secret: true` texts join the declared secrets for this run: masked alike everywhere below.
  const options: RunOptions = { ...given, secrets: runSecrets(recipe, given.secrets) };
  let result: RecipeResult;
  try {
    // A dry run validates all a live one would before its browser starts: it differs only in not starting one.
    checkBeforeBrowser(recipe, options);
    if (options.dryRun) result = dryRun(recipe, options.confirm);
    else {
      checkWriteGate(recipe, options.confirm);
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
      warnings: [],
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

/** What is refused before any browser starts: a URL that is not http(s), a secret a step names that is not declared. */
function checkBeforeBrowser(recipe: Recipe, options: RunOptions): void {
  for (const url of [
    recipe.url,
    ...recipe.steps.flatMap((step) => (step.action === 'goto' ? [step.url] : [])),
  ])
    resolveUrl(url, recipe.url, recipe.url);
  for (const step of recipe.steps)
    if (step.action === 'type' && typeof step.secret === 'string') options.secrets.get(step.secret);
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
    warnings: [],
    error: null,
  };
}

async function liveRun(recipe: Recipe, options: RunOptions): Promise<RecipeResult> {
  const steps: StepLog[] = [];
  const { redactor } = options.secrets;
  let sealed = false;
  const log = (entry: StepLog) => {
    // A step that ends after the run was cut off (its tab closed under it) is not news: the log is sealed.
    if (sealed) return;
    // Detail and error alike pass the run's redactor before a terminal or a result sees them.
    const safe = {
      ...entry,
      detail: redactor.text(entry.detail),
      ...(entry.error !== undefined ? { error: redactor.text(entry.error) } : {}),
    };
    steps.push(safe);
    options.onStep?.(safe);
  };
  const run: LiveState = {
    page: undefined,
    current: 'start',
    currentDetail: 'starting the browser',
    detail: 'start the browser',
    since: Date.now(),
    files: {},
  };
  const stopped = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  // The deadline cuts the step in flight: the race ends at once, the signal keeps any later step from acting,
  // and the tab is closed (ending whatever it waited for) instead of being left to finish.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stopped.abort();
      reject(
        new TabwardError(
          'timeout',
          `The run did not finish within ${options.deadlineMs} ms: cut during ${run.currentDetail}.`,
          'Raise --deadline if the site is slow, or look at the screenshot for what the page was doing.',
        ),
      );
    }, options.deadlineMs);
  });
  // Cancelled: like the deadline, the step in flight is cut and no later step acts; the result says who stopped it.
  let cancel: () => void = () => undefined;
  const cancelled = new Promise<never>((_, reject) => {
    cancel = () => {
      stopped.abort();
      reject(
        new TabwardError(
          'cancelled',
          `The run was cancelled (${String(options.cancel?.reason ?? 'stopped')}) during ${run.currentDetail}; no later step ran.`,
        ),
      );
    };
    if (options.cancel?.aborted) cancel();
    else options.cancel?.addEventListener('abort', cancel, { once: true });
  });
  // A cancel after the run ended rejects nobody's wait.
  cancelled.catch(() => undefined);
  // The run's call path counts in the backstop's taint until its tab is gone: what the page sends while the
  // screenshot is taken, or as it closes, is judged with everything the run read and typed.
  let path: CallPath | undefined;
  try {
    const session = options.browser();
    path = runPath(session, options);
    const { data, warnings } = await Promise.race([
      runSteps(recipe, options, run, log, stopped.signal, session, path),
      deadline,
      cancelled,
    ]);
    const screenshot = options.screenshot
      ? (await requirePage(run.page).screenshot()).toString('base64')
      : null;
    const files = Object.keys(run.files).length > 0 ? { files: run.files } : {};
    return { ok: true, mode: 'live', data, screenshot, steps, warnings, error: null, ...files };
  } catch (error) {
    const failure = asTabwardError(error);
    if (stopped.signal.aborted) {
      const cut = failure.code === 'cancelled' ? 'cancelled' : "cut off at the run's deadline";
      log({ step: run.current, detail: run.detail, ok: false, ms: Date.now() - run.since, error: cut });
      sealed = true;
    }
    // After the deadline the page may still be busy: its screenshot gets a moment, not a step's full timeout.
    const screenshot = run.page
      ? await shotOf(run.page, stopped.signal.aborted ? 1000 : options.timeoutMs)
      : null;
    return {
      ok: false,
      mode: 'live',
      data: null,
      screenshot,
      steps,
      warnings: [],
      error: { code: failure.code, message: failure.describe(), step: run.current },
    };
  } finally {
    clearTimeout(timer);
    options.cancel?.removeEventListener('abort', cancel);
    stopped.abort();
    await run.page?.close();
    path?.close(run.page?.sitesLoaded());
  }
}

/** Where a live run is, for the deadline's message and the failure's screenshot. */
interface LiveState {
  page: RecipePage | undefined;
  current: StepLog['step'];
  /** The step in the deadline's words ("steps[2] (goto /orders)"), and as its log entry says it. */
  currentDetail: string;
  detail: string;
  since: number;
  /** Files the download steps brought so far. */
  readonly files: Record<string, DownloadedFile>;
}

/**
 * The run's tab, its start, its steps and its extraction, in order, judged on `path`; stops before any step once
 * `signal` has aborted.
 */
async function runSteps(
  recipe: Recipe,
  options: RunOptions,
  run: LiveState,
  log: (entry: StepLog) => void,
  signal: AbortSignal,
  session: ReturnType<RunOptions['browser']>,
  path: CallPath,
): Promise<{ data: unknown; warnings: string[] }> {
  const page = await session.openRunPage(options.timeoutMs);
  // The deadline may have passed while the tab opened: the run is over, and this tab is nobody's to close.
  if (signal.aborted) {
    await page.close();
    throw new TabwardError('timeout', 'The run was cut off before its tab opened.');
  }
  run.page = page;
  const base = resolveUrl(recipe.url, '', recipe.url);
  const context = (index: number) => ({
    base,
    confirm: options.confirm,
    secrets: options.secrets,
    path,
    index,
    recipeName: recipe.name ?? base,
    frontEnd: options.frontEnd,
    signal,
    files: run.files,
  });
  const step = async <T>(at: StepLog['step'], detail: string, work: () => Promise<T>): Promise<T> => {
    if (signal.aborted) throw new TabwardError('timeout', `The run was cut off before ${detail}.`);
    run.current = at;
    run.currentDetail = `${typeof at === 'number' ? `steps[${at}]` : at === 'start' ? 'the start' : 'the extraction'} (${options.secrets.redactor.text(detail)})`;
    run.detail = detail;
    run.since = Date.now();
    return timed(log, at, detail, work);
  };
  // The start is a goto like any other: judged, refused for anything but http(s), failed on an HTTP error.
  const start: RecipeStep = {
    action: 'goto',
    url: base,
    ...(recipe.allowHttpError === true ? { allowHttpError: true } : {}),
  };
  await step('start', `goto ${base}`, () => runStep(page, start, context(-1)));
  for (const [index, each] of recipe.steps.entries())
    await step(index, describeStep(each), () => runStep(page, each, context(index)));
  if (!recipe.extract) return { data: null, warnings: [] };
  return step('extract', describeExtract(recipe.extract), () =>
    extractData(page, recipe.extract, options.model),
  );
}

/** A screenshot of the page as it is, or null when it cannot be had within `ms`. */
async function shotOf(page: RecipePage, ms: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  const shot = page.screenshot().then(
    (png) => png.toString('base64'),
    () => null,
  );
  try {
    return await Promise.race([shot, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Each run has a call path of its own (its own taint) under the recipes' policy: destructive-looking writes ask. */
export function runPath(
  session: RunBrowser,
  options: Pick<RunOptions, 'rules' | 'audit' | 'secrets' | 'timeoutMs'>,
): CallPath {
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
