// What `tabward run` and `tabward serve` do once their flags are parsed; loaded only when one of them runs.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AuditLog } from '../audit/auditLog.ts';
import { NetworkGuard } from '../browser/networkGuard.ts';
import { BrowserSession } from '../browser/session.ts';
import { ActionPasses } from '../core/actionPasses.ts';
import { TabwardError } from '../core/errors.ts';
import type { BrowserMode } from '../core/kinds.ts';
import { extractionModelFromEnv } from '../llm/modelClient.ts';
import { checkRecipe, type StepCheck } from '../recipes/checkRecipe.ts';
import { parseRecipeText } from '../recipes/parseRecipe.ts';
import type { Recipe } from '../recipes/recipeSchema.ts';
import { type RecipeResult, runRecipe, type StepLog } from '../recipes/runRecipe.ts';
import { startRecipeServer } from '../recipes/server.ts';
import { browserConfig, loadRulesAndSecrets } from './config.ts';
import { bearerToken, checkAppendable, homeAuditPath } from './home.ts';
import { listenError } from './listenError.ts';
import type { RecipeFlags, RunFlags, ServeFlags } from './recipeCommands.ts';
import { boundedStep, closeBrowserSession } from './shutdown.ts';

/** What every run shares: rules, secrets, audit, model, and a browser started only when a live run needs one. */
function recipeRuntime(flags: RecipeFlags, log: (line: string) => void) {
  const { rules, secrets } = loadRulesAndSecrets(
    flags.rules,
    flags.secrets,
    log,
    flags.secretEnv,
    flags.ignoreBadRules === true,
  );
  const mode: BrowserMode = flags.shared ? 'shared' : flags.wsEndpoint ? 'remote' : 'isolated';
  let session: BrowserSession | undefined;
  const browser = () => {
    session ??= new BrowserSession({
      ...browserConfig(mode, { ...flags, headless: !flags.headed, attachTimeout: 60_000 }, log),
      // Recipes' pages are policed like the agent's: no unapproved write reaches a sensitive page.
      network: new NetworkGuard(rules, new ActionPasses(), new Set()),
    });
    return session;
  };
  const auditPath = flags.auditLog ?? homeAuditPath(log);
  checkAppendable(auditPath, '--audit-log (or TABWARD_HOME)');
  const audit = new AuditLog(auditPath);
  const model = extractionModelFromEnv();
  return {
    browser,
    close: async () => {
      if (session) await closeBrowserSession(session, log);
    },
    /** What every run of this command shares. */
    runOptions: (frontEnd: string) => ({
      browser,
      secrets,
      rules,
      audit,
      model,
      timeoutMs: flags.timeout,
      deadlineMs: flags.deadline,
      frontEnd,
      mode: () => session?.mode ?? mode,
    }),
  };
}

function progressLine(entry: StepLog): string {
  const label = typeof entry.step === 'number' ? `step ${entry.step}` : entry.step;
  return `${entry.ok ? '✓' : '✗'} ${label}: ${entry.detail} (${entry.ms} ms)${entry.error ? ` — ${entry.error}` : ''}`;
}

/** Screenshots go to files on the command line: the given path, or a temporary file for a failure. */
function withScreenshotFile(result: RecipeResult, path: string | undefined): RecipeResult {
  if (!result.screenshot) return result;
  const target = result.ok && path ? path : join(tmpdir(), `tabward-failure-${Date.now()}.png`);
  mkdirSync(dirname(target), { recursive: true });
  // A failure's screenshot may show what the page held: readable by its owner only.
  writeFileSync(target, Buffer.from(result.screenshot, 'base64'), { mode: 0o600 });
  return { ...result, screenshot: target };
}

/** --token, else TABWARD_SERVE_TOKEN, else the one kept in ~/.tabward/serve-token (printed once, when made). */
function serveToken(flag: string | undefined, log: (line: string) => void): string {
  const kept = bearerToken({ fileName: 'serve-token', envName: 'TABWARD_SERVE_TOKEN', flag });
  if (kept.source === 'new') log(`tabward: new bearer token (kept in ${kept.file}): ${kept.token}`);
  return kept.token;
}

export async function runRecipeFile(file: string, flags: RunFlags): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (!existsSync(file)) throw new TabwardError('bad_input', `No recipe file at ${file}.`);
  const recipe = parseRecipeText(readFileSync(file, 'utf8'), file);
  const runtime = recipeRuntime(flags, log);
  if (flags.check) return checkRecipeFile(recipe, flags, runtime, log);
  try {
    const result = await runRecipe(recipe, {
      confirm: flags.confirm === true,
      dryRun: flags.dryRun === true,
      ...runtime.runOptions('run'),
      screenshot: flags.screenshot !== undefined,
      ...(process.stderr.isTTY ? { onStep: (entry: StepLog) => log(progressLine(entry)) } : {}),
    });
    const printed = JSON.stringify(withScreenshotFile(result, flags.screenshot), null, 2);
    if (flags.out) writeFileSync(flags.out, `${printed}\n`);
    else process.stdout.write(`${printed}\n`);
    process.exitCode = result.ok
      ? 0
      : result.error?.code === 'not_allowed'
        ? 3
        : result.error?.code === 'bad_input'
          ? 2
          : 1;
  } finally {
    await runtime.close();
  }
}

/** --check: the report as JSON (stdout or --out), one line a step on stderr; exit 1 for an unmarked write. */
async function checkRecipeFile(
  recipe: Recipe,
  flags: RunFlags,
  runtime: ReturnType<typeof recipeRuntime>,
  log: (line: string) => void,
): Promise<void> {
  try {
    const result = await checkRecipe(recipe, runtime.runOptions('run --check'));
    for (const step of result.steps) log(checkLine(step));
    if (result.error) log(`✗ ${result.error.message}`);
    const printed = JSON.stringify(result, null, 2);
    if (flags.out) writeFileSync(flags.out, `${printed}\n`);
    else process.stdout.write(`${printed}\n`);
    process.exitCode = result.ok ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

function checkLine(step: StepCheck): string {
  const { target } = step;
  const what = target
    ? ` → ${target.role} "${target.name}"${target.formAction ? `, submits to ${target.formAction}` : ''}${target.link ? `, leads to ${target.link}` : ''}`
    : '';
  const mark = step.problem ? '✗' : step.looksLikeWrite ? '!' : step.outcome === 'not reached' ? '·' : '✓';
  const why = step.looksLikeWrite ? `; looks like a write: ${step.looksLikeWrite}` : '';
  return `${mark} steps[${step.step}] ${step.detail}${what}${why} — ${step.problem ?? step.outcome}`;
}

export async function serveRecipes(flags: ServeFlags): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  process.on('unhandledRejection', (error) =>
    log(`tabward: internal error (please report it): ${String(error)}`),
  );
  const token = serveToken(flags.token, log);
  const runtime = recipeRuntime(flags, log);
  const run = (recipe: Recipe, request: { confirm: boolean; dryRun: boolean; screenshot: boolean }) =>
    runRecipe(recipe, {
      ...request,
      ...runtime.runOptions('serve'),
    });
  const server = await startRecipeServer({
    port: flags.port,
    host: flags.host,
    token,
    concurrency: flags.concurrency,
    queue: flags.queue,
    maxBodyBytes: flags.maxBody,
    allowPrivate: flags.allowPrivate === true,
    run,
  }).catch(async (error: unknown) => {
    await runtime.close();
    throw listenError(error, '--port', flags.port);
  });
  log(`tabward: serving recipes at ${server.url} (POST /run with Authorization: Bearer <token>)`);
  // Start the browser now, so that the first run's deadline is not spent launching it.
  runtime
    .browser()
    .ensure()
    .catch((error: unknown) =>
      log(
        `tabward: the browser did not start yet: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
  // SIGTERM/SIGINT: take no more runs (new and queued ones get 503), give the running ones a bounded grace,
  // then close the server and the browser (which ends any run still going). Bounded: a client's open connection
  // must not keep the server, or its browser, alive.
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const { running, dropped } = server.stopTaking();
    log(
      `tabward: stopping: no new runs; ${dropped} queued refused; ${running} running get up to ${flags.grace} ms to finish.`,
    );
    if (running && !(await boundedStep('finishing the running runs', server.idle(), log, flags.grace)))
      log('tabward: the runs still going are cut off with the browser.');
    await boundedStep('closing the HTTP server', server.close(), log);
    await runtime.close();
    log('tabward: stopped.');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}
