// `tabward serve`: the HTTP API's auth, Host check, limits, validation errors, the write gate, concurrency
// over a pool of contexts, and per-run deadlines.

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { DemoSite } from '../../src/demo/demoSite.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { jsonOf } from '../helpers/loose.ts';
import { startPortal } from '../helpers/recipeSite.ts';
import { runCli } from '../helpers/runCli.ts';
import { type RunningServe, startServe } from '../helpers/tabwardProcess.ts';
import { tokenFile } from '../helpers/tokenFile.ts';
import { waitFor } from '../helpers/waitFor.ts';

const secretsFile = new URL('../../examples/recipes/demo.env', import.meta.url).pathname;
const token = 'test-token-0123456789';

/** `tabward serve` on a free port with the portal's home: one run at a time, one queued. */
async function startPortalServe(
  dir: string,
  extra: readonly string[],
): Promise<{ server: ChildProcess; base: string }> {
  const { child, base } = await startServe(
    token,
    // The portal is on 127.0.0.1.
    [
      '--concurrency',
      '1',
      '--queue',
      '1',
      '--max-body',
      '20000',
      '--secrets',
      secretsFile,
      '--allow-private',
      ...extra,
    ],
    { home: dir },
  );
  return { server: child, base };
}

describe('tabward serve', { timeout: 180_000 }, () => {
  let site: DemoSite;
  let server: ChildProcess;
  let base = '';
  // A second server whose runs have a short deadline: only the test of deadlines and queueing uses it, so that
  // every other run has the default deadline (2 minutes) and never races it on a loaded machine.
  let hurried: ChildProcess;
  let hurriedBase = '';
  let recipe: (name: string, edit?: (r: Record<string, unknown>) => void) => string;

  before(async () => {
    let dir: string;
    ({ site, dir, recipe } = await startPortal());
    [{ server, base }, { server: hurried, base: hurriedBase }] = await Promise.all([
      startPortalServe(dir, []),
      startPortalServe(dir, ['--deadline', '9000']),
    ]);
  });
  after(async () => {
    server?.kill('SIGTERM');
    hurried?.kill('SIGTERM');
    await site?.close();
  });

  const load = (name: string, edit?: (r: Record<string, unknown>) => void) =>
    JSON.parse(readFileSync(recipe(name, edit), 'utf8'));
  const post = (body: unknown, auth = `Bearer ${token}`, to = base) =>
    fetch(`${to}/run`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  test('health and schema need no token; runs do', async () => {
    assert.deepEqual(await jsonOf(await fetch(`${base}/health`)), {
      ok: true,
      running: 0,
      queued: 0,
      concurrency: 1,
    });
    const schema = await jsonOf(await fetch(`${base}/schema`));
    assert.equal(schema.title, 'tabward recipe, version 1');
    assert.equal((await post({ recipe: load('acme-orders') }, 'Bearer wrong')).status, 401);
    assert.equal((await post({ recipe: load('acme-orders') }, '')).status, 401);
  });

  test('a run returns the data; the secret is typed but never returned', async () => {
    const response = await post({ recipe: load('acme-orders'), screenshot: true });
    assert.equal(response.status, 200);
    const result = await jsonOf(response);
    assert.equal(result.data.orders.length, 12);
    assert.match(result.screenshotBase64, /^iVBOR/, 'a base64 PNG');
    assert.ok(!JSON.stringify(result).includes('demo-password'));
  });

  test('bad input: not JSON, no recipe, a bad recipe named by place, a huge body, a wrong Host', async () => {
    assert.equal((await post('{nope')).status, 400);
    assert.equal((await post({ steps: [] })).status, 400);
    const bad = await post({ recipe: { url: 'x', steps: [{ action: 'click', selector: '' }] } });
    assert.equal(bad.status, 400);
    assert.match((await jsonOf(bad)).error, /steps\[0\]\.selector/);
    const huge = await post({ recipe: load('acme-orders'), padding: 'x'.repeat(50_000) });
    assert.equal(huge.status, 413);
    const hostStatus = await new Promise<number>((resolve) => {
      const url = new URL(`${base}/health`);
      request(
        { host: url.hostname, port: url.port, path: url.pathname, headers: { host: 'evil.example' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      ).end();
    });
    assert.equal(hostStatus, 403);
  });

  test('a web page cannot post: JSON only (415 for text/plain and forms), a foreign Origin is 403', async () => {
    const body = JSON.stringify({ recipe: load('acme-refund'), confirm: true });
    const send = (headers: Record<string, string>) =>
      fetch(`${base}/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, ...headers },
        body,
      });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])
      assert.equal((await send({ 'content-type': type })).status, 415, type);
    // fetch sends text/plain for a string body without a type: refused too.
    assert.equal(
      (await fetch(`${base}/run`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body }))
        .status,
      415,
    );
    const foreign = await send({ 'content-type': 'application/json', origin: 'http://evil.example' });
    assert.equal(foreign.status, 403);
    assert.match((await jsonOf(foreign)).error, /Origin/);
    assert.equal((await fetch(`${base}/health`, { headers: { origin: 'null' } })).status, 403);
    assert.deepEqual(site.writes, [], 'none of these reached the site');
    const fromItself = await fetch(`${base}/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json; charset=utf-8',
        origin: base,
      },
      body: JSON.stringify({ steps: [] }),
    });
    assert.equal(fromItself.status, 400, 'JSON with a charset, from the server itself, is read (and judged)');
  });

  test("a recipe's page never reaches serve's own port, even with --allow-private", async () => {
    const own = await post({ recipe: { url: `${base}/health`, extract: { fields: { body: 'body' } } } });
    const answer = await jsonOf(own);
    assert.equal(answer.ok, false, JSON.stringify(answer));
    assert.match(JSON.stringify(answer), /tabward's own local servers/);
  });

  test('the write gate answers 403 without confirm, and runs with it', async () => {
    const refused = await post({ recipe: load('acme-refund') });
    assert.equal(refused.status, 403);
    const answer = await jsonOf(refused);
    assert.match(answer.error, /is a write step.*resend with confirm:true/);
    assert.equal(answer.errorCode, 'not_allowed');
    assert.deepEqual(site.writes, []);
    const confirmed = await post({ recipe: load('acme-refund'), confirm: true });
    assert.equal(confirmed.status, 200);
    assert.deepEqual(site.writes, ['refund A-1001']);
  });

  test('one run at a time, one queued, the rest turned away; a run over its deadline is stopped', async () => {
    const slow = load('acme-orders', (parsed) => {
      (parsed.steps as unknown[]).push({ action: 'waitFor', selector: '#never', timeoutMs: 60_000 });
    });
    const health = async () => jsonOf(await fetch(`${hurriedBase}/health`));
    const started = Date.now();
    const first = post({ recipe: slow }, undefined, hurriedBase);
    await waitFor('the slow run to hold the only slot', async () => (await health()).running === 1);
    // One page load, live: queued behind the slow one, it runs in the browser that run was stopped in, and is
    // far inside the short deadline even on a loaded machine.
    const second = post({ recipe: { url: load('acme-orders').url } }, undefined, hurriedBase);
    await waitFor('the dry run to be queued', async () => (await health()).queued === 1);
    const third = await post({ recipe: load('acme-orders') }, undefined, hurriedBase);
    assert.equal(third.status, 429);
    const timedOut = await first;
    assert.equal(timedOut.status, 504);
    assert.match(JSON.stringify(await jsonOf(timedOut)), /"timeout"/, 'its error code');
    assert.ok(Date.now() - started < 60_000, 'stopped at its deadline, not at the step timeout');
    const queued = await second;
    const queuedAnswer = await jsonOf(queued);
    assert.equal(
      queued.status,
      200,
      `the queued run ran after the slow one: ${JSON.stringify(queuedAnswer)}`,
    );
    assert.equal(queuedAnswer.ok, true);
  });
});

describe('serve tokens', { timeout: 60_000 }, () => {
  const home = mkdtempSync(join(tmpdir(), 'tabward-serve-token-'));
  const serveOnce = (args: string[], env: Record<string, string>) =>
    runCli(['serve', '--port', '0', ...args], { TABWARD_HOME: home, ...env });

  test('an empty or short TABWARD_SERVE_TOKEN or --token-file is refused, never read as "no auth"', async () => {
    const readableByAll = tokenFile('z'.repeat(32));
    chmodSync(readableByAll, 0o644);
    for (const [args, env, says] of [
      [[], { TABWARD_SERVE_TOKEN: '' }, /TABWARD_SERVE_TOKEN is empty/],
      [[], { TABWARD_SERVE_TOKEN: '   ' }, /TABWARD_SERVE_TOKEN is empty/],
      [[], { TABWARD_SERVE_TOKEN: 'short-token' }, /TABWARD_SERVE_TOKEN is 11 characters; at least 16/],
      [['--token-file', tokenFile('')], {}, /--token-file file is empty/],
      [['--token-file', tokenFile('abc')], {}, /--token-file file is 3 characters/],
      [['--token-file', join(home, 'none')], {}, /--token-file: no file at/],
      [
        ['--token-file', readableByAll],
        {},
        /can be read by other users \(mode 644\)\. Make it yours alone: chmod 600/,
      ],
      // A command line is every local user's (ps): an attack review ran recipes with a token read there.
      [
        ['--token', 'x'.repeat(32)],
        {},
        /--token puts the token on the command line, which every user of this machine can read \(ps\)\. Put it in TABWARD_SERVE_TOKEN, or in a file/,
      ],
    ] as const) {
      const out = await serveOnce([...args], { ...env });
      assert.equal(out.code, 2, `${JSON.stringify(env)} ${args.join(' ')}: ${out.stderr}`);
      assert.match(out.stderr, says);
      assert.doesNotMatch(out.stderr, /serving recipes/);
    }
    assert.equal(statSync(home).mode & 0o777, 0o700);
  });
});

describe("serve: one run's page cannot take another run down", { timeout: 120_000 }, () => {
  let site: Fixture;
  let serve: RunningServe;

  before(async () => {
    const port = (host: string | undefined) => (host ?? '').split(':')[1] ?? '';
    site = await startFixture({
      '/slow': (_req, _body, res) =>
        html(
          res,
          "<title>Slow</title><p>working</p><script>setTimeout(() => { const d = document.createElement('p'); d.id = 'done'; d.textContent = 'done'; document.body.append(d); }, 6000);</script>",
        ),
      // Frames that alert as they are removed, in waves racing the run's dismissal of dialogs (a dialog whose frame
      // is gone crashes Chromium when answered or when its tab closes): cross-site frames, and frames of the page's
      // own site inside cross-site ones.
      '/race': (req, _body, res) =>
        html(
          res,
          `<title>Race</title><div id="box"></div><script>
          const port = ${JSON.stringify(port(req.headers.host))};
          const one = (src) => { const f = document.createElement('iframe'); f.src = src; f.onload = () => setTimeout(() => f.remove(), 50 + Math.floor(Math.random() * 40)); box.append(f); };
          for (let round = 0; round < 4; round++) setTimeout(() => { for (let i = 0; i < 8; i++) one('http://o' + (round * 100 + i) + '.example:' + port + (i % 2 ? '/alerting' : '/middle')); }, round * 700);
          setTimeout(() => { const d = document.createElement('p'); d.id = 'done'; d.textContent = 'done'; document.body.append(d); }, 3500);
          </script>`,
        ),
      '/middle': (req, _body, res) =>
        html(res, `<iframe src="http://evil.example:${port(req.headers.host)}/alerting"></iframe>`),
      '/alerting': (_req, _body, res) =>
        html(res, "<p>frame</p><script>setTimeout(() => alert('from a frame'), 50);</script>"),
    });
    serve = await startServe(
      token,
      ['--concurrency', '2', '--allow-private', ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg])],
      { home: mkdtempSync(join(tmpdir(), 'tabward-serve-race-')) },
    );
  });
  after(async () => {
    serve?.child.kill('SIGTERM');
    await site?.close();
  });

  test("a page whose frames' dialogs outlive their frames takes no other run down", async () => {
    const run = (recipe: unknown) =>
      fetch(`${serve.base}/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipe }),
      }).then(async (response) => ({ status: response.status, body: await jsonOf(response) }));
    const honest = run({
      version: 1,
      name: 'honest',
      url: site.url('shop.example', '/slow'),
      steps: [{ action: 'waitFor', selector: '#done', timeoutMs: 30_000 }],
    });
    await new Promise((done) => setTimeout(done, 1_000));
    await run({
      version: 1,
      name: 'hostile',
      url: site.url('evil.example', '/race'),
      steps: [{ action: 'waitFor', selector: '#done', timeoutMs: 8_000 }],
    });
    const finished = await honest;
    assert.equal(finished.status, 200, JSON.stringify(finished.body).slice(0, 800));
    assert.equal(finished.body.ok, true, JSON.stringify(finished.body).slice(0, 800));
  });
});
