// `tabward run` and writes: the gate refuses a write recipe before any browser starts (asserted with a fake
// browser that records being started), dry runs need no browser, and a destructive click not marked write is
// refused at run time while the portal records no refund.

import assert from 'node:assert/strict';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { demoSecretsFile, usePortal } from '../helpers/recipeSite.ts';

const secretsFile = demoSecretsFile;

describe('tabward run: writes', () => {
  const portal = usePortal();
  const { recipe, run } = portal;

  test('a write recipe without --confirm is refused before any browser starts', async () => {
    const marker = join(portal.dir, 'browser-started');
    const fakeChrome = join(portal.dir, 'fake-chrome.sh');
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
    // A dry run checks the secrets a live one would type: the file is given here too.
    const dry = await run([recipe('acme-refund'), '--dry-run', '--secrets', secretsFile], {
      TABWARD_CHROME: fakeChrome,
    });
    assert.equal(dry.code, 0);
    assert.deepEqual(dry.json.data.writeSteps, [4]);
    assert.equal(dry.json.data.needsConfirm, true);
    assert.equal(dry.json.data.plan.length, 7);
    assert.ok(!existsSync(marker), 'dry runs need no browser');
    const broken = await run([recipe('acme-orders'), '--secrets', secretsFile], {
      TABWARD_CHROME: fakeChrome,
    });
    assert.equal(broken.killed, false, 'a run whose browser cannot start exits on its own');
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
      /steps\[4\]: refused to click tr\.order button\.refund: this reads as destructive: its label "Refund" reads as destructive/,
    );
    assert.equal(result.json.error.step, 4);
    assert.ok(existsSync(result.json.screenshot), 'a screenshot of the failure');
    assert.deepEqual(portal.site.writes, []);
    const confirmed = await run([recipe('acme-refund'), '--secrets', secretsFile, '--confirm']);
    assert.equal(confirmed.json.data.result, 'Refund issued');
    assert.deepEqual(portal.site.writes, ['refund A-1001']);
  });

  test('a sensitive start gets a fix that can be applied as written, and applied it runs', async () => {
    const rules = join(portal.dir, 'admin-rules.txt');
    writeFileSync(rules, '*://127.0.0.1/admin/*\n');
    const origin = `http://127.0.0.1:${portal.site.port}`;
    const file = join(portal.dir, 'admin-start.json');
    writeFileSync(
      file,
      JSON.stringify({ url: `${origin}/admin/settings`, steps: [], extract: { fields: { title: 'title' } } }),
    );
    const refused = await run([file, '--rules', rules]);
    assert.equal(refused.json.ok, false);
    assert.equal(refused.json.error.code, 'not_allowed');
    const fix = /\{ ("url".*) \}, then run with --confirm/.exec(refused.json.error.message)?.[1] ?? '';
    assert.ok(fix, refused.json.error.message);
    assert.doesNotMatch(refused.json.error.message, /mark the step "write"/);
    // The fix, applied as it reads (the recipe's own steps go where it says).
    const fixed = JSON.parse(`{${fix.replace('…the steps as they are', '').replace(', ]', ']')}}`);
    writeFileSync(file, JSON.stringify({ ...fixed, extract: { fields: { title: 'title' } } }));
    const applied = await run([file, '--rules', rules, '--confirm']);
    assert.equal(applied.json.ok, true, JSON.stringify(applied.json.error));
  });
});
