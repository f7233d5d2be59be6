// Recipes on the one call path: steps that would write without saying so are refused at run time, however they
// reach the button (Space, a modifier then a bare Enter, a select that submits on change, a goto or a form whose
// address alone reads as a refund, by its path or its query), as are a goto to a sensitive page and any URL that
// is not http(s), from `tabward run` and from `tabward serve`. Assertions are on what the portal recorded.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { demoSecretsFile, usePortal } from '../helpers/recipeSite.ts';
import { type RunningServe, startServe } from '../helpers/tabwardProcess.ts';

describe('recipes: writes the recipe did not declare', () => {
  const portal = usePortal();
  let shop: Fixture;
  before(async () => {
    shop = await startFixture({
      '/orders': (_req, _body, res) =>
        html(
          res,
          `<title>Orders</title><form method="post" action="/orders/17/refund">
          <select name="status" onchange="this.form.submit()"><option>open</option><option>refund</option></select></form>
          <a href="/admin/wipe">Tidy up</a>`,
        ),
      '/admin/wipe': (_req, _body, res) => html(res, '<title>Wiped</title>Wiped'),
      // A write by its address alone: a GET with the refund in its path, a form posting it in its query.
      '/orders/17/refund': (_req, _body, res) => html(res, '<title>Refunded</title>Refunded'),
      '/orders/17': (_req, _body, res) => html(res, '<title>Order</title>Done'),
      '/basket': (_req, _body, res) =>
        html(
          res,
          '<title>Basket</title><form method="post" action="/orders/17?do=refund"><button>Continue</button></form>',
        ),
    });
  });
  after(async () => {
    await shop?.close();
  });

  const login = [
    { action: 'type', selector: 'input[name=username]', text: 'alice' },
    { action: 'type', selector: 'input[name=password]', secret: 'ACME_PASSWORD' },
    { action: 'click', selector: 'button[type=submit]' },
    { action: 'waitFor', selector: 'tr.order' },
  ];
  const refund = 'tr.order button.refund';

  async function refused(steps: object[], extra: string[] = [], url?: string) {
    const file = portal.recipe('acme-refund', (recipe) => {
      recipe.steps = steps;
      if (url) recipe.url = url;
    });
    const result = await portal.run([file, '--secrets', demoSecretsFile, ...extra]);
    assert.notEqual(result.code, 0, JSON.stringify(result.json));
    return result.json.error as { code: string; message: string };
  }

  test('Space on the Refund button, and a modifier then a bare Enter, are refused', async () => {
    const space = await refused([...login, { action: 'press', key: 'Space', selector: refund }]);
    assert.equal(space.code, 'not_allowed', space.message);
    assert.match(space.message, /reads as destructive/);
    const enter = await refused([
      ...login,
      { action: 'press', key: 'Shift', selector: refund },
      { action: 'press', key: 'Enter' },
    ]);
    assert.equal(enter.code, 'not_allowed', enter.message);
    assert.deepEqual(portal.site.writes, [], 'no refund reached the portal');
  });

  test('a select that submits its refund form on change is refused', async () => {
    const error = await refused(
      [{ action: 'select', selector: 'select', value: 'refund' }],
      [],
      shop.url('127.0.0.1', '/orders'),
    );
    assert.equal(error.code, 'not_allowed', error.message);
    assert.deepEqual(shop.writes(), []);
  });

  test('a goto to a sensitive page is refused unless it is a confirmed write step', async () => {
    const rules = join(portal.dir, 'rules.txt');
    writeFileSync(rules, `*://127.0.0.1:${shop.port}/admin/*\n`);
    const start = shop.url('127.0.0.1', '/orders');
    const error = await refused([{ action: 'goto', url: '/admin/wipe' }], ['--rules', rules], start);
    assert.equal(error.code, 'not_allowed', error.message);
    assert.match(error.message, /sensitive/);
    const clicked = await refused([{ action: 'click', selector: 'a' }], ['--rules', rules], start);
    assert.match(clicked.code, /not_allowed|blocked/, clicked.message);
    assert.ok(
      !shop.seen.some((request) => request.path.startsWith('/admin')),
      'the admin page was never reached',
    );
    const confirmed = portal.recipe('acme-refund', (recipe) => {
      recipe.url = start;
      recipe.steps = [{ action: 'goto', url: '/admin/wipe', write: true }];
    });
    const ok = await portal.run([confirmed, '--rules', rules, '--confirm']);
    assert.equal(ok.code, 0, JSON.stringify(ok.json));
    assert.ok(
      shop.seen.some((request) => request.path === '/admin/wipe'),
      'confirmed: it ran',
    );
  });

  test('a goto, or a form, whose address reads destructive by its path or its query is refused unmarked', async () => {
    const start = shop.url('127.0.0.1', '/orders');
    const reached = () =>
      shop.seen.filter((request) => /\/orders\/17(\/refund|\?do=refund)/.test(request.path));
    const goto = await refused([{ action: 'goto', url: '/orders/17/refund?amount=99' }], [], start);
    assert.equal(goto.code, 'not_allowed', goto.message);
    assert.match(goto.message, /reads as destructive/);
    const form = await refused(
      [{ action: 'click', selector: 'button' }],
      [],
      shop.url('127.0.0.1', '/basket'),
    );
    assert.equal(form.code, 'not_allowed', form.message);
    assert.match(form.message, /do=refund/);
    assert.deepEqual(reached(), [], 'the refund was reached');
    const confirmed = portal.recipe('acme-refund', (recipe) => {
      recipe.url = start;
      recipe.steps = [{ action: 'goto', url: '/orders/17/refund?amount=99', write: true }];
    });
    const ok = await portal.run([confirmed, '--confirm']);
    assert.equal(ok.code, 0, JSON.stringify(ok.json));
    assert.equal(reached().length, 1, 'confirmed: it ran');
  });

  test('file:, data: and javascript: URLs are refused, at the start and in a goto', async () => {
    for (const url of ['file:///etc/hostname', 'data:text/html,hi', 'javascript:alert(1)']) {
      const start = await refused([], [], url);
      assert.equal(start.code, 'bad_input', start.message);
      assert.match(start.message, /http and https/);
    }
    const goto = await refused(
      [{ action: 'goto', url: 'file:///etc/hostname' }],
      [],
      shop.url('127.0.0.1', '/orders'),
    );
    assert.equal(goto.code, 'bad_input', goto.message);
  });
});

describe('serve: recipes from the network', () => {
  let server: RunningServe | undefined;
  let base = '';
  const token = 'recipe-attacks-token-0123456789';
  const home = mkdtempSync(join(tmpdir(), 'tabward-recipe-attacks-'));
  before(async () => {
    server = await startServe(token, [], { home });
    base = server.base;
  });
  after(() => {
    server?.child.kill('SIGTERM');
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  const post = async (recipe: object) =>
    fetch(`${base}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipe }),
    });

  test('file: URLs and this machine are refused without --allow-private', async () => {
    const file = await post({ url: 'file:///etc/hostname' });
    const fileBody = (await file.json()) as { error: unknown };
    assert.notEqual(file.status, 200);
    assert.doesNotMatch(JSON.stringify(fileBody), /[a-z0-9-]+\n/, 'the file content never comes back');
    for (const url of ['http://127.0.0.1:9/', 'http://localhost:9/', 'http://[::1]:9/', 'http://10.1.2.3/']) {
      const local = await post({ url });
      assert.equal(local.status, 400, url);
      assert.match(JSON.stringify(await local.json()), /private or loopback/);
    }
  });
});
