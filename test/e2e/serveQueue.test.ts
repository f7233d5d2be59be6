// `tabward serve --redis` and `tabward worker --redis` as a user runs them: real processes, a real Redis
// (Debian's redis-server), real Chromium, a fixture site on 127.0.0.1. Runs are jobs: a waiting client gets the
// result as before, an async one a 202 and `GET /runs/:id`; an Idempotency-Key names one run; a read-only run whose
// worker is SIGKILLed mid-run is finished by another worker; a confirmed write whose worker dies mid-run is never
// run again and says "outcome unknown"; a queued run can be cancelled; every worker's audit reaches one stream.

import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type RedisUnderTest, redisMissing, startRedis } from '../helpers/redisServer.ts';
import { runCli } from '../helpers/runCli.ts';
import {
  type RunningServe,
  type RunningTabward,
  startServe,
  startTabward,
} from '../helpers/tabwardProcess.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'queue-token-0123456789';
const missing = redisMissing();

type Running = RunningTabward;

describe('serve on a Redis queue, with workers', { skip: missing, timeout: 300_000 }, () => {
  let redis: RedisUnderTest;
  let site: Fixture;
  let serve: RunningServe;
  let base = '';
  const home = mkdtempSync(join(tmpdir(), 'tabward-queue-'));
  const workers: Running[] = [];
  /** Requests the fixture holds until released (a slow page, a write that takes a while to answer). */
  const holds = new Map<string, () => void>();
  const held = (name: string) =>
    new Promise<void>((release) => {
      holds.set(name, release);
    });

  /** A tabward process in its own process group (so that its browser dies with it when it is killed). */
  const start = (args: readonly string[], ready: RegExp): Promise<Running> =>
    startTabward(args, ready, { home, detached: true });

  async function startWorker(): Promise<Running> {
    const worker = await start(
      [
        'worker',
        '--redis',
        redis.url,
        '--concurrency',
        '1',
        '--allow-private',
        // Short, so that a killed worker's run is taken up soon; long enough that a worker on a loaded machine
        // renews its claim in time (2 s was not, once: its run then stalled twice and failed).
        '--lock-duration',
        '5000',
        ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]),
      ],
      /worker taking runs/,
    );
    workers.push(worker);
    return worker;
  }

  /** SIGKILL a whole process group: the worker and the browser it started, as a machine that died. */
  async function killHard(worker: Running): Promise<void> {
    const exited = new Promise((resolve) => worker.child.once('exit', resolve));
    process.kill(-(worker.child.pid ?? 0), 'SIGKILL');
    await exited;
  }

  async function stopWorkers(): Promise<void> {
    await Promise.all(
      workers.splice(0).map(async (worker) => {
        if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
        const exited = new Promise((resolve) => worker.child.once('exit', resolve));
        worker.child.kill('SIGTERM');
        await exited;
      }),
    );
  }

  async function api(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  const readRecipe = (tag: string) => ({
    url: site.url('127.0.0.1', `/report?tag=${tag}`),
    steps: [],
    extract: { fields: { total: '.total' } },
  });
  const writeRecipe = (tag: string) => ({
    recipe: {
      url: site.url('127.0.0.1', `/hooks?tag=${tag}`),
      steps: [
        { action: 'click', selector: '#create', write: true },
        { action: 'waitFor', selector: 'h1' },
      ],
      extract: { fields: { done: 'h1' } },
    },
    confirm: true,
  });
  const seen = (path: string) => site.seen.filter((request) => request.path.startsWith(path));

  async function finished(id: string): Promise<Record<string, unknown>> {
    return waitFor(
      `run ${id} to end`,
      async () => {
        const { json } = await api('GET', `/runs/${id}`);
        return json.state !== 'queued' && json.state !== 'running' && json;
      },
      { timeoutMs: 90_000 },
    );
  }

  before(async () => {
    redis = await startRedis();
    site = await startFixture({
      '/report': async (req, _body, res) => {
        const tag = new URL(req.url ?? '', 'http://x').searchParams.get('tag') ?? '';
        if (tag.startsWith('slow')) await held(tag);
        html(res, `<title>Report</title><p class="total">42 (${tag})</p>`);
      },
      '/hooks': (_req, _body, res) =>
        html(
          res,
          '<title>Hooks</title><form method="post" action="/hooks/create"><button id="create">Add webhook</button></form>',
        ),
      '/hooks/create': async (_req, _body, res) => {
        await held('write');
        html(res, '<title>Done</title><h1>created</h1>');
      },
    });
    serve = await startServe(token, ['--redis', redis.url, '--allow-private', '--deadline', '60000'], {
      home,
      detached: true,
    });
    base = serve.base;
  });
  after(async () => {
    for (const release of holds.values()) release();
    await stopWorkers();
    serve?.child.kill('SIGTERM');
    await site?.close();
    await redis?.stop();
  });

  test('two workers run queued recipes end to end: a waiting client gets the result, an async one a 202 and GET /runs/:id', async () => {
    await Promise.all([startWorker(), startWorker()]);
    const waited = await api('POST', '/run', readRecipe('waited'));
    assert.equal(waited.status, 200, JSON.stringify(waited.json));
    assert.deepEqual(waited.json.data, { total: '42 (waited)' });
    assert.match(String(waited.json.runId), /^r[0-9a-f]+$/);

    const queued = await api('POST', '/run', { recipe: readRecipe('async') }, { prefer: 'respond-async' });
    assert.equal(queued.status, 202, JSON.stringify(queued.json));
    const record = await finished(String(queued.json.id));
    assert.equal(record.state, 'done', JSON.stringify(record));
    assert.deepEqual((record.result as { data: unknown }).data, { total: '42 (async)' });

    const audit = await runCli(['audit', '--redis', redis.url, '--json'], { TABWARD_HOME: home });
    assert.equal(audit.code, 0, audit.stderr);
    const frontEnds = new Set((audit.json as { frontEnd: string }[]).map((entry) => entry.frontEnd));
    assert.ok(
      frontEnds.has('worker'),
      `the workers' records are in the stream: ${audit.stdout.slice(0, 300)}`,
    );
  });

  test('an Idempotency-Key names one run: sent again, the same run; with another request, refused', async () => {
    const key = { 'idempotency-key': 'nightly-report-2026-12-03', prefer: 'respond-async' };
    const first = await api('POST', '/run', { recipe: readRecipe('keyed') }, key);
    const again = await api('POST', '/run', { recipe: readRecipe('keyed') }, key);
    assert.equal(first.json.id, again.json.id);
    await finished(String(first.json.id));
    const replayed = await api(
      'POST',
      '/run',
      { recipe: readRecipe('keyed') },
      { 'idempotency-key': key['idempotency-key'] },
    );
    assert.equal(replayed.status, 200, JSON.stringify(replayed.json));
    assert.equal(seen('/report?tag=keyed').length, 1, 'the page was loaded by one run');
    const other = await api('POST', '/run', { recipe: readRecipe('other') }, key);
    assert.equal(other.status, 422, JSON.stringify(other.json));
    assert.match(String(other.json.error), /already used for another request/);
  });

  test('a queued run can be cancelled: it never starts', async () => {
    await stopWorkers();
    const queued = await api(
      'POST',
      '/run',
      { recipe: readRecipe('cancelled') },
      { prefer: 'respond-async' },
    );
    const cancelled = await api('DELETE', `/runs/${String(queued.json.id)}`);
    assert.equal(cancelled.json.state, 'cancelled', JSON.stringify(cancelled.json));
    await startWorker();
    await api('POST', '/run', readRecipe('after-cancel'));
    assert.equal(seen('/report?tag=cancelled').length, 0);
    assert.equal((await api('GET', `/runs/${String(queued.json.id)}`)).json.state, 'cancelled');
  });

  test('Redis restarted: a run queued before it went down is run after it is back', async () => {
    await stopWorkers();
    const queued = await api('POST', '/run', { recipe: readRecipe('restart') }, { prefer: 'respond-async' });
    assert.equal(queued.status, 202, JSON.stringify(queued.json));
    await redis.restart();
    await startWorker();
    const record = await finished(String(queued.json.id));
    assert.equal(record.state, 'done', JSON.stringify(record));
    const health = await fetch(`${base}/health`);
    assert.equal(health.status, 200);
  });

  test('serve answers 503 while Redis is away, and not a hang', async () => {
    await redis.stop({ keepData: true });
    try {
      const health = await fetch(`${base}/health`, { signal: AbortSignal.timeout(20_000) });
      assert.equal(health.status, 503, await health.text());
      const run = await api('POST', '/run', { recipe: readRecipe('away') }, { prefer: 'respond-async' });
      assert.equal(run.status, 503, JSON.stringify(run.json));
      assert.match(String(run.json.error), /could not be queued/);
    } finally {
      await redis.restart();
    }
  });

  test('a worker SIGKILLed mid-run: a read-only run is finished by another worker, with one result', async () => {
    await stopWorkers();
    const first = await startWorker();
    const queued = await api(
      'POST',
      '/run',
      { recipe: readRecipe('slow-read') },
      { prefer: 'respond-async' },
    );
    await waitFor('the first worker loading the page', () => holds.has('slow-read'));
    await killHard(first);
    holds.delete('slow-read');
    await startWorker();
    // The second worker loads the page again once the first one's claim ran out.
    await waitFor('the second worker loading the page', () => holds.has('slow-read'), { timeoutMs: 60_000 });
    holds.get('slow-read')?.();
    const record = await finished(String(queued.json.id));
    assert.equal(record.state, 'done', JSON.stringify(record));
    assert.equal(record.attempts, 2);
    assert.deepEqual((record.result as { data: unknown }).data, { total: '42 (slow-read)' });
  });

  test('a worker SIGKILLed in the middle of a confirmed write: not run again, reported as outcome unknown', async () => {
    await stopWorkers();
    const first = await startWorker();
    const queued = await api('POST', '/run', writeRecipe('once'), { prefer: 'respond-async' });
    await waitFor('the write on its way', () => holds.has('write'));
    await killHard(first);
    await startWorker();
    const record = await finished(String(queued.json.id));
    assert.equal(record.state, 'unknown', JSON.stringify(record));
    assert.match(String(record.reason), /outcome unknown: .*not run again/);
    await new Promise((done) => setTimeout(done, 3_000));
    assert.equal(seen('/hooks/create').length, 1, 'the write was sent once, never again');
    assert.equal(seen('/hooks?tag=once').length, 1, 'no second run started');
    holds.get('write')?.();
  });
});
