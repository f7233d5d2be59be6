// What `tabward run` and `tabward serve` do once their flags are parsed; loaded only when one of them runs.

import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AuditLog } from '../audit/auditLog.ts';
import { NetworkGuard } from '../browser/networkGuard.ts';
import { passwordSeal } from '../browser/passwordSeals.ts';
import { BrowserSession } from '../browser/session.ts';
import { ActionPasses } from '../core/actionPasses.ts';
import type { AuditSink } from '../core/audit.ts';
import { visibleLines } from '../core/displayText.ts';
import { TabwardError } from '../core/errors.ts';
import type { BrowserMode } from '../core/kinds.ts';
import { extractionModelFromEnv } from '../llm/modelClient.ts';
import { checkRecipe, type StepCheck } from '../recipes/checkRecipe.ts';
import { EndpointPool } from '../recipes/endpointPool.ts';
import { type EndpointSpec, parseEndpoint, redactEndpoint } from '../recipes/endpointSpec.ts';
import { GridRunBrowser } from '../recipes/gridBrowser.ts';
import { parseRecipeText } from '../recipes/parseRecipe.ts';
import type { Recipe } from '../recipes/recipeSchema.ts';
import { isRefusal, type Refusal } from '../recipes/runGate.ts';
import { type RecipeResult, type RunBrowser, runRecipe, type StepLog } from '../recipes/runRecipe.ts';
import { startRecipeServer } from '../recipes/server.ts';
import { Slots } from '../recipes/slots.ts';
import { browserConfig, loadRulesAndSecrets } from './config.ts';
import {
  bearerToken,
  checkAppendable,
  checkPrivateTarget,
  ensureHome,
  homeAuditPath,
  writePrivateFile,
} from './home.ts';
import { listenError } from './listenError.ts';
import { openRunQueue } from './queueActions.ts';
import type { RecipeFlags, RunFlags, ServeFlags } from './recipeCommands.ts';
import { boundedStep, closeBrowserSession } from './shutdown.ts';
import { terminalJson } from './terminalText.ts';

/** How many runs at once, how many waiting, and for how long. */
export interface Admission {
  readonly concurrency: number;
  readonly queue: number;
  readonly queueWaitMs: number;
}

/**
 * What every run shares: rules, secrets, audit, model, and where runs get a browser — one tabward starts (or the
 * user's Chrome) only when a live run needs it, or the endpoints of a browser grid (one or more --ws-endpoint) —
 * behind a gate that admits a bounded number of runs.
 */
export function recipeRuntime(
  flags: RecipeFlags,
  log: (line: string) => void,
  admission: Admission,
  /** Where audit records also go (a worker's Redis stream), besides the audit log. */
  alsoAudit?: AuditSink,
) {
  const { rules, secrets } = loadRulesAndSecrets(
    flags.rules,
    flags.secrets,
    log,
    flags.secretEnv,
    flags.ignoreBadRules === true,
  );
  // Recipes' pages are policed like the agent's: no unapproved write reaches a sensitive page.
  const network = new NetworkGuard(rules, new ActionPasses(Date.now, passwordSeal), new Set());
  const endpoints = gridEndpoints(flags, admission.concurrency);
  const mode: BrowserMode = flags.shared ? 'shared' : endpoints ? 'remote' : 'isolated';
  let session: BrowserSession | undefined;
  const ownBrowser = () => {
    session ??= new BrowserSession({
      ...browserConfig(
        mode,
        { ...flags, wsEndpoint: flags.wsEndpoint[0], headless: !flags.headed, attachTimeout: 60_000 },
        log,
      ),
      network,
    });
    return session;
  };
  const auditPath = flags.auditLog ?? homeAuditPath(log);
  checkAppendable(auditPath, '--audit-log (or TABWARD_HOME)');
  const auditLog = new AuditLog(auditPath);
  const audit: AuditSink = alsoAudit
    ? {
        record: (entry) => {
          auditLog.record(entry);
          alsoAudit.record({ ...entry, session: entry.session ?? auditLog.session });
        },
      }
    : auditLog;
  const model = extractionModelFromEnv();
  /** What every run of this command shares, with the browser it runs in. */
  const runOptions = (frontEnd: string, browser: () => RunBrowser = ownBrowser) => ({
    browser,
    secrets,
    rules,
    audit,
    model,
    timeoutMs: flags.timeout,
    deadlineMs: flags.deadline,
    frontEnd,
    mode: () => session?.mode ?? mode,
  });
  const pool = endpoints ? new EndpointPool(endpoints, admission) : undefined;
  // Used without a grid only.
  const slots = new Slots(admission.concurrency, admission.queue, admission.queueWaitMs);
  const grid = { network, connectTimeoutMs: flags.timeout, chromeArgs: flags.chromeArg, log };
  return {
    gate: pool ?? slots,
    endpoints,
    /** A server of tabward's own (serve's port): no recipe page may ever reach it. */
    protectPort: (port: number) => void network.protectedPorts.add(port),
    /** A bare browser-less run (a dry run): no slot, no browser. */
    runOptions,
    /**
     * One run in a slot of the gate, with its browser: tabward's own, or an endpoint of the grid on which the run
     * gets a connection of its own (its start moved to another endpoint when that one's browser will not start).
     */
    inSlot: <T>(
      frontEnd: string,
      work: (options: ReturnType<typeof runOptions>, onGrid?: GridRunBrowser) => Promise<T>,
    ): Promise<T | Refusal> => {
      if (!pool) return slots.run(() => work(runOptions(frontEnd)));
      return pool.run(async (lease) => {
        const browser = new GridRunBrowser(lease, grid);
        try {
          return await work(
            runOptions(frontEnd, () => browser),
            browser,
          );
        } finally {
          await browser.close();
        }
      });
    },
    /** Starts tabward's own browser ahead of the first run (a grid has nothing to start). */
    warm: () =>
      pool
        ? Promise.resolve()
        : ownBrowser()
            .ensure()
            .then(() => undefined),
    close: async () => {
      if (session) await closeBrowserSession(session, log);
    },
  };
}

/** The --ws-endpoint values as a grid's endpoints; none (own browser), or the user's Chrome with --shared. */
function gridEndpoints(flags: RecipeFlags, concurrency: number): EndpointSpec[] | undefined {
  if (flags.shared) {
    if (flags.wsEndpoint.length > 1)
      throw new TabwardError(
        'bad_input',
        '--shared takes one --ws-endpoint (your Chrome); several are for a browser grid, without --shared.',
      );
    return undefined;
  }
  if (flags.wsEndpoint.length === 0) return undefined;
  return flags.wsEndpoint.map((given) => parseEndpoint(given, concurrency));
}

function progressLine(entry: StepLog): string {
  const label = typeof entry.step === 'number' ? `step ${entry.step}` : entry.step;
  return `${entry.ok ? '✓' : '✗'} ${label}: ${entry.detail} (${entry.ms} ms)${entry.error ? ` — ${entry.error}` : ''}`;
}

/** Screenshots go to files on the command line: the given path, or a temporary file for a failure. */
function withScreenshotFile(result: RecipeResult, path: string | undefined): RecipeResult {
  if (!result.screenshot) return result;
  // A failure's screenshot goes into the home (0700), not the shared temp folder: under a name others could guess
  // there, another user's file put first got it (an attack review). Either way a new file its owner alone reads.
  const target =
    result.ok && path
      ? path
      : join(ensureHome(), 'screenshots', `failure-${new Date().toISOString().replace(/[:.]/g, '-')}.png`);
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  writePrivateFile(target, Buffer.from(result.screenshot, 'base64'));
  return { ...result, screenshot: target };
}

/** --token, else TABWARD_SERVE_TOKEN, else the one kept in ~/.tabward/serve-token (printed once, when made). */
function serveToken(flags: ServeFlags, log: (line: string) => void): string {
  // A token on the command line is every local user's: `ps` and /proc/PID/cmdline show it (an attack review ran
  // recipes, writes confirmed, with one read there).
  if (flags.token !== undefined)
    throw new TabwardError(
      'bad_input',
      '--token puts the token on the command line, which every user of this machine can read (ps).',
      'Put it in TABWARD_SERVE_TOKEN, or in a file only you can read given with --token-file FILE.',
    );
  const flag = flags.tokenFile === undefined ? undefined : tokenFromFile(flags.tokenFile);
  const kept = bearerToken({ fileName: 'serve-token', envName: 'TABWARD_SERVE_TOKEN', flag });
  if (kept.source === 'new') log(`tabward: new bearer token (kept in ${kept.file}): ${kept.token}`);
  return kept.token;
}

/** --token-file's token: the file must be there and not readable by others (a token there is as public as argv). */
function tokenFromFile(file: string): string {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch {
    throw new TabwardError(
      'bad_input',
      `--token-file: no file at ${file}.`,
      'Write the token into it first.',
    );
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0)
    throw new TabwardError(
      'bad_input',
      `--token-file: ${file} can be read by other users (mode ${(mode & 0o777).toString(8)}).`,
      `Make it yours alone: chmod 600 ${file}.`,
    );
  return readFileSync(file, 'utf8');
}

/** The recipe file's text, or an error that says what is at that path instead. */
function readRecipeFile(file: string): string {
  if (!existsSync(file)) throw new TabwardError('bad_input', `No recipe file at ${file}.`);
  if (statSync(file).isDirectory()) {
    throw new TabwardError(
      'bad_input',
      `${file} is a folder, not a recipe file.`,
      `Name one of its .json files, e.g. tabward run ${join(file, 'NAME.json')}.`,
    );
  }
  return readFileSync(file, 'utf8');
}

export async function runRecipeFile(file: string, flags: RunFlags): Promise<void> {
  const log = (line: string) => process.stderr.write(`${visibleLines(line)}\n`);
  const recipe = parseRecipeText(readRecipeFile(file), file);
  // Before any browser starts: a result is not lost to a path it may not be written to.
  for (const path of [flags.out, flags.screenshot]) if (path) checkPrivateTarget(path);
  // One run: a slot of its own; on a grid, the first endpoint whose browser starts.
  const runtime = recipeRuntime(flags, log, { concurrency: 1, queue: 0, queueWaitMs: flags.deadline });
  if (flags.check) return checkRecipeFile(recipe, flags, runtime, log);
  // Ctrl-C (or SIGTERM, a closed terminal): the run stops where it is and its result says so; a second one quits.
  const cancel = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (cancel.signal.aborted) process.exit(130);
    log(`tabward: ${signal === 'SIGINT' ? 'Ctrl-C' : signal}: cancelling the run (again to quit at once).`);
    cancel.abort(signal === 'SIGINT' ? 'Ctrl-C' : signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
  try {
    const request = {
      confirm: flags.confirm === true,
      dryRun: flags.dryRun === true,
      screenshot: flags.screenshot !== undefined,
      cancel: cancel.signal,
      ...(process.stderr.isTTY ? { onStep: (entry: StepLog) => log(progressLine(entry)) } : {}),
    };
    const result = request.dryRun
      ? await runRecipe(recipe, { ...request, ...runtime.runOptions('run') })
      : admitted(
          runtime,
          await runtime.inSlot('run', async (options, onGrid) => {
            const done = await runRecipe(recipe, { ...request, ...options });
            return onGrid ? onGrid.finish(done) : done;
          }),
        );
    const printed = terminalJson(withScreenshotFile(result, flags.screenshot));
    // What a logged-in page held: readable by its owner only.
    if (flags.out) writePrivateFile(flags.out, `${printed}\n`);
    else process.stdout.write(`${printed}\n`);
    process.exitCode = result.ok
      ? 0
      : result.error?.code === 'not_allowed'
        ? 3
        : result.error?.code === 'bad_input'
          ? 2
          : result.error?.code === 'cancelled'
            ? 130
            : 1;
  } finally {
    await runtime.close();
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(signal, onSignal);
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
    const result = admitted(
      runtime,
      await runtime.inSlot('run --check', (options) => checkRecipe(recipe, options)),
    );
    for (const step of result.steps) log(checkLine(step));
    if (result.error) log(`✗ ${result.error.message}`);
    const printed = terminalJson(result);
    // What a logged-in page held: readable by its owner only.
    if (flags.out) writePrivateFile(flags.out, `${printed}\n`);
    else process.stdout.write(`${printed}\n`);
    process.exitCode = result.ok ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

/** A command-line run is alone in its gate; should it still be turned away (every endpoint down), say why. */
function admitted<T>(runtime: ReturnType<typeof recipeRuntime>, outcome: T | Refusal): T {
  if (!isRefusal(outcome)) return outcome;
  throw new TabwardError('browser_unavailable', runtime.gate.answer(outcome).message);
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
  const log = (line: string) => process.stderr.write(`${visibleLines(line)}\n`);
  process.on('unhandledRejection', (error) =>
    log(`tabward: internal error (please report it): ${String(error)}`),
  );
  const token = serveToken(flags, log);
  const runtime = recipeRuntime(flags, log, {
    concurrency: flags.concurrency,
    queue: flags.queue,
    queueWaitMs: flags.queueWait,
  });
  // A dry run needs no browser: it takes no slot. A live one runs in a slot of the gate.
  // Aborted when the server stops and its grace is over: runs still going end as cancelled (503), not as a page
  // closed under them.
  const stopRuns = new AbortController();
  const run = async (recipe: Recipe, request: { confirm: boolean; dryRun: boolean; screenshot: boolean }) =>
    request.dryRun
      ? runRecipe(recipe, { ...request, ...runtime.runOptions('serve') })
      : runtime.inSlot('serve', async (options, onGrid) => {
          const result = await runRecipe(recipe, { ...request, ...options, cancel: stopRuns.signal });
          return onGrid ? onGrid.finish(result) : result;
        });
  // --redis: live runs are jobs the workers run; this process only queues them (and runs dry runs itself).
  const queued = flags.redis ? await openRunQueue(flags.redis, flags, log) : undefined;
  const server = await startRecipeServer({
    ...(queued ? { queued: { runs: queued, waitMs: flags.deadline + 30_000 } } : {}),
    port: flags.port,
    host: flags.host,
    token,
    allowedHosts: flags.allowedHost,
    maxBodyBytes: flags.maxBody,
    allowPrivate: flags.allowPrivate === true,
    gate: runtime.gate,
    run,
  }).catch(async (error: unknown) => {
    await runtime.close();
    await queued?.close();
    throw listenError(error, '--port', flags.port);
  });
  runtime.protectPort(Number(new URL(server.url).port));
  if (queued)
    log(
      `tabward: runs go to the Redis queue at ${redactEndpoint(flags.redis ?? '')}; start tabward worker --redis to run them.`,
    );
  log(`tabward: serving recipes at ${server.url} (POST /run with Authorization: Bearer <token>)`);
  if (runtime.endpoints)
    log(
      `tabward: runs spread over ${runtime.endpoints.length} browser endpoint${runtime.endpoints.length > 1 ? 's' : ''}: ${runtime.endpoints.map((each) => `${each.label} (${each.concurrency} at a time)`).join(', ')}`,
    );
  // Start the browser now, so that the first run's deadline is not spent launching it (none with a queue: the
  // workers run the live runs).
  if (!queued)
    runtime
      .warm()
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
    if (running && !(await boundedStep('finishing the running runs', server.idle(), log, flags.grace))) {
      log('tabward: the runs still going are cancelled (503: the server is stopping).');
      stopRuns.abort('the server is stopping');
      // Their answers go out before the server closes.
      await boundedStep('answering the cancelled runs', server.idle(), log, 2_000);
    }
    await boundedStep('closing the HTTP server', server.close(), log);
    await runtime.close();
    if (queued) await boundedStep('closing the queue', queued.close(), log);
    log('tabward: stopped.');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  process.on('SIGHUP', () => void stop());
}
