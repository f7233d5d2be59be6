// `tabward run --check` on the demo portal: it signs in (what an unconfirmed run does anyway), then stops at the
// refund button without clicking it, and reports its role, name, form action and why it looks like a write.
// A refund step marked `write` passes; the same step unmarked exits 1. The portal records no refund either way.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { demoSecretsFile, usePortal } from '../helpers/recipeSite.ts';

describe('tabward run --check', () => {
  const portal = usePortal();
  const { recipe, run } = portal;

  test('a marked refund: its target is reported, nothing is refunded, exit 0', async () => {
    const checked = await run([recipe('acme-refund'), '--check', '--secrets', demoSecretsFile]);
    assert.equal(checked.code, 0, checked.stderr);
    const { steps, unmarkedWrites, ok, mode } = checked.json;
    assert.equal(mode, 'check');
    assert.equal(ok, true);
    assert.deepEqual(unmarkedWrites, []);
    assert.deepEqual(
      steps.map((s: { outcome: string }) => s.outcome),
      ['performed', 'performed', 'performed', 'performed', 'checked, not performed', 'not reached'],
    );
    // The sign-in button: inspected, harmless, performed.
    assert.equal(steps[2].target.role, 'button');
    assert.equal(steps[2].target.name, 'Sign in');
    assert.match(steps[2].target.formAction, /\/login\?next=/);
    assert.equal(steps[2].looksLikeWrite, undefined);
    const refund = steps[4];
    assert.deepEqual(
      { role: refund.target.role, name: refund.target.name, marked: refund.marked },
      { role: 'button', name: 'Refund', marked: true },
    );
    assert.match(refund.target.formAction, /\/portal\/refund$/);
    assert.match(refund.looksLikeWrite, /label "Refund" reads as destructive/);
    assert.match(
      checked.stderr,
      /! steps\[4\] click tr\.order button\.refund \(write\) → button "Refund", submits to \S+\/portal\/refund; looks like a write/,
    );
    assert.deepEqual(portal.site.writes, [], 'nothing was refunded');
  });

  test('the same refund not marked write: reported as an unmarked write, exit 1, still not clicked', async () => {
    const file = recipe('acme-refund', (r) => {
      const steps = r.steps as Record<string, unknown>[];
      delete steps[4]?.write;
    });
    const checked = await run([file, '--check', '--secrets', demoSecretsFile]);
    assert.equal(checked.code, 1, checked.stderr);
    assert.equal(checked.json.ok, false);
    assert.deepEqual(checked.json.unmarkedWrites, [4]);
    assert.equal(checked.json.steps[4].problem, 'looks like a write but is not marked "write": true');
    assert.match(
      checked.stderr,
      /✗ steps\[4\] click tr\.order button\.refund → button "Refund".*not marked "write": true/,
    );
    assert.deepEqual(portal.site.writes, []);
  });

  test("a recipe's selector cannot repaint the check's report: escapes are shown as marks", async () => {
    // --check is how one reads someone else's recipe before --confirm; an attack review's selector (a list whose
    // second half matches nothing) erased its own line and painted "✓ … performed" over an unmarked write.
    const paint =
      "i[title='\u001b[2K\u001b[G✓ steps[4] click #save → button Save — performed\u001b[?7l\u009b999C']";
    const file = recipe('acme-refund', (r) => {
      const steps = r.steps as Record<string, unknown>[];
      const step = steps[4] as Record<string, unknown>;
      step.selector = `${String(step.selector)}, ${paint}`;
      delete step.write;
    });
    const checked = await run([file, '--check', '--secrets', demoSecretsFile]);
    assert.equal(checked.code, 1, checked.stderr);
    const raw = [...checked.stderr].find((char) => /[\p{Cc}\p{Zl}\p{Zp}]/u.test(char) && char !== '\n');
    assert.equal(raw, undefined, `stderr carries a raw control character: ${JSON.stringify(raw)}`);
    assert.match(
      checked.stderr,
      /✗ steps\[4\] click tr\.order button\.refund, i\[title='<U\+001B>\[2K<U\+001B>\[G✓/,
    );
    assert.deepEqual(portal.site.writes, []);
  });

  test('a read-only recipe walks to the end and passes', async () => {
    const checked = await run([recipe('acme-orders'), '--check', '--secrets', demoSecretsFile]);
    assert.equal(checked.code, 0, checked.stderr);
    assert.ok(checked.json.steps.every((s: { outcome: string }) => s.outcome === 'performed'));
  });
});
