// A recipe run against a hand-written Playwright script doing the same steps: the demo's `acme-orders` recipe
// (sign in, wait for the orders, extract 12 rows over 3 pages) run by `tabward run` from the built bundle, and
// the same steps written directly against playwright-core, each as a whole process (Node start, browser launch,
// the steps, the browser's close), alternated round by round on the same demo site and the same Chromium.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite } from '../src/demo/demoSite.ts';

export interface RecipeRunFigures {
  readonly tabwardMs: number;
  readonly playwrightMs: number;
  readonly rounds: number;
  readonly load: string;
}

const root = new URL('..', import.meta.url).pathname;

/** The same steps as examples/recipes/acme-orders.json, written by hand. */
const handWritten = (chrome: string, origin: string) => `
import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: ${JSON.stringify(chrome)}, headless: true });
const page = await browser.newPage();
await page.goto(${JSON.stringify(`${origin}/login?next=/portal/orders`)});
await page.fill('input[name=username]', 'alice');
await page.fill('input[name=password]', process.env.ACME_PASSWORD);
await page.click('button[type=submit]');
await page.waitForURL('**/portal/orders*');
await page.waitForSelector('table tr.order');
const summary = await page.textContent('.summary');
const orders = [];
for (let pageNo = 0; pageNo < 5; pageNo++) {
  orders.push(...(await page.$$eval('tr.order', (rows) => rows.map((row) => ({
    id: row.querySelector('.id')?.textContent?.trim(),
    customer: row.querySelector('.customer')?.textContent?.trim(),
    total: row.querySelector('.total')?.textContent?.trim(),
    status: row.querySelector('.status')?.textContent?.trim(),
  })))));
  const next = await page.$('a.next');
  if (!next) break;
  await Promise.all([page.waitForLoadState('domcontentloaded'), next.click()]);
  await page.waitForSelector('table tr.order');
}
process.stdout.write(JSON.stringify({ summary, orders }));
await browser.close();
`;

function timed(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ms: number; out: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('exit', (code) =>
      code === 0
        ? resolve({ ms: performance.now() - started, out })
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${err.slice(-400)}`)),
    );
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export async function measureRecipeRun(chrome: string, rounds = 5): Promise<RecipeRunFigures> {
  const site = await startDemoSite();
  const origin = `http://127.0.0.1:${site.port}`;
  const dir = mkdtempSync(join(tmpdir(), 'tabward-bench-recipe-'));
  try {
    const recipe = JSON.parse(readFileSync(join(root, 'examples/recipes/acme-orders.json'), 'utf8'));
    recipe.url = `${origin}/login?next=/portal/orders`;
    const recipeFile = join(dir, 'acme-orders.json');
    writeFileSync(recipeFile, JSON.stringify(recipe));
    const scriptFile = join(root, 'bench', '.acme-orders-playwright.mjs');
    writeFileSync(scriptFile, handWritten(chrome, origin));
    const env = {
      ...process.env,
      TABWARD_HOME: dir,
      TABWARD_CHROME: chrome,
      ACME_PASSWORD: 'demo-password',
    };
    const tabwardArgs = [join(root, 'bin/tabward'), 'run', recipeFile, '--secret-env', 'ACME_PASSWORD'];
    const tabward: number[] = [];
    const playwright: number[] = [];
    try {
      for (let round = 0; round < rounds + 1; round++) {
        const ours = await timed(process.execPath, tabwardArgs, env);
        const theirs = await timed(process.execPath, [scriptFile], env);
        const rows = (JSON.parse(ours.out) as { data: { orders: unknown[] } }).data.orders.length;
        const theirRows = (JSON.parse(theirs.out) as { orders: unknown[] }).orders.length;
        if (rows !== theirRows) throw new Error(`tabward extracted ${rows} rows, the script ${theirRows}`);
        // The first round warms the disk cache for both.
        if (round === 0) continue;
        tabward.push(ours.ms);
        playwright.push(theirs.ms);
      }
    } finally {
      rmSync(scriptFile, { force: true });
    }
    return {
      tabwardMs: median(tabward),
      playwrightMs: median(playwright),
      rounds,
      load: loadavg()
        .map((value) => value.toFixed(1))
        .join(' '),
    };
  } finally {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { findChrome } = await import('../src/browser/findChrome.ts');
  const figures = await measureRecipeRun(
    findChrome(process.env.TABWARD_CHROME),
    Number(process.argv[2] ?? 5),
  );
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
