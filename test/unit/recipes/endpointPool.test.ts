// The grid's bookkeeping without browsers: least-loaded spreading with per-endpoint concurrency, the bounded queue
// and its wait, a failed start moved to another endpoint (never a begun run), backoff doubling to its cap, the probe
// after a backoff, refusals and their answers; and endpoint URLs parsed and redacted.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EndpointPool, type Lease } from '../../../src/recipes/endpointPool.ts';
import {
  type EndpointSpec,
  parseEndpoint,
  redactEndpoint,
  scrubEndpoint,
} from '../../../src/recipes/endpointSpec.ts';

const spec = (name: string, concurrency = 1): EndpointSpec => ({
  url: `ws://${name}:3000/?token=secret-${name}`,
  label: `ws://${name}:3000/?token=***`,
  concurrency,
  kind: 'cdp',
  headers: {},
});

/** A run that holds its lease until told to finish. */
function hold(pool: EndpointPool) {
  let finish: () => void = () => undefined;
  let granted: (lease: Lease) => void = () => undefined;
  const lease = new Promise<Lease>((resolve) => {
    granted = resolve;
  });
  const result = pool.run(
    (given) =>
      new Promise<string>((resolve) => {
        granted(given);
        finish = () => resolve('done');
      }),
  );
  return { lease, result, finish: () => finish() };
}

type Health = { endpoints: Record<string, unknown>[] };
const endpointsOf = (pool: EndpointPool) => (pool.health() as Health).endpoints;

describe('endpoint pool', () => {
  test('runs go to the least loaded endpoint, each up to its own concurrency, then queue, then full', async () => {
    const pool = new EndpointPool([spec('a', 2), spec('b')], { queue: 1, queueWaitMs: 60_000 });
    const runs = [hold(pool), hold(pool), hold(pool)];
    const hosts = await Promise.all(
      runs.map(async (run) => new URL((await run.lease).endpoint.url).hostname),
    );
    assert.deepEqual(hosts, ['a', 'b', 'a']);
    assert.deepEqual(
      endpointsOf(pool).map((each) => [each.running, each.concurrency]),
      [
        [2, 2],
        [1, 1],
      ],
    );
    const queued = hold(pool);
    assert.equal(pool.queued, 1);
    assert.equal(await pool.run(async () => 'never'), 'full');
    assert.equal(pool.answer('full').status, 429);
    runs[1]?.finish();
    assert.equal(
      new URL((await queued.lease).endpoint.url).hostname,
      'b',
      'the freed slot goes to the queue',
    );
    for (const run of [...runs, queued]) run.finish();
    assert.equal(await queued.result, 'done');
    await pool.idle();
    assert.equal(pool.running, 0);
  });

  test('a queued run waits a bounded time, then is told to retry (503)', async () => {
    const pool = new EndpointPool([spec('a')], { queue: 2, queueWaitMs: 20 });
    const first = hold(pool);
    assert.equal(await pool.run(async () => 'never'), 'waited');
    assert.equal(pool.queued, 0);
    assert.match(pool.answer('waited').message, /within 20 ms/);
    assert.equal(pool.answer('waited').status, 503);
    first.finish();
    await first.result;
  });

  test('a start that fails moves to an endpoint the run has not tried; the endpoint is out for its backoff', async () => {
    let clock = 1_000;
    const pool = new EndpointPool([spec('dead'), spec('live', 2)], {
      queue: 4,
      queueWaitMs: 60_000,
      now: () => clock,
    });
    const run = hold(pool);
    const lease = await run.lease;
    assert.equal(new URL(lease.endpoint.url).hostname, 'dead');
    const moved = await lease.failover('connect ECONNREFUSED');
    assert.equal(typeof moved === 'string' ? moved : new URL(moved.url).hostname, 'live');
    lease.started();
    const [dead, live] = endpointsOf(pool);
    assert.deepEqual(
      { ...dead, lastErrorAt: null },
      {
        url: 'ws://dead:3000/?token=***',
        concurrency: 1,
        running: 0,
        up: false,
        state: 'down',
        retryInMs: 30_000,
        consecutiveFailures: 1,
        lastError: 'connect ECONNREFUSED',
        lastErrorAt: null,
        runs: 0,
        startFailures: 1,
      },
    );
    assert.equal(live?.running, 1);
    assert.equal(live?.state, 'up');
    assert.equal(live?.runs, 1);
    // New runs keep off the endpoint that is down while its backoff lasts.
    const next = hold(pool);
    assert.equal(new URL((await next.lease).endpoint.url).hostname, 'live');
    assert.equal(pool.running, 2);
    clock += 29_999;
    assert.equal(endpointsOf(pool)[0]?.retryInMs, 1);
    run.finish();
    next.finish();
    await Promise.all([run.result, next.result]);
  });

  test('after its backoff an endpoint gets one run as its probe; each failed probe doubles the backoff to its cap', async () => {
    let clock = 0;
    const pool = new EndpointPool([spec('flaky', 3), spec('spare', 3)], {
      queue: 4,
      queueWaitMs: 60_000,
      backoffMs: 1_000,
      maxBackoffMs: 3_000,
      now: () => clock,
    });
    const failOnce = async () => {
      const run = hold(pool);
      const lease = await run.lease;
      assert.equal(new URL(lease.endpoint.url).hostname, 'flaky');
      await lease.failover('no answer');
      run.finish();
      await run.result;
    };
    await failOnce();
    const retries: unknown[] = [endpointsOf(pool)[0]?.retryInMs];
    for (let round = 0; round < 3; round++) {
      clock = Math.max(clock, clock + Number(endpointsOf(pool)[0]?.retryInMs));
      // The probe holds the endpoint: a second run does not go there while it runs, though there is room.
      const probe = hold(pool);
      const probeLease = await probe.lease;
      assert.equal(new URL(probeLease.endpoint.url).hostname, 'flaky');
      const other = hold(pool);
      assert.equal(new URL((await other.lease).endpoint.url).hostname, 'spare');
      other.finish();
      await other.result;
      await probeLease.failover('still no answer');
      probe.finish();
      await probe.result;
      retries.push(endpointsOf(pool)[0]?.retryInMs);
    }
    assert.deepEqual(retries, [1_000, 2_000, 3_000, 3_000]);
    assert.equal(endpointsOf(pool)[0]?.consecutiveFailures, 4);
    // A probe that starts brings it back up.
    clock += 3_000;
    const probe = hold(pool);
    (await probe.lease).started();
    assert.deepEqual([endpointsOf(pool)[0]?.state, endpointsOf(pool)[0]?.consecutiveFailures], ['up', 0]);
    probe.finish();
    await probe.result;
  });

  test('runs already on their way when an endpoint fails add no backoff of their own', async () => {
    const pool = new EndpointPool([spec('dead', 2), spec('live', 4)], { queue: 4, queueWaitMs: 60_000 });
    const runs = [hold(pool), hold(pool), hold(pool), hold(pool)];
    const leases = await Promise.all(runs.map((run) => run.lease));
    const onDead = leases.filter((lease) => lease.endpoint.url.includes('dead'));
    assert.equal(onDead.length, 2);
    for (const lease of onDead) await lease.failover('refused');
    assert.equal(endpointsOf(pool)[0]?.consecutiveFailures, 1);
    assert.equal(endpointsOf(pool)[0]?.startFailures, 2);
    assert.equal(endpointsOf(pool)[1]?.running, 4, 'both moved to the live endpoint');
    for (const run of runs) run.finish();
    await Promise.all(runs.map((run) => run.result));
  });

  test('every endpoint down: a new run is refused at once with when to retry; a moved start with nothing left too', async () => {
    let clock = 0;
    const pool = new EndpointPool([spec('a'), spec('b')], {
      queue: 4,
      queueWaitMs: 60_000,
      now: () => clock,
    });
    const run = hold(pool);
    const lease = await run.lease;
    const moved = await lease.failover('refused at a');
    assert.notEqual(typeof moved, 'string');
    assert.equal(await lease.failover('refused at b'), 'down', 'no endpoint left that the run has not tried');
    run.finish();
    await run.result;
    assert.equal(await pool.run(async () => 'never'), 'down');
    clock += 10_500;
    const answer = pool.answer('down');
    assert.equal(answer.status, 503);
    assert.equal(answer.retryAfterS, 20);
    assert.match(
      answer.message,
      /ws:\/\/a:3000\/\?token=\*\*\* \(refused at a\); ws:\/\/b:3000\/\?token=\*\*\* \(refused at b\)/,
    );
    assert.doesNotMatch(answer.message, /secret-/);
  });

  test('a moved start waits ahead of the queue, and gives its slot back if the run ended meanwhile', async () => {
    const pool = new EndpointPool([spec('a'), spec('b')], { queue: 4, queueWaitMs: 60_000 });
    const busy = hold(pool);
    const failing = hold(pool);
    const lease = await failing.lease;
    assert.equal(new URL(lease.endpoint.url).hostname, 'b');
    const queued = hold(pool);
    const moving = lease.failover('refused');
    assert.equal(pool.queued, 2, 'the moved start waits for a, ahead of the queued run');
    // The run's deadline ends it while its start waits: then a frees, and goes to the queued run.
    failing.finish();
    await failing.result;
    busy.finish();
    assert.equal(await moving, 'closed');
    assert.equal(new URL((await queued.lease).endpoint.url).hostname, 'a');
    queued.finish();
    await Promise.all([busy.result, queued.result]);
    assert.equal(pool.running, 0);
    assert.deepEqual(
      endpointsOf(pool).map((each) => each.running),
      [0, 0],
    );
  });

  test('closing turns the queue away and new runs too; idle waits for the running ones', async () => {
    const pool = new EndpointPool([spec('a')], { queue: 2, queueWaitMs: 60_000 });
    const running = hold(pool);
    await running.lease;
    const queued = pool.run(async () => 'queued ran');
    assert.equal(pool.close(), 1);
    assert.equal(await queued, 'closed');
    assert.equal(await pool.run(async () => 'new'), 'closed');
    let idle = false;
    const idled = pool.idle().then(() => {
      idle = true;
    });
    await Promise.resolve();
    assert.equal(idle, false);
    running.finish();
    await idled;
    assert.equal(pool.running, 0);
  });
});

describe('endpoint URLs', () => {
  test('URL or URL#concurrency=N; anything else after # and other schemes are refused, naming no credential', () => {
    assert.deepEqual(parseEndpoint('ws://grid:3000?token=abc123#concurrency=4', 2), {
      kind: 'cdp',
      url: 'ws://grid:3000?token=abc123',
      label: 'ws://grid:3000/?token=***',
      concurrency: 4,
      headers: {},
    });
    assert.equal(parseEndpoint('ws://127.0.0.1:9222/devtools/browser/x', 2).concurrency, 2);
    for (const bad of [
      'ws://grid?token=abc123#concurrency=0',
      'ws://grid?token=abc123#workers=2',
      'ws://grid?token=abc123#header=abc123',
      'ws://grid?token=abc123#header=Bad%20Name:abc123',
      'ws://grid?token=abc123#header=X:abc123%0D%0AEvil:1',
    ])
      assert.throws(
        () => parseEndpoint(bad, 1),
        (error: Error) => /after # tabward reads/.test(error.message) && !error.message.includes('abc123'),
        bad,
      );
    assert.throws(
      () => parseEndpoint('ftp://grid?token=abc123', 1),
      /ftp: is not a browser endpoint's scheme/,
    );
    assert.throws(
      () => parseEndpoint('not a url abc123', 1),
      (error: Error) => /not a URL/.test(error.message) && !error.message.includes('abc123'),
    );
  });

  test('selenium+http(s):// is a Selenium Grid, playwright+ws(s):// a Playwright server; headers after #', () => {
    assert.deepEqual(parseEndpoint('selenium+http://grid:4444/wd/hub#concurrency=3', 1), {
      kind: 'selenium',
      url: 'http://grid:4444/wd/hub',
      label: 'selenium+http://grid:4444/wd/hub',
      concurrency: 3,
      headers: {},
    });
    assert.deepEqual(
      parseEndpoint('playwright+wss://pw.example/abc#header=Authorization:Bearer%20s3cret&concurrency=2', 1),
      {
        kind: 'playwright',
        url: 'wss://pw.example/abc',
        label: 'playwright+wss://pw.example/abc',
        concurrency: 2,
        headers: { Authorization: 'Bearer s3cret' },
      },
    );
    const two = parseEndpoint(
      'wss://b.example#header=X-Api-Key:k3y&header=Authorization:Basic%20dXM6cHc%3D',
      1,
    );
    assert.deepEqual(two.headers, { 'X-Api-Key': 'k3y', Authorization: 'Basic dXM6cHc=' });
    assert.equal(
      scrubEndpoint('401 for key k3y with Basic dXM6cHc= (dXM6cHc%3D)', two),
      '401 for key *** with *** (***)',
    );
  });

  test('labels hide user info and every query value; a connection error is scrubbed of them', () => {
    assert.equal(
      redactEndpoint('wss://customer-1:pa55word@grid.example:9222/chrome?token=t0k3n&stealth=true'),
      'wss://***:***@grid.example:9222/chrome?token=***&stealth=***',
    );
    const endpoint = parseEndpoint('ws://grid:3000/?token=s3cr%2Ft&launch=x', 1);
    const said = scrubEndpoint(
      'connectOverCDP: WebSocket error: ws://grid:3000/?token=s3cr%2Ft&launch=x 401; token s3cr/t',
      endpoint,
    );
    assert.equal(
      said,
      'connectOverCDP: WebSocket error: ws://grid:3000/?token=***&launch=*** 401; token ***',
    );
  });
});
