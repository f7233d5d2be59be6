// Recipe parsing with errors that name the place, the write gate, step descriptions, fences, the destructive
// click judge, and the run slots.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { destructiveAddress, destructiveReason } from '../../../src/core/destructive.ts';
import type { TabwardError } from '../../../src/core/errors.ts';
import { parseRecipe, parseRecipeText } from '../../../src/recipes/parseRecipe.ts';
import { stripFences } from '../../../src/recipes/promptExtract.ts';
import { recipeJsonSchema } from '../../../src/recipes/recipeSchema.ts';
import { Slots } from '../../../src/recipes/slots.ts';
import { checkWriteGate, describeStep } from '../../../src/recipes/writeGate.ts';

const problem = (raw: unknown) => {
  try {
    parseRecipe(raw);
  } catch (error) {
    return (error as Error).message;
  }
  return 'valid';
};

describe('recipes', () => {
  test("the source article's shape parses", () => {
    const recipe = parseRecipe({
      url: 'https://portal.example/login',
      steps: [
        { action: 'goto', url: '/orders' },
        { action: 'type', selector: '#user', text: 'me' },
        { action: 'click', selector: '#go' },
        { action: 'waitFor', selector: 'table', timeoutMs: 5000 },
      ],
      extract: { fields: { title: 'h1' } },
    });
    assert.equal(recipe.steps.length, 4);
  });

  test('bad recipes get errors that name the place', () => {
    assert.match(problem({ steps: [] }), /url: /);
    assert.match(
      problem({ url: 'x', steps: [{ action: 'hover', selector: 'a' }] }),
      /steps\[0\]\.action: unknown action "hover" \(known: goto, type/,
    );
    assert.match(problem({ url: 'x', steps: [{ action: 'click' }] }), /steps\[0\]\.selector/);
    assert.match(
      problem({ url: 'x', steps: [{ action: 'waitFor', selector: 'a', timeoutMs: 'soon' }] }),
      /steps\[0\]\.timeoutMs/,
    );
    assert.match(
      problem({ url: 'x', steps: [{ action: 'type', selector: 'a', text: 'x', secret: 'Y' }] }),
      /steps\[0\]: give exactly one of text or secret/,
    );
    assert.match(problem({ url: 'x', colour: 'red' }), /unknown field\(s\) colour/);
    assert.match(problem({ url: 'x', extract: { fields: { a: 3 } } }), /extract/);
    assert.throws(() => parseRecipeText('{"url": ', 'r.json'), /r\.json:1:9 is not valid JSON/);
  });

  test('the write gate refuses write steps without confirm, naming them', () => {
    const recipe = parseRecipe({
      url: 'x',
      steps: [
        { action: 'click', selector: '#a' },
        { action: 'click', selector: '#refund', write: true },
      ],
    });
    assert.throws(
      () => checkWriteGate(recipe, false),
      (error: TabwardError) =>
        /steps\[1\] \(click #refund \(write\)\) is a write step[\s\S]*--confirm/.test(error.describe()),
    );
    assert.doesNotThrow(() => checkWriteGate(recipe, true));
  });

  test("step descriptions never carry a secret's value", () => {
    assert.equal(
      describeStep({ action: 'type', selector: '#pw', secret: 'PW' }),
      'type into #pw (secret PW)',
    );
    assert.equal(describeStep({ action: 'type', selector: '#q', text: 'shoes' }), 'type into #q');
  });

  test('fences are stripped from model answers', () => {
    assert.equal(stripFences('```json\n{"a":1}\n```'), '{"a":1}');
    assert.equal(stripFences('```\n[1]\n```'), '[1]');
    assert.equal(stripFences(' {"a":1} '), '{"a":1}');
  });

  test('destructive actions in English and Chinese, by label or by where they send', () => {
    const judge = (name: string, target?: string) =>
      destructiveReason(name, target ? [target] : []) !== undefined;
    for (const name of [
      'Delete',
      'Refund',
      'Cancel order',
      'Confirm shipment',
      '删除',
      '退款',
      '取消订单',
      '确认发货',
    ])
      assert.ok(judge(name), name);
    for (const name of ['Export CSV', 'Next page', 'Search', '导出']) assert.ok(!judge(name), name);
    assert.ok(judge('Go', 'https://seller.example/orders/17/refund'));
    assert.ok(!judge('Go', 'https://seller.example/orders/17'));
  });

  test('an address reads as an action by its verbs, in its path or its query, however it is escaped', () => {
    const acts = (path: string) => destructiveAddress(`https://seller.example${path}`) !== undefined;
    for (const path of [
      '/orders/17/refund?amount=99',
      // A stray % kept the whole address from being decoded.
      '/orders/17/%72efund?note=100%',
      '/orders/17/doRefund',
      '/orders/17?action=refunding',
      '/orders/17/cancel',
      '/orders/17;op=refund',
      '/orders/17?do=refund',
      '/settings/delete-account',
      '/settings/sessions?revoke=all',
      '/x?revoke_all=1',
      '/delete/17',
      '/REFUND',
      '/订单/退款',
    ])
      assert.ok(acts(path), path);
    // Pages to read, whose words share a verb's stem or hold one inside a phrase.
    for (const path of [
      '/account/purchases',
      '/checkout',
      '/settings/password-reset',
      '/orders?sort=reverse',
      '/search?q=remove+stains',
      '/help/how-to-delete-your-account',
      '/transfers',
      '/reports/refunds.csv',
      '/orders/cancelled',
      '/shipping',
    ])
      assert.ok(!acts(path), path);
    assert.equal(destructiveAddress('javascript:void(0)'), undefined, 'a script link is no address');
    // A form is a write already: its address in any words a label could say it in.
    const confirmShipment = 'https://seller.example/orders/17/confirm-shipment';
    assert.equal(destructiveReason('Go', [confirmShipment]), undefined, 'a link there is a page');
    assert.ok(destructiveReason('Go', [{ url: confirmShipment, submitsForm: true }]), 'a form posting there');
  });

  test('slots bound concurrency and the queue, and hand over slots in order', async () => {
    const slots = new Slots(1, 1);
    let release = () => {};
    const first = slots.run(
      () =>
        new Promise<string>((resolve) => {
          release = () => resolve('first');
        }),
    );
    const second = slots.run(async () => 'second');
    assert.equal(await slots.run(async () => 'third'), 'full');
    assert.equal(slots.running, 1);
    assert.equal(slots.queued, 1);
    release();
    assert.deepEqual(await Promise.all([first, second]), ['first', 'second']);
    assert.equal(slots.running, 0);
  });

  test('the published JSON Schema is current and accepts the example recipes', () => {
    const published = JSON.parse(
      readFileSync(new URL('../../../schema/recipe.v1.json', import.meta.url), 'utf8'),
    );
    assert.deepEqual(published, JSON.parse(JSON.stringify(recipeJsonSchema())), 'run npm run schema');
    const validate = new Ajv2020({ strict: false }).compile(published);
    for (const name of ['acme-orders', 'acme-refund', 'acme-summary-prompt']) {
      const example = JSON.parse(
        readFileSync(new URL(`../../../examples/recipes/${name}.json`, import.meta.url), 'utf8'),
      );
      assert.ok(validate(example), `${name}: ${JSON.stringify(validate.errors)}`);
      assert.doesNotThrow(() => parseRecipe(example));
    }
  });
});
