// What a recipe run writes holds what a logged-in page showed: its result (--out), its screenshot, a failure's
// screenshot. An attack review had another local user read each: a failure's screenshot went to the shared temp
// folder under a name one could guess (a file put there first kept its owner and mode), and --out was written
// readable by all. Each is now a new file only its owner reads; a failure's screenshot goes into the home.
// The other user is `nobody`, reached with setpriv: root only.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { demoSecretsFile, usePortal } from '../helpers/recipeSite.ts';

const asRoot = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
const nobodyReads = (file: string) =>
  spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'cat', file], {
    encoding: 'utf8',
  });

describe("files a recipe run writes are its user's alone", {
  skip: !asRoot && 'needs root and setpriv',
}, () => {
  const portal = usePortal();

  test('--out and --screenshot: a file another user put at the path first is replaced, not written into', async () => {
    // A folder everyone may write in, as /tmp is.
    const shared = mkdtempSync(join(tmpdir(), 'tabward-shared-'));
    chmodSync(shared, 0o1777);
    const out = join(shared, 'result.json');
    const shot = join(shared, 'shot.png');
    for (const file of [out, shot]) {
      writeFileSync(file, '');
      chmodSync(file, 0o666);
      spawnSync('chown', ['65534:65534', file]);
    }
    const ran = await portal.run([
      portal.recipe('acme-orders'),
      '--secrets',
      demoSecretsFile,
      '--out',
      out,
      '--screenshot',
      shot,
    ]);
    assert.equal(ran.code, 0, ran.stderr);
    for (const file of [out, shot]) {
      const stat = statSync(file);
      assert.equal(stat.uid, process.getuid?.(), `${file} is a new file of tabward's user`);
      assert.equal(stat.mode & 0o777, 0o600);
      assert.notEqual(nobodyReads(file).status, 0, `nobody cannot read ${file}`);
    }
  });

  test("a failure's screenshot goes into the home, a new file only its user reads", async () => {
    const failing = portal.recipe('acme-orders', (parsed) => {
      (parsed.steps as unknown[]).push({ action: 'waitFor', selector: '#never', timeoutMs: 500 });
    });
    const ran = await portal.run([
      failing,
      '--secrets',
      demoSecretsFile,
      '--screenshot',
      join(portal.dir, 'x.png'),
    ]);
    assert.equal(ran.code, 1, ran.stderr);
    const shot = ran.json.screenshot as string;
    assert.ok(shot.startsWith(join(portal.dir, 'screenshots', 'failure-')), shot);
    assert.equal(statSync(shot).mode & 0o777, 0o600);
  });
});
