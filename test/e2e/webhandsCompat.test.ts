// A Webhands user's requests, written exactly in Webhands' shapes, against the real `tabward serve`: the token in
// x-webhands-token, {confirm, recipe}, a password step `{action: "type", text, secret: true}`, extraction as a
// list of named fields, and the answers a Webhands client reads (ok, mode, data, screenshotBase64, steps as
// lines, error as a message: "…resend with confirm:true…" for a write sent without it). The literal secret is
// typed on the recipe's own site only, and appears in no answer, log line or audit record.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, redirect, startFixture } from '../helpers/fixtureServer.ts';
import { jsonOf } from '../helpers/loose.ts';
import { binPath } from '../helpers/mcpClient.ts';
import { tokenFile } from '../helpers/tokenFile.ts';

const token = 'webhands-token-0123456789';
const password = 'Tr0ub4dor&3-horse';

describe('Webhands clients against tabward serve', () => {
  const home = mkdtempSync(join(tmpdir(), 'tabward-webhands-'));
  let site: Fixture;
  let server: ChildProcess;
  let base = '';
  let stderr = '';

  before(async () => {
    site = await startFixture({
      'GET /login': (_req, _body, res) =>
        html(
          res,
          '<title>Seller login</title><form method="post" action="/login">' +
            '<input id="email" name="email"><input id="password" name="password" type="password">' +
            '<button id="signin">Sign in</button></form>',
        ),
      'POST /login': (_req, body, res) => {
        const form = new URLSearchParams(body);
        if (form.get('password') !== password) return html(res, '<h1>Wrong password</h1>', 401);
        redirect(res, '/orders', { 'set-cookie': 'session=ok; Path=/' });
      },
      // A careless page that shows the password back: extraction must not hand it on.
      '/orders': (req, _body, res) =>
        req.headers.cookie?.includes('session=ok')
          ? html(
              res,
              `<h1>Orders</h1><p class="who">Signed in with ${password}</p>` +
                '<table class="orders-table"><tr><td><a href="/orders/A-1">A-1</a></td></tr></table>' +
                '<button id="refund">Refund</button>',
            )
          : redirect(res, '/login'),
      // The recipe's site sends its login elsewhere: another origin, where the literal secret must not go.
      '/hop': (req, _body, res) => redirect(res, `http://localhost:${req.socket.localPort}/login`),
    });
    server = spawn(
      process.execPath,
      [
        binPath,
        'serve',
        '--port',
        '0',
        '--token-file',
        tokenFile(token),
        '--allow-private',
        '--deadline',
        '60000',
      ],
      { env: { ...process.env, TABWARD_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(stderr)), 60_000);
      server.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const url = /serving recipes at (\S+)/.exec(stderr)?.[1];
        if (url) {
          clearTimeout(timer);
          resolve(url);
        }
      });
    });
  });
  after(async () => {
    server?.kill('SIGTERM');
    await site?.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** POST /run as Webhands' README shows it. */
  const post = (body: unknown, headers: Record<string, string> = { 'x-webhands-token': token }) =>
    fetch(`${base}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const login = (url: string) => ({
    url,
    steps: [
      { action: 'type', selector: '#email', text: 'ops@brand.com' },
      { action: 'type', selector: '#password', text: password, secret: true },
      { action: 'click', selector: '#signin' },
      { action: 'waitFor', selector: '.orders-table' },
    ],
    extract: {
      fields: [
        { name: 'heading', selector: 'h1' },
        { name: 'who', selector: '.who' },
        { name: 'first', selector: '.orders-table a', attr: 'href' },
      ],
    },
  });
  const neverShown = (text: string, where: string) =>
    assert.ok(!text.includes(password), `the secret text appeared in ${where}`);

  test('a login recipe with a secret: true password runs, answers in Webhands shape, and never shows it', async () => {
    const response = await post({ confirm: true, recipe: login(site.url('127.0.0.1', '/login')) });
    const body = await jsonOf(response);
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.equal(body.ok, true);
    assert.equal(body.mode, 'live');
    assert.equal(body.data.heading, 'Orders');
    assert.equal(body.data.who, 'Signed in with «redacted»');
    assert.equal(body.data.first, site.url('127.0.0.1', '/orders/A-1'));
    assert.equal(body.screenshotBase64, null, 'a screenshot only when asked for');
    assert.deepEqual(body.steps, [
      `goto ${site.url('127.0.0.1', '/login')}`,
      'type into #email',
      'type into #password (secret)',
      'click #signin',
      'wait for .orders-table',
      'extract fields heading, who, first',
    ]);
    assert.equal(body.error, null);
    // tabward's own fields beside Webhands': timings per step, the error's code, warnings.
    assert.equal(body.stepLog.length, 6);
    assert.equal(body.errorCode, null);
    assert.deepEqual(body.warnings, []);
    assert.ok(
      site.seen.some((seen) => seen.method === 'POST' && seen.body.includes(encodeURIComponent(password))),
      'the password was typed into the login form',
    );
    neverShown(JSON.stringify(body), 'the answer');
    neverShown(readFileSync(join(home, 'audit.jsonl'), 'utf8'), 'the audit log');
    neverShown(stderr, "serve's output");
  });

  test('a write sent without confirm is refused before any browser step, in Webhands words', async () => {
    const before = site.seen.length;
    const recipe = {
      ...login(site.url('127.0.0.1', '/login')),
      steps: [...login('').steps, { action: 'click', selector: '#refund', write: true }],
    };
    const response = await post({ recipe });
    assert.equal(response.status, 403);
    const body = await jsonOf(response);
    assert.equal(body.ok, false);
    assert.equal(body.mode, 'live');
    assert.deepEqual(body.steps, []);
    assert.match(
      body.error,
      /steps\[4\] \(click #refund \(write\)\) is a write step.*resend with confirm:true/,
    );
    assert.equal(site.seen.length, before, 'the site saw nothing');
    neverShown(JSON.stringify(body), 'the refusal');
  });

  test("the secret text is typed on the recipe's own origin only", async () => {
    const posts = site.writes().length;
    const response = await post({ confirm: true, recipe: login(site.url('127.0.0.1', '/hop')) });
    const body = await jsonOf(response);
    assert.equal(response.status, 403, JSON.stringify(body));
    assert.equal(body.errorCode, 'not_allowed');
    assert.equal(body.errorStep, 1);
    assert.match(
      body.error,
      /^steps\[1\]: refused to type its secret text on http:\/\/localhost:\d+: a "secret": true text is typed only on the recipe's own origin \(http:\/\/127\.0\.0\.1:\d+\)\./,
    );
    assert.equal(site.writes().length, posts, 'no login was posted');
    neverShown(JSON.stringify(body), 'the answer');
    neverShown(readFileSync(join(home, 'audit.jsonl'), 'utf8'), 'the audit log');
  });

  test('the bearer form works too; a wrong token is refused; an unreachable site answers 502 (network)', async () => {
    const wrong = await post(
      { recipe: { url: site.url('127.0.0.1', '/login') } },
      { 'x-webhands-token': 'nope' },
    );
    assert.equal(wrong.status, 401);
    // A port that was just let go: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await post(
      { recipe: { url: `http://127.0.0.1:${port}/` } },
      { authorization: `Bearer ${token}` },
    );
    assert.equal(unreachable.status, 502);
    const body = await jsonOf(unreachable);
    assert.equal(body.errorCode, 'network');
    assert.match(body.error, /net::ERR_(CONNECTION_REFUSED|EMPTY_RESPONSE).*could not be reached/);
  });
});
