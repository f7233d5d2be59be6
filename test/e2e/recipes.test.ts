// `tabward run` as a user runs it, against the bundled demo site as the portal: login with a secret, records
// across pages, evidence, and the steps done when a run fails.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { demoSecretsFile, usePortal } from '../helpers/recipeSite.ts';

const secretsFile = demoSecretsFile;

describe('tabward run: extraction and failures', () => {
  const portal = usePortal();
  const { recipe, run } = portal;

  test('logs in with a secret and extracts every order across pages; the secret appears nowhere', async () => {
    const shot = join(portal.dir, 'final.png');
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
    const everything = result.stdout + result.stderr + readFileSync(join(portal.dir, 'audit.jsonl'), 'utf8');
    assert.ok(!everything.includes('demo-password'));
  });
  test('a failing step reports the steps done and the one that failed', async () => {
    const failing = recipe('acme-orders', (parsed) => {
      (parsed.steps as unknown[]).push({ action: 'waitFor', selector: '#never', timeoutMs: 500 });
    });
    const result = await run([failing, '--secrets', secretsFile]);
    assert.equal(result.code, 1);
    assert.equal(result.json.error.step, 5);
    // Nothing matches #never: said in the recipe's words, not as a slow page or an MCP tool.
    assert.equal(result.json.error.code, 'not_found');
    assert.match(
      JSON.stringify(result.json.error),
      /waitFor #never: nothing on the page matched it within 500 ms/,
    );
    assert.ok(!JSON.stringify(result.json.error).includes('wait_for'));
    assert.equal(result.json.steps.at(-1).ok, false);
    assert.equal(result.json.steps.filter((step: { ok: boolean }) => step.ok).length, 6);
    const missing = await run([join(portal.dir, 'nope.json')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /No recipe file/);
  });
});
