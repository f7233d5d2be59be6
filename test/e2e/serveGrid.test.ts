// `tabward serve` over a browser grid: two Chromium endpoints (each started with a debugging port) and one that
// nobody answers. Runs spread over both live ones; the dead one is taken out after its failure and that run's start
// is moved to a live one; /health reports each endpoint with its token redacted; every endpoint down answers 503
// with Retry-After; a run whose browser goes away after it began is not moved, and says so; a load balancer's Host
// is accepted when named. `tabward run --ws-endpoint` with one endpoint still runs there.

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { findChrome } from '../../src/browser/findChrome.ts';
import { type LaunchedChrome, launchChrome } from '../../src/browser/launch.ts';
import { testChromeArgs } from '../helpers/fixtureServer.ts';
import type { Loose } from '../helpers/loose.ts';
import { jsonOf } from '../helpers/loose.ts';
import { demoSecretsFile, usePortal } from '../helpers/recipeSite.ts';
import { type RunningServe, startServe } from '../helpers/tabwardProcess.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'test-token-0123456789';
const gridToken = 'grid-secret-7f3a9c';

/** A WebSocket URL on a port nobody listens on: connecting is refused. */
async function deadEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `ws://127.0.0.1:${port}/devtools/browser/gone?token=${gridToken}`;
}

/** `tabward serve` on a free port with the portal's home, through every endpoint given. */
const startGridServe = (home: string, args: readonly string[]) =>
  startServe(token, ['--allow-private', ...args], { home });

describe('tabward serve over a browser grid', { timeout: 240_000 }, () => {
  const portal = usePortal();
  let one: LaunchedChrome;
  let two: LaunchedChrome;
  let dead = '';
  let grid: RunningServe;
  const started: ChildProcess[] = [];

  before(async () => {
    const launch = () =>
      launchChrome({ executablePath: findChrome(), headless: true, extraArgs: testChromeArgs });
    [one, two, dead] = await Promise.all([launch(), launch(), deadEndpoint()]);
    // The dead endpoint first: least loaded and first in line, the first run goes there.
    grid = await startGridServe(portal.dir, [
      '--concurrency',
      '1',
      '--ws-endpoint',
      dead,
      '--ws-endpoint',
      one.wsEndpoint,
      '--ws-endpoint',
      `${two.wsEndpoint}#concurrency=1`,
      // The name a load balancer in front sends as Host.
      '--allowed-host',
      'recipes.internal:8080',
    ]);
    started.push(grid.child);
  });
  after(async () => {
    for (const server of started) server.kill('SIGTERM');
    await Promise.all([one?.close(), two?.close()]);
  });

  const post = (base: string, recipe: unknown) =>
    fetch(`${base}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipe }),
    });
  const health = async (base: string) => jsonOf(await fetch(`${base}/health`));
  const home = () => ({ url: `http://127.0.0.1:${portal.site.port}/`, extract: { fields: { title: 'h1' } } });

  test('/health lists each endpoint with its concurrency and state, a token in its URL redacted', async () => {
    const status = await health(grid.base);
    assert.equal(status.concurrency, 3);
    assert.deepEqual(
      status.endpoints.map((each: Loose) => [each.url, each.concurrency, each.state, each.running]),
      [
        [dead.replace(gridToken, '***'), 1, 'unknown', 0],
        [one.wsEndpoint, 1, 'unknown', 0],
        [two.wsEndpoint, 1, 'unknown', 0],
      ],
    );
    assert.ok(!JSON.stringify(status).includes(gridToken));
  });

  test('behind a load balancer: the Host it sends is accepted when named by --allowed-host, others are not', async () => {
    const statusWith = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(`${grid.base}/health`);
        request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
    assert.equal(await statusWith('recipes.internal:8080'), 200);
    assert.equal(await statusWith('other.internal:8080'), 403);
  });

  test('runs spread over both live endpoints; the dead one is taken out and its run started elsewhere', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(grid.base, home())));
    const results = await Promise.all(answers.map((answer) => jsonOf(answer)));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      Array(6).fill(200),
      JSON.stringify(results.map((result) => result.error)),
    );
    for (const result of results) assert.equal(result.data.title, 'Acme intranet');
    assert.deepEqual(
      new Set(results.map((result) => result.endpoint)),
      new Set([one.wsEndpoint, two.wsEndpoint]),
      'both live endpoints ran runs, the dead one none',
    );
    const [gone, first, second] = (await health(grid.base)).endpoints;
    assert.equal(gone.up, false);
    assert.equal(gone.state, 'down');
    assert.equal(gone.consecutiveFailures, 1);
    assert.equal(gone.startFailures, 1, 'one run tried it, and that run still succeeded elsewhere');
    assert.ok(gone.retryInMs > 0);
    assert.match(gone.lastError, /ECONNREFUSED/);
    assert.ok(!gone.lastError.includes(gridToken));
    assert.equal(first.state, 'up');
    assert.equal(second.state, 'up');
    assert.equal(first.runs + second.runs, 6);
    assert.ok(!grid.output().includes(gridToken), 'the log names the endpoint by its label');
    assert.match(grid.output(), /did not start a run .*taken out/);
  });

  test('tabward run --ws-endpoint with one endpoint runs there', async () => {
    const out = await portal.run([
      portal.recipe('acme-orders'),
      '--secrets',
      demoSecretsFile,
      '--ws-endpoint',
      one.wsEndpoint,
    ]);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.json.data.orders.length, 12);
    assert.equal(out.json.endpoint, one.wsEndpoint);
  });

  test('every endpoint down: the run that found out gets 503 naming it, the next 503 with Retry-After', async () => {
    const alone = await startGridServe(portal.dir, ['--ws-endpoint', dead]);
    started.push(alone.child);
    const first = await post(alone.base, home());
    const failed = await jsonOf(first);
    assert.equal(first.status, 503);
    assert.equal(failed.errorCode, 'browser_unavailable');
    assert.match(
      failed.error,
      /No browser endpoint could start this run: ws:\/\/127\.0\.0\.1:\d+\/devtools\/browser\/gone\?token=\*\*\*/,
    );
    assert.match(failed.error, /retrying it is safe/);
    const next = await post(alone.base, home());
    assert.equal(next.status, 503);
    assert.ok(Number(next.headers.get('retry-after')) > 0);
    const refused = await jsonOf(next);
    assert.match(refused.error, /Every browser endpoint is down/);
    for (const body of [failed, refused]) assert.ok(!JSON.stringify(body).includes(gridToken));
  });

  test('a run whose browser goes away after it began is not moved to another endpoint, and says why', async () => {
    const stuck = { ...home(), steps: [{ action: 'waitFor', selector: '#never', timeoutMs: 60_000 }] };
    const before = (await health(grid.base)).endpoints.map((each: Loose) => each.runs);
    const runs = [post(grid.base, stuck), post(grid.base, stuck)];
    await waitFor('both runs to have their browser', async () => {
      const now = (await health(grid.base)).endpoints;
      return now[1].runs > before[1] && now[2].runs > before[2];
    });
    await Promise.all([one.close(), two.close()]);
    for (const answer of await Promise.all(runs)) {
      const result = await jsonOf(answer);
      assert.equal(result.ok, false);
      assert.match(result.error, /went away after the run began; it was not moved to another endpoint/);
      assert.match(result.error, /a write must not happen twice/);
    }
  });
});
