// `tabward run` and `tabward serve`: their flags and help; the work is in recipeActions.ts.

import { Command, Option } from 'commander';
import { collect, portNumber, positiveInt } from './options.ts';

export type RunFlags = RecipeFlags & {
  confirm?: boolean;
  dryRun?: boolean;
  check?: boolean;
  out?: string;
  screenshot?: string;
};
export type ServeFlags = RecipeFlags & {
  port: number;
  host: string;
  /** Refused with the reason: a command line is readable by every local user. */
  token?: string;
  tokenFile?: string;
  concurrency: number;
  queue: number;
  queueWait: number;
  allowedHost: string[];
  maxBody: number;
  allowPrivate?: boolean;
  grace: number;
  redis?: string;
  resultTtl: number;
};

export type WorkerFlags = RecipeFlags & {
  redis: string;
  concurrency: number;
  allowPrivate?: boolean;
  lockDuration: number;
  grace: number;
};

export interface RecipeFlags {
  readonly shared?: boolean;
  /** Browser endpoints of a grid (or, with --shared, the user's Chrome): empty when none is given. */
  readonly wsEndpoint: readonly string[];
  readonly userDataDir?: string;
  readonly browserUrl?: string;
  readonly executablePath?: string;
  readonly chromeArg: string[];
  readonly headed?: boolean;
  readonly secrets?: string;
  readonly secretEnv?: readonly string[];
  readonly rules: string[];
  readonly ignoreBadRules?: boolean;
  readonly auditLog?: string;
  readonly timeout: number;
  readonly deadline: number;
}

function addRecipeOptions(command: Command): Command {
  return command
    .option('--shared', 'use your running Chrome and its logins (see tabward doctor)')
    .option(
      '--ws-endpoint <url>',
      'a remote browser service: CDP (ws://, http://), a Selenium Grid 4 (selenium+http://), a Playwright server (playwright+ws://); repeatable: runs are spread over them (URL#concurrency=N&header=Name:Value)',
      collect,
      [],
    )
    .option('--user-data-dir <dir>', "with --shared: your Chrome's profile dir")
    .option('--browser-url <url>', "with --shared: your Chrome's debugging URL")
    .option('--executable-path <path>', 'the Chrome/Chromium to launch')
    .option(
      '--chrome-arg <arg>',
      "extra Chromium switch for the browser tabward launches, and for each Selenium Grid session's Chromium (repeatable)",
      collect,
      [],
    )
    .option('--headed', 'show the browser window')
    .option(
      '--secrets <file>',
      'dotenv file with the secrets recipes type by name (NAME@https://origin=value binds one)',
    )
    .option(
      '--secret-env <name>',
      'an environment variable the agent may type as a secret, NAME or NAME@https://origin (repeatable)',
      collect,
      [],
    )
    .option('--rules <file>', 'extra sensitive-page rules (repeatable)', collect, [])
    .option('--ignore-bad-rules', 'run even when a rules file has bad lines (they are skipped)')
    .option('--audit-log <file>', 'audit log path (default: ~/.tabward/audit.jsonl)')
    .option('--timeout <ms>', 'deadline of one step', positiveInt('--timeout'), 15_000)
    .option('--deadline <ms>', 'deadline of a whole run', positiveInt('--deadline'), 120_000);
}

export function runCommand(): Command {
  const command = new Command('run')
    .description(
      'Run a recipe: steps in a browser, then extraction; read-only unless you --confirm its write steps.',
    )
    .argument('<recipe>', 'recipe JSON file (format: schema/recipe.v1.json)')
    .option('--confirm', 'allow the steps marked "write": true')
    .option('--dry-run', 'validate and print the plan; no browser')
    .option(
      '--check',
      'walk it in a browser and report what each click, press and select would act on; writes nothing (exit 1: an unmarked write)',
    )
    .option('--out <file>', 'write the JSON result here instead of stdout')
    .option('--screenshot <file>', 'save a PNG of the final page (password fields masked)');
  addRecipeOptions(command).action(async (file: string, flags: RunFlags) => {
    const { runRecipeFile } = await import('./recipeActions.ts');
    await runRecipeFile(file, flags);
  });
  return command;
}

export function serveCommand(): Command {
  const command = new Command('serve')
    .description(
      'Serve recipes over HTTP: POST /run {recipe, confirm?, dryRun?, screenshot?}, GET /health, GET /schema.',
    )
    // Not the relay's 8787: both may run on one machine.
    .option('--port <port>', 'port (0: any free one)', portNumber, 8788)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--token-file <file>',
      'a file holding the bearer token (else TABWARD_SERVE_TOKEN, else one generated and kept in ~/.tabward/serve-token)',
    )
    // Hidden, and refused when given: whoever reads it (`ps` shows every user's command lines) runs recipes here.
    .addOption(new Option('--token <token>').hideHelp())
    .option(
      '--concurrency <n>',
      'runs at the same time (with --ws-endpoint: on each endpoint without its own #concurrency=N)',
      positiveInt('--concurrency'),
      2,
    )
    .option(
      '--queue <n>',
      'runs waiting for a slot before new ones get 429',
      (value) => (value === '0' ? 0 : positiveInt('--queue')(value)),
      8,
    )
    .option(
      '--queue-wait <ms>',
      'how long a queued run waits for a slot before it gets 503',
      positiveInt('--queue-wait'),
      60_000,
    )
    .option(
      '--allowed-host <host>',
      "a Host header to accept besides this server's own, e.g. a load balancer's name (repeatable)",
      collect,
      [],
    )
    .option('--max-body <bytes>', 'largest request body', positiveInt('--max-body'), 256 * 1024)
    .option(
      '--grace <ms>',
      'on SIGTERM/SIGINT, how long running runs may finish before they are cut off',
      positiveInt('--grace'),
      10_000,
    )
    .option(
      '--allow-private',
      'run recipes that reach this machine or private addresses (refused by default)',
    )
    .option(
      '--redis <url>',
      'queue live runs on Redis for tabward worker processes (redis://HOST:PORT); GET/DELETE /runs/:id, Idempotency-Key',
    )
    .option(
      '--result-ttl <s>',
      'with --redis: how long results are kept',
      positiveInt('--result-ttl'),
      86_400,
    );
  addRecipeOptions(command).action(async (flags: ServeFlags) => {
    const { serveRecipes } = await import('./recipeActions.ts');
    await serveRecipes(flags);
  });
  return command;
}

export function workerCommand(): Command {
  const command = new Command('worker')
    .description(
      "Run the recipe runs tabward serve --redis queues: in this machine's browser, your Chrome (--shared) or --ws-endpoint grids.",
    )
    .requiredOption('--redis <url>', 'the Redis queue serve --redis adds runs to (redis://HOST:PORT)')
    .option(
      '--concurrency <n>',
      "runs at once: this worker's share of its browsers (with --ws-endpoint: on each endpoint without its own #concurrency=N)",
      positiveInt('--concurrency'),
      2,
    )
    .option(
      '--allow-private',
      'run recipes that reach this machine or private addresses (refused by default)',
    )
    .option(
      '--lock-duration <ms>',
      'how long a run stays claimed without this worker renewing it: a worker that died is noticed after about this long',
      positiveInt('--lock-duration'),
      30_000,
    )
    .option(
      '--grace <ms>',
      'on SIGTERM/SIGINT, how long running runs may finish before they are cancelled',
      positiveInt('--grace'),
      10_000,
    );
  addRecipeOptions(command).action(async (flags: WorkerFlags) => {
    const { runWorker } = await import('./queueActions.ts');
    await runWorker(flags);
  });
  return command;
}
