// `tabward run` as a user runs it, against the bundled demo site as the portal: login with a secret,
// records across pages, the write gate (no browser started, asserted), the run-time destructive-click refusal,
// dry runs, prompt extraction against a fake model server, evidence, and clean errors.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { DemoSite } from '../../src/demo/demoSite.ts';
import { type FakeModel, startFakeModel } from '../helpers/fakeModel.ts';
import type { Loose } from '../helpers/loose.ts';
import { binPath } from '../helpers/mcpClient.ts';
import { startPortal } from '../helpers/recipeSite.ts';

const secretsFile = new URL('../../examples/recipes/demo.env', import.meta.url).pathname;

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  json: Loose;
}

describe('tabward run', () => {
  let site: DemoSite;
  let dir: string;
  let recipe: (name: string, edit?: (r: Record<string, unknown>) => void) => string;
  let model: FakeModel;
  before(async () => {
    ({ site, dir, recipe } = await startPortal());
    model = await startFakeModel();
  });
  after(async () => {
    await site?.close();
    await model?.close();
  });

  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<Outcome>((resolve) => {
      execFile(
        process.execPath,
        [binPath, 'run', ...args],
        { env: { ...process.env, TABWARD_HOME: dir, ...env }, timeout: 120_000 },
        (error, stdout, stderr) => {
          let json: unknown = null;
          try {
            json = JSON.parse(stdout);
          } catch {
            // not JSON: left null for the assertion to show
          }
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
        },
      );
    });

  test('logs in with a secret and extracts every order across pages; the secret appears nowhere', async () => {
    const shot = join(dir, 'final.png');
    const result = await run([recipe('acme-orders'), '--secrets', secretsFile, '--screenshot', shot]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(result.json.ok, true);
    assert.equal(result.json.data.summary, '12 orders in all');
    assert.equal(result.json.data.orders.length, 12);
    assert.deepEqual(result.json.data.orders[11], {
      id: 'A-1012',
      customer: 'Femi',
      total: '150.00',
      status: 'paid',
    });
    assert.ok(
      result.json.steps.some(
        (step: { detail: string }) => step.detail === 'type into input[name=password] (secret ACME_PASSWORD)',
      ),
    );
    assert.equal(result.json.screenshot, shot);
    assert.deepEqual(
      [...readFileSync(shot).subarray(1, 4)].map((byte) => String.fromCharCode(byte)).join(''),
      'PNG',
    );
    const everything = result.stdout + result.stderr + readFileSync(join(dir, 'audit.jsonl'), 'utf8');
    assert.ok(!everything.includes('demo-password'));
  });

  test('a write recipe without --confirm is refused before any browser starts', async () => {
    const marker = join(dir, 'browser-started');
    const fakeChrome = join(dir, 'fake-chrome.sh');
    writeFileSync(fakeChrome, `#!/bin/sh\ntouch ${marker}\nexit 1\n`);
    chmodSync(fakeChrome, 0o755);
    const refused = await run([recipe('acme-refund'), '--secrets', secretsFile], {
      TABWARD_CHROME: fakeChrome,
    });
    assert.equal(refused.code, 3);
    assert.equal(refused.json.error.code, 'not_allowed');
    assert.match(
      refused.json.error.message,
      /steps\[4\] \(click tr\.order button\.refund \(write\)\) is a write step[\s\S]*--confirm/,
    );
    assert.ok(!existsSync(marker), 'no browser process was started');
    const dry = await run([recipe('acme-refund'), '--dry-run'], { TABWARD_CHROME: fakeChrome });
    assert.equal(dry.code, 0);
    assert.deepEqual(dry.json.data.writeSteps, [4]);
    assert.equal(dry.json.data.needsConfirm, true);
    assert.equal(dry.json.data.plan.length, 7);
    assert.ok(!existsSync(marker), 'dry runs need no browser');
    const broken = await run([recipe('acme-orders'), '--secrets', secretsFile], {
      TABWARD_CHROME: fakeChrome,
    });
    assert.equal(broken.code, 1);
    assert.equal(
      broken.json.error.code,
      'browser_unavailable',
      'a browser that cannot start is a clean error',
    );
  });

  test('a destructive click not marked write is refused at run time, and the portal records no refund', async () => {
    const sneaky = recipe('acme-refund', (parsed) => {
      for (const step of parsed.steps as Record<string, unknown>[]) delete step.write;
    });
    const result = await run([sneaky, '--secrets', secretsFile]);
    assert.equal(result.code, 3);
    assert.match(
      result.json.error.message,
      /steps\[4\]: refused to click "Refund" \(tr\.order button\.refund\): its label "Refund" reads as destructive/,
    );
    assert.equal(result.json.error.step, 4);
    assert.ok(existsSync(result.json.screenshot), 'a screenshot of the failure');
    assert.deepEqual(site.writes, []);
    const confirmed = await run([recipe('acme-refund'), '--secrets', secretsFile, '--confirm']);
    assert.equal(confirmed.json.data.result, 'Refund issued');
    assert.deepEqual(site.writes, ['refund A-1001']);
  });

  test('a failing step reports the steps done and the one that failed', async () => {
    const failing = recipe('acme-orders', (parsed) => {
      (parsed.steps as unknown[]).push({ action: 'waitFor', selector: '#never', timeoutMs: 500 });
    });
    const result = await run([failing, '--secrets', secretsFile]);
    assert.equal(result.code, 1);
    assert.equal(result.json.error.step, 5);
    assert.equal(result.json.steps.at(-1).ok, false);
    assert.equal(result.json.steps.filter((step: { ok: boolean }) => step.ok).length, 6);
    const missing = await run([join(dir, 'nope.json')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /No recipe file/);
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
    assert.deepEqual(good.json.data, { kind: 'json', value: { orders: 5, largestTotal: 62.5 } });
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
  });
});
