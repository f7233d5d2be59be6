// What a recipe run writes holds what a logged-in page showed: its result (--out), its screenshot, a failure's
// screenshot. An attack review had another local user read each: a failure's screenshot went to the shared temp
// folder under a name one could guess (a file put there first kept its owner and mode), and --out was written
// readable by all. Each is now a new file only its owner reads; a failure's screenshot goes into the home.
// The other user is `nobody`, reached with setpriv: root only.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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

  test("--out and --screenshot: another user's file put at the path first, or a link, is refused before the run", async () => {
    // A folder everyone may write in, as /tmp is.
    const shared = mkdtempSync(join(tmpdir(), 'tabward-shared-'));
    chmodSync(shared, 0o1777);
    const planted = join(shared, 'result.json');
    writeFileSync(planted, '');
    chmodSync(planted, 0o666);
    spawnSync('chown', ['65534:65534', planted]);
    const link = join(shared, 'shot.png');
    symlinkSync(join(shared, 'elsewhere.png'), link);
    for (const [flag, path, says] of [
      [
        '--out',
        planted,
        /result\.json is another user's file: what tabward writes there could be read by others/,
      ],
      ['--screenshot', link, /shot\.png is a symbolic link/],
    ] as const) {
      const ran = await portal.run([portal.recipe('acme-orders'), '--secrets', demoSecretsFile, flag, path]);
      assert.equal(ran.code, 2, ran.stderr);
      assert.match(ran.stderr, says);
    }
    assert.equal(readFileSync(planted, 'utf8'), '', 'nothing was written into it');
    assert.equal(existsSync(join(shared, 'elsewhere.png')), false);
  });

  test('--out of a new file: only its user reads it; a pipe is written as it is', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'tabward-out-')), 'result.json');
    const ran = await portal.run([portal.recipe('acme-orders'), '--secrets', demoSecretsFile, '--out', out]);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.notEqual(nobodyReads(out).status, 0, 'nobody cannot read it');
    // A stream (a pipe, as `--out >(jq .)` or /dev/stdout in a shell give) is written as it is.
    const fifo = join(mkdtempSync(join(tmpdir(), 'tabward-fifo-')), 'out');
    spawnSync('mkfifo', [fifo]);
    const reader = spawn('cat', [fifo]);
    let read = '';
    reader.stdout.on('data', (chunk: Buffer) => (read += chunk.toString()));
    const readerDone = new Promise((done) => reader.once('close', done));
    const piped = await portal.run([
      portal.recipe('acme-orders'),
      '--secrets',
      demoSecretsFile,
      '--out',
      fifo,
    ]);
    assert.equal(piped.code, 0, piped.stderr);
    await readerDone;
    assert.equal(JSON.parse(read).data.summary, '12 orders in all');
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
