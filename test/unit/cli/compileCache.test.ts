// The compile cache (src/cli/compileCache.ts), in child processes as tabward starts: playwright-core loaded after it
// leaves compiled code in the private home (0700), a cache that is garbage or cannot be written changes nothing but
// speed, TABWARD_NO_COMPILE_CACHE=1 leaves it off, and a home or cache others can write is not used.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const cacheModule = fileURLToPath(new URL('../../../src/cli/compileCache.ts', import.meta.url));
const loadsBrowserLibrary = `
import { createRequire } from 'node:module';
import { cacheCompiledCode } from ${JSON.stringify(cacheModule)};
cacheCompiledCode();
const { chromium } = createRequire(import.meta.url)('playwright-core');
console.log(typeof chromium.launch);
`;

const scratch = mkdtempSync(join(tmpdir(), 'tabward-compile-cache-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

interface Started {
  code: number;
  stdout: string;
  stderr: string;
}

function run(home: string, env: Record<string, string> = {}): Promise<Started> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', loadsBrowserLibrary],
      { env: { ...process.env, TABWARD_HOME: home, ...env }, cwd: process.cwd(), timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function start(
  home: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string }> {
  const { code, stdout } = await run(home, env);
  return { code, stdout };
}

const mode = (path: string) => statSync(path).mode & 0o777;

test('the browser library leaves its compiled code in the private home, and reads it back', async () => {
  const home = join(scratch, 'home');
  const first = await start(home);
  assert.deepEqual(first, { code: 0, stdout: 'function\n' });
  const cache = join(home, 'cache');
  assert.equal(mode(home), 0o700, 'a home made for the cache is private');
  assert.equal(mode(cache), 0o700);
  const files = readdirSync(cache, { recursive: true, withFileTypes: true }).filter((entry) =>
    entry.isFile(),
  );
  const written = files.reduce((sum, entry) => sum + statSync(join(entry.parentPath, entry.name)).size, 0);
  assert.ok(written > 100_000, `compiled code kept (${written} bytes in ${files.length} files)`);
  assert.deepEqual(await start(home), { code: 0, stdout: 'function\n' }, 'a start that reads it back');
});

test('a cache turned to garbage is compiled afresh: the start works as without one', async () => {
  const home = join(scratch, 'garbage');
  await start(home);
  const cache = join(home, 'cache');
  const files = readdirSync(cache, { recursive: true, withFileTypes: true }).filter((entry) =>
    entry.isFile(),
  );
  assert.ok(files.length > 0);
  // The compiled code, not its index (Node 20's hook keeps an index beside it): the same length, so the index's
  // offsets still point inside, and other bytes, which V8 is handed as a script's cached data.
  for (const entry of files.filter((file) => !file.name.endsWith('.MAP'))) {
    const path = join(entry.parentPath, entry.name);
    writeFileSync(path, Buffer.alloc(readFileSync(path).length, 0x5a));
  }
  assert.deepEqual(await start(home), { code: 0, stdout: 'function\n' });
});

test('a home that cannot hold a cache, and TABWARD_NO_COMPILE_CACHE=1, start without one', async () => {
  const notAFolder = join(scratch, 'file-home');
  writeFileSync(notAFolder, 'not a folder');
  assert.deepEqual(await start(notAFolder), { code: 0, stdout: 'function\n' });
  const off = join(scratch, 'off');
  assert.deepEqual(await start(off, { TABWARD_NO_COMPILE_CACHE: '1' }), { code: 0, stdout: 'function\n' });
  assert.throws(() => statSync(join(off, 'cache')), /ENOENT/, 'no cache made when it is off');
});

// Compiled code read from the cache runs as tabward (V8 checks an entry against its script's length only): a cache
// someone else could have written must not be read, nor one written where they could change it.
test('a home or cache folder that others can write is not used, and the start says why', async () => {
  const looseCache = join(scratch, 'loose-cache');
  mkdirSync(join(looseCache, 'cache'), { recursive: true, mode: 0o700 });
  chmodSync(join(looseCache, 'cache'), 0o777);
  const looseHome = join(scratch, 'loose-home');
  mkdirSync(looseHome, { mode: 0o700 });
  chmodSync(looseHome, 0o757);
  for (const [home, open] of [
    [looseCache, join(looseCache, 'cache')],
    [looseHome, looseHome],
  ] as const) {
    const started = await run(home);
    assert.equal(started.stdout, 'function\n', started.stderr);
    assert.deepEqual(readdirSync(join(home, 'cache')), [], 'no compiled code kept where others can write');
    assert.match(
      started.stderr,
      new RegExp(`not using the compiled-code cache .*${open} can be written by others`),
    );
  }
  // Another user's home, however private (only root can make one here).
  if (process.getuid?.() !== 0) return;
  const theirs = join(scratch, 'their-home');
  mkdirSync(join(theirs, 'cache'), { recursive: true, mode: 0o700 });
  chownSync(theirs, 4242, 4242);
  const started = await run(theirs);
  assert.equal(started.stdout, 'function\n', started.stderr);
  assert.deepEqual(readdirSync(join(theirs, 'cache')), []);
  assert.match(started.stderr, /not using the compiled-code cache .*their-home belongs to user 4242/);
});
