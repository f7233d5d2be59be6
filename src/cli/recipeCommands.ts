// `tabward run` and `tabward serve`: recipes from the command line and over HTTP.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Command } from 'commander';
import { AuditLog } from '../audit/auditLog.ts';
import { BrowserSession } from '../browser/session.ts';
import { TabwardError } from '../core/errors.ts';
import type { BrowserMode } from '../core/kinds.ts';
import { Secrets } from '../core/secrets.ts';
import { modelConfigFromEnv } from '../llm/modelClient.ts';
import { parseRecipeText } from '../recipes/parseRecipe.ts';
import type { Recipe } from '../recipes/recipeSchema.ts';
import { type RecipeResult, runRecipe, type StepLog } from '../recipes/runRecipe.ts';
import { startRecipeServer } from '../recipes/server.ts';
import { defaultAuditPath, loadRules, loadSecretsFile, reportRuleProblems, tabwardHome } from './config.ts';
import { collect, positiveInt } from './options.ts';

interface RecipeFlags {
  readonly shared?: boolean;
  readonly wsEndpoint?: string;
  readonly userDataDir?: string;
  readonly browserUrl?: string;
  readonly executablePath?: string;
  readonly chromeArg: string[];
  readonly headed?: boolean;
  readonly secrets?: string;
  readonly rules: string[];
  readonly auditLog?: string;
  readonly timeout: number;
  readonly deadline: number;
}

function addRecipeOptions(command: Command): Command {
  return command
    .option('--shared', 'use your running Chrome and its logins (see tabward doctor)')
    .option('--ws-endpoint <url>', 'a remote browser service (CDP WebSocket)')
    .option('--user-data-dir <dir>', "with --shared: your Chrome's profile dir")
    .option('--browser-url <url>', "with --shared: your Chrome's debugging URL")
    .option('--executable-path <path>', 'the Chrome/Chromium to launch')
    .option('--chrome-arg <arg>', 'extra argument for the browser tabward launches (repeatable)', collect, [])
    .option('--headed', 'show the browser window')
    .option(
      '--secrets <file>',
      'dotenv file with the secrets recipes type by name (the environment works too)',
    )
    .option('--rules <file>', 'extra sensitive-page rules (repeatable)', collect, [])
    .option('--audit-log <file>', 'audit log path (default: ~/.tabward/audit.jsonl)')
    .option('--timeout <ms>', 'deadline of one step', positiveInt('--timeout'), 15_000)
    .option('--deadline <ms>', 'deadline of a whole run', positiveInt('--deadline'), 120_000);
}

/** What every run shares: rules, secrets, audit, model, and a browser started only when a live run needs one. */
function recipeRuntime(flags: RecipeFlags, log: (line: string) => void) {
  const { rules, problems } = loadRules(flags.rules);
  reportRuleProblems(problems, log);
  const secrets = new Secrets(loadSecretsFile(flags.secrets), process.env);
  const mode: BrowserMode = flags.shared ? 'shared' : flags.wsEndpoint ? 'remote' : 'isolated';
  let session: BrowserSession | undefined;
  const browser = () => {
    session ??= new BrowserSession({
      mode,
      headless: !flags.headed,
      ...(flags.executablePath ? { executablePath: flags.executablePath } : {}),
      chromeArgs: flags.chromeArg,
      attach: {
        ...(flags.userDataDir ? { userDataDir: flags.userDataDir } : {}),
        ...(flags.browserUrl ? { browserUrl: flags.browserUrl } : {}),
        ...(flags.wsEndpoint ? { wsEndpoint: flags.wsEndpoint } : {}),
      },
      attachTimeoutMs: 60_000,
      notify: log,
    });
    return session;
  };
  return {
    rules,
    secrets,
    browser,
    audit: new AuditLog(flags.auditLog ?? defaultAuditPath()),
    model: modelConfigFromEnv(),
    close: async () => session?.close(),
  };
}

export function runCommand(): Command {
  const command = new Command('run')
    .description(
      'Run a recipe: steps in a browser, then extraction; read-only unless you --confirm its write steps.',
    )
    .argument('<recipe>', 'recipe JSON file (format: schema/recipe.v1.json)')
    .option('--confirm', 'allow the steps marked "write": true')
    .option('--dry-run', 'validate and print the plan; no browser')
    .option('--out <file>', 'write the JSON result here instead of stdout')
    .option('--screenshot <file>', 'save a PNG of the final page (password fields masked)');
  addRecipeOptions(command).action(
    async (
      file: string,
      flags: RecipeFlags & { confirm?: boolean; dryRun?: boolean; out?: string; screenshot?: string },
    ) => {
      const log = (line: string) => process.stderr.write(`${line}\n`);
      if (!existsSync(file)) throw new TabwardError('bad_input', `No recipe file at ${file}.`);
      const recipe = parseRecipeText(readFileSync(file, 'utf8'), file);
      const runtime = recipeRuntime(flags, log);
      try {
        const result = await runRecipe(recipe, {
          confirm: flags.confirm === true,
          dryRun: flags.dryRun === true,
          browser: runtime.browser,
          secrets: runtime.secrets,
          rules: runtime.rules,
          audit: runtime.audit,
          model: runtime.model,
          timeoutMs: flags.timeout,
          deadlineMs: flags.deadline,
          screenshot: flags.screenshot !== undefined,
          frontEnd: 'run',
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
    },
  );
  return command;
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
  writeFileSync(target, Buffer.from(result.screenshot, 'base64'));
  return { ...result, screenshot: target };
}

export function serveCommand(): Command {
  const command = new Command('serve')
    .description(
      'Serve recipes over HTTP: POST /run {recipe, confirm?, dryRun?, screenshot?}, GET /health, GET /schema.',
    )
    .option(
      '--port <port>',
      'port (0: any free one)',
      (value) => (value === '0' ? 0 : positiveInt('--port')(value)),
      8787,
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--token <token>',
      'bearer token (else TABWARD_SERVE_TOKEN, else one generated and kept in ~/.tabward/serve-token)',
    )
    .option('--concurrency <n>', 'runs at the same time', positiveInt('--concurrency'), 2)
    .option(
      '--queue <n>',
      'runs waiting for a slot before new ones get 429',
      (value) => (value === '0' ? 0 : positiveInt('--queue')(value)),
      8,
    )
    .option('--max-body <bytes>', 'largest request body', positiveInt('--max-body'), 256 * 1024);
  addRecipeOptions(command).action(
    async (
      flags: RecipeFlags & {
        port: number;
        host: string;
        token?: string;
        concurrency: number;
        queue: number;
        maxBody: number;
      },
    ) => {
      const log = (line: string) => process.stderr.write(`${line}\n`);
      const runtime = recipeRuntime(flags, log);
      const token = flags.token ?? process.env.TABWARD_SERVE_TOKEN ?? serveToken(log);
      const run = (recipe: Recipe, request: { confirm: boolean; dryRun: boolean; screenshot: boolean }) =>
        runRecipe(recipe, {
          ...request,
          browser: runtime.browser,
          secrets: runtime.secrets,
          rules: runtime.rules,
          audit: runtime.audit,
          model: runtime.model,
          timeoutMs: flags.timeout,
          deadlineMs: flags.deadline,
          frontEnd: 'serve',
        });
      const server = await startRecipeServer({
        port: flags.port,
        host: flags.host,
        token,
        concurrency: flags.concurrency,
        queue: flags.queue,
        maxBodyBytes: flags.maxBody,
        run,
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
      const stop = async () => {
        await server.close();
        await runtime.close();
        process.exit(0);
      };
      process.on('SIGINT', () => void stop());
      process.on('SIGTERM', () => void stop());
    },
  );
  return command;
}

/** The token kept in ~/.tabward/serve-token, made on first start and printed once. */
function serveToken(log: (line: string) => void): string {
  const file = join(tabwardHome(), 'serve-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = randomBytes(24).toString('base64url');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  log(`tabward: new bearer token (kept in ${file}): ${token}`);
  return token;
}
