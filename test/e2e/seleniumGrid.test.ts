// Recipes on a real Selenium Grid 4 (the standalone jar from npm, Java, Debian's chromedriver and chromium), started
// here on 127.0.0.1 with two slots: `--ws-endpoint selenium+http://…` creates a WebDriver session per run, drives it
// over its se:cdp endpoint under the browser-wide gate, and deletes it at the end; runs past the Grid's slots wait in
// the Grid's own queue; a run whose deadline passes while queued there ends, leaving no session behind;
// `serve --redis` with two `worker`s runs recipes end to end over the Grid and a real Redis; and a Grid killed
// mid-run fails its run, which says it was not moved.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type RedisUnderTest, redisMissing, startRedis } from '../helpers/redisServer.ts';
import { runCli } from '../helpers/runCli.ts';
import { type GridUnderTest, gridMissing, startGrid } from '../helpers/seleniumGrid.ts';
import { type RunningTabward, startTabward } from '../helpers/tabwardProcess.ts';
import { tokenFile } from '../helpers/tokenFile.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'grid-token-0123456789';
const missing = gridMissing() ?? redisMissing();
// Chromium refuses to run as root without it; the Grid's node runs it as whoever runs the tests.
const chromeArgs = [...testChromeArgs, '--no-sandbox'].flatMap((arg) => ['--chrome-arg', arg]);

type Running = RunningTabward;

describe('recipes on a Selenium Grid 4', { skip: missing, timeout: 180_000 }, () => {
  let grid: GridUnderTest;
  let site: Fixture;
  let endpoint = '';
  const home = mkdtempSync(join(tmpdir(), 'tabward-grid-'));
  const started: Running[] = [];
  const holds = new Map<string, () => void>();
  const held = (name: string) =>
    new Promise<void>((release) => {
      holds.set(name, release);
    });

  async function start(args: readonly string[], ready: RegExp): Promise<Running> {
    const running = await startTabward(args, ready, { home });
    started.push(running);
    return running;
  }

  const recipe = (tag: string) => ({
    url: site.url('127.0.0.1', `/report?tag=${tag}`),
    steps: [],
    extract: { fields: { total: '.total' } },
  });
  const post = async (base: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const seen = (tag: string) => site.seen.some((request) => request.path.includes(`tag=${tag}`));
  const noSessionLeft = () =>
    waitFor('the Grid to hold no session', async () => (await grid.sessions()).length === 0, {
      timeoutMs: 20_000,
    });

  before(async () => {
    [grid, site] = await Promise.all([
      startGrid({ maxSessions: 2 }),
      startFixture({
        '/report': async (req, _body, res) => {
          const tag = new URL(req.url ?? '', 'http://x').searchParams.get('tag') ?? '';
          if (tag.startsWith('slow')) await held(tag);
          html(res, `<title>Report</title><p class="total">42 (${tag})</p>`);
        },
      }),
    ]);
    endpoint = `selenium+http://127.0.0.1:${grid.port}`;
  });
  after(async () => {
    for (const release of holds.values()) release();
    await Promise.all(
      started.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    await grid?.stop();
    await site?.close();
  });

  test('serve: a session per run over se:cdp, past the Grid slots in its queue, each deleted at the end', async () => {
    const serve = await start(
      [
        'serve',
        '--port',
        '0',
        '--token-file',
        tokenFile(token),
        '--allow-private',
        '--ws-endpoint',
        `${endpoint}#concurrency=3`,
        ...chromeArgs,
      ],
      /serving recipes at/,
    );
    const base = /serving recipes at (\S+)/.exec(serve.output())?.[1] ?? '';
    const health = (await (await fetch(`${base}/health`)).json()) as { endpoints: Record<string, unknown>[] };
    assert.equal(health.endpoints[0]?.kind, 'selenium');
    assert.equal(health.endpoints[0]?.url, endpoint);

    const runs = [post(base, { recipe: recipe('slow1') }), post(base, { recipe: recipe('slow2') })];
    await waitFor('both slow runs to reach the site', () => seen('slow1') && seen('slow2'), {
      timeoutMs: 60_000,
    });
    assert.equal((await grid.sessions()).length, 2, 'each run has a WebDriver session of its own');
    // A third run: the Grid has no free slot, so its new-session request waits in the Grid's queue.
    runs.push(post(base, { recipe: recipe('third') }));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.ok(!seen('third'), 'the third run waits for a Grid slot');
    holds.get('slow1')?.();
    holds.get('slow2')?.();
    const results = await Promise.all(runs);
    for (const [index, tag] of ['slow1', 'slow2', 'third'].entries()) {
      const result = results[index];
      assert.equal(result?.status, 200, JSON.stringify(result?.json));
      assert.deepEqual(result?.json.data, { total: `42 (${tag})` });
      assert.equal(result?.json.endpoint, endpoint);
    }
    await noSessionLeft();
  });

  test('tabward run: a run whose deadline passes in the Grid queue ends, and leaves no session behind', async () => {
    // Both slots taken by someone else's sessions.
    const own: string[] = [];
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${grid.url}/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({
          capabilities: {
            alwaysMatch: {
              browserName: 'chrome',
              'goog:chromeOptions': { args: ['--headless=new', '--no-sandbox'] },
            },
          },
        }),
      });
      own.push(((await response.json()) as { value: { sessionId: string } }).value.sessionId);
    }
    try {
      const file = join(home, 'queued.json');
      writeFileSync(file, JSON.stringify(recipe('queued')));
      const began = Date.now();
      const run = await runCli(
        ['run', file, '--ws-endpoint', endpoint, '--deadline', '5000', ...chromeArgs],
        {
          TABWARD_HOME: home,
        },
      );
      const took = Date.now() - began;
      assert.notEqual(run.code, 0, run.stdout);
      assert.match(`${run.stdout}${run.stderr}`, /did not finish within 5000 ms/);
      assert.ok(took < 30_000, `bounded by its deadline, not the Grid's queue timeout (${took} ms)`);
      assert.ok(!seen('queued'));
    } finally {
      for (const id of own) await fetch(`${grid.url}/session/${id}`, { method: 'DELETE' });
    }
    await noSessionLeft();
    // Nothing the aborted request left in the Grid's queue gets a session later.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.deepEqual(await grid.sessions(), []);
  });

  test('serve --redis and two workers run recipes over the Grid and a real Redis', async () => {
    let redis: RedisUnderTest | undefined;
    try {
      redis = await startRedis();
      const serve = await start(
        ['serve', '--port', '0', '--token-file', tokenFile(token), '--redis', redis.url, '--allow-private'],
        /serving recipes at/,
      );
      const base = /serving recipes at (\S+)/.exec(serve.output())?.[1] ?? '';
      const worker = () =>
        start(
          [
            'worker',
            '--redis',
            redis?.url ?? '',
            '--concurrency',
            '1',
            '--allow-private',
            '--ws-endpoint',
            endpoint,
            ...chromeArgs,
          ],
          /worker taking runs/,
        );
      const workers = await Promise.all([worker(), worker()]);
      const runs = await Promise.all(['q1', 'q2', 'q3'].map((tag) => post(base, { recipe: recipe(tag) })));
      for (const [index, tag] of ['q1', 'q2', 'q3'].entries()) {
        const result = runs[index];
        assert.equal(result?.status, 200, JSON.stringify(result?.json));
        assert.deepEqual(result?.json.data, { total: `42 (${tag})` });
        assert.equal(result?.json.endpoint, endpoint);
      }
      for (const { child } of workers) child.kill('SIGTERM');
      const audit = await runCli(['audit', '--redis', redis.url, '--json'], { TABWARD_HOME: home });
      assert.equal(audit.code, 0, audit.stderr);
      await noSessionLeft();
    } finally {
      await redis?.stop();
    }
  });

  test('the Grid killed mid-run (its node and browsers with it): the run fails, saying it was not moved', async () => {
    const serve = await start(
      [
        'serve',
        '--port',
        '0',
        '--token-file',
        tokenFile(token),
        '--allow-private',
        '--ws-endpoint',
        endpoint,
        ...chromeArgs,
      ],
      /serving recipes at/,
    );
    const base = /serving recipes at (\S+)/.exec(serve.output())?.[1] ?? '';
    const run = post(base, { recipe: recipe('slow-killed') });
    await waitFor('the run to reach the site', () => seen('slow-killed'), { timeoutMs: 60_000 });
    await grid.stop('SIGKILL');
    const result = await run;
    assert.equal(result.json.ok, false, JSON.stringify(result.json));
    assert.match(String(result.json.error), /went away after the run began; it was not moved/);
    assert.equal(result.json.endpoint, endpoint);
  });
});
