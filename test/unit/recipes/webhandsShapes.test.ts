// Webhands' recipe forms read as tabward's: a literal `secret: true` text (named after its step, bound to the
// recipe's origin, masked by the run's redactor, never described by value), a list of named fields, and the
// response POST /run gives, a superset of Webhands' own.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Secrets } from '../../../src/core/secrets.ts';
import { runSecrets, secretNameOf } from '../../../src/recipes/literalSecrets.ts';
import { parseRecipe, parseRecipeText } from '../../../src/recipes/parseRecipe.ts';
import type { RecipeResult } from '../../../src/recipes/runRecipe.ts';
import { serveResponse } from '../../../src/recipes/serveResponse.ts';
import { describeStep } from '../../../src/recipes/writeGate.ts';

const problem = (raw: unknown) => {
  try {
    parseRecipe(raw);
  } catch (error) {
    return (error as Error).message;
  }
  return 'valid';
};

const password = 'correct-horse-battery';
const webhandsRecipe = {
  url: 'https://seller.example.com/login',
  steps: [
    { action: 'type', selector: '#email', text: 'ops@brand.com' },
    { action: 'type', selector: '#password', text: password, secret: true },
    { action: 'click', selector: '#signin' },
    { action: 'waitFor', selector: '.orders-table' },
    { action: 'goto', url: 'https://seller.example.com/orders?range=7d' },
  ],
  extract: {
    fields: [
      { name: 'heading', selector: 'h1' },
      { name: 'link', selector: 'a', attr: 'href' },
    ],
  },
};

describe('Webhands shapes', () => {
  test('a Webhands recipe parses: the literal secret, and the field list as the map form', () => {
    const recipe = parseRecipe(webhandsRecipe);
    assert.deepEqual(recipe.extract, {
      fields: { heading: { selector: 'h1' }, link: { selector: 'a', attribute: 'href' } },
    });
    const [, secretStep] = recipe.steps;
    assert.ok(secretStep);
    assert.equal(secretNameOf(secretStep, 1), 'steps[1].text');
    assert.equal(describeStep(secretStep), 'type into #password (secret)');
    assert.ok(!JSON.stringify(recipe.steps.map(describeStep)).includes(password));
  });

  test('what a secret step may and may not say', () => {
    const type = (step: Record<string, unknown>) =>
      problem({ url: 'https://a.example/', steps: [{ action: 'type', selector: '#p', ...step }] });
    assert.equal(type({ text: 'abc', secret: true }), 'valid');
    assert.equal(type({ text: 'abc', secret: false }), 'valid');
    assert.equal(type({ secret: 'NAMED' }), 'valid');
    assert.match(type({ secret: true }), /exactly one of text or secret/);
    assert.match(type({ text: 'abc', secret: 'NAMED' }), /exactly one of text or secret/);
    // Too short to mask in page text without mangling it: refused rather than typed half-protected.
    assert.match(
      type({ text: 'ab', secret: true }),
      /steps\[0\]\.text: a secret text needs at least 3 characters/,
    );
  });

  test('a JSON error next to a secret text names its place, never the text around it', () => {
    const text = `{"url": "https://a.example/",\n "steps": [{"action": "type", "selector": "#p", "text": "${password}", "secret": tru}]}`;
    let message = '';
    try {
      parseRecipeText(text, 'login.json');
    } catch (error) {
      message = (error as Error).message;
    }
    assert.equal(message, "login.json:2:95 is not valid JSON: Unexpected token '}'.");
    assert.ok(!message.includes(password.slice(-6)));
  });

  test('field lists: names unique, attr or attribute, at least one field', () => {
    const fields = (list: unknown) => problem({ url: 'https://a.example/', extract: { fields: list } });
    assert.match(
      fields([
        { name: 'a', selector: 'h1' },
        { name: 'a', selector: 'h2' },
      ]),
      /"a" is named twice/,
    );
    assert.match(
      fields([{ name: 'a', selector: 'a', attr: 'href', attribute: 'title' }]),
      /attr or attribute, not both/,
    );
    assert.match(fields([]), /extract/);
    assert.equal(fields([{ name: 'a', selector: 'h1', required: true, all: true }]), 'valid');
  });

  test("the run's secrets mask the literal text, bound to the recipe's origin only", () => {
    const secrets = runSecrets(parseRecipe(webhandsRecipe), new Secrets());
    assert.equal(secrets.get('steps[1].text'), password);
    assert.equal(secrets.redactor.text(`error near ${password}!`), 'error near «redacted»!');
    assert.equal(secrets.placement('steps[1].text', 'https://seller.example.com').placement, 'bound-here');
    assert.equal(secrets.placement('steps[1].text', 'https://evil.example').placement, 'bound-elsewhere');
    // The declared secrets are untouched: the literal lives only as long as the run.
    assert.equal(new Secrets().names().length, 0);
  });

  test("POST /run's answer carries Webhands' fields and tabward's", () => {
    const result: RecipeResult = {
      ok: false,
      mode: 'live',
      data: null,
      screenshot: 'iVBOR',
      steps: [
        { step: 'start', detail: 'goto https://a.example/', ok: true, ms: 5 },
        { step: 0, detail: 'click #x', ok: false, ms: 7, error: 'not there' },
      ],
      warnings: [],
      error: { code: 'not_found', message: 'click #x: not there', step: 0 },
    };
    const answer = serveResponse(result);
    assert.equal(answer.screenshotBase64, 'iVBOR');
    assert.deepEqual(answer.steps, ['goto https://a.example/', 'click #x (failed: not there)']);
    assert.equal(answer.error, 'click #x: not there');
    assert.equal(answer.errorCode, 'not_found');
    assert.equal(answer.errorStep, 0);
    assert.deepEqual(answer.stepLog, result.steps);
  });
});
