// Prompt extraction through a local fake model server speaking the OpenAI and Anthropic protocols: a fenced
// JSON answer, an unparseable one, a schema miss, no key at all, and the model named in each answer (a cheap one
// unless TABWARD_EXTRACT_MODEL or TABWARD_MODEL names another).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type FakeModel, startFakeModel } from '../helpers/fakeModel.ts';
import { demoSecretsFile, usePortal } from '../helpers/recipeSite.ts';

const secretsFile = demoSecretsFile;

describe('tabward run: prompt extraction', () => {
  const portal = usePortal();
  const { recipe, run } = portal;
  let model: FakeModel;
  before(async () => {
    model = await startFakeModel();
  });
  after(async () => {
    await model?.close();
  });

  test('prompt extraction through a fake model: JSON in fences, an unparseable answer, a schema miss, no key', async () => {
    const env = {
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: model.baseURL,
      TABWARD_MODEL: 'openai:test-model',
    };
    const file = recipe('acme-summary-prompt');
    model.answer(
      '```json\n{"orders": 5, "largestTotal": 62.5}\n```',
      'I think there are five orders.',
      '{"orders": "five"}',
    );
    const good = await run([file, '--secrets', secretsFile], env);
    assert.deepEqual(good.json.data, {
      kind: 'json',
      value: { orders: 5, largestTotal: 62.5 },
      model: 'openai:test-model',
    });
    const sent = model.requests.at(-1);
    assert.equal(sent?.auth, 'Bearer sk-test');
    assert.match(JSON.stringify(sent?.body), /A-1001/, 'the page text went to the model');
    assert.ok(!JSON.stringify(sent?.body).includes('demo-password'));
    const prose = await run([file, '--secrets', secretsFile], env);
    assert.equal(prose.json.data.kind, 'unparsed');
    assert.equal(prose.json.data.text, 'I think there are five orders.');
    const wrong = await run([file, '--secrets', secretsFile], env);
    assert.equal(wrong.json.data.kind, 'invalid');
    assert.match(wrong.json.data.errors.join(' '), /\/orders must be integer/);
    const noKey = await run([file, '--secrets', secretsFile], { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' });
    assert.equal(noKey.json.data.kind, 'no-model');
    assert.match(noKey.json.data.text, /12 orders in all/);
    assert.match(noKey.json.data.note, /ANTHROPIC_API_KEY/);
    model.answer('{"orders": 5, "largestTotal": 62.5}');
    const anthropic = await run([file, '--secrets', secretsFile], {
      ANTHROPIC_API_KEY: 'ak-test',
      ANTHROPIC_BASE_URL: model.baseURL,
      OPENAI_API_KEY: '',
    });
    assert.equal(anthropic.json.data.kind, 'json');
    assert.equal(model.requests.at(-1)?.path, '/v1/messages');
    // With no model named, extraction takes the cheap one (Haiku-class), and the result says which.
    assert.equal(anthropic.json.data.model, 'anthropic:claude-haiku-4-5');
    assert.equal(model.requests.at(-1)?.body.model, 'claude-haiku-4-5');
    model.answer('{"orders": 5}');
    const chosen = await run([file, '--secrets', secretsFile], {
      ANTHROPIC_API_KEY: 'ak-test',
      ANTHROPIC_BASE_URL: model.baseURL,
      OPENAI_API_KEY: '',
      TABWARD_EXTRACT_MODEL: 'anthropic:claude-sonnet-4-5',
    });
    assert.equal(chosen.json.data.model, 'anthropic:claude-sonnet-4-5');
  });
});
