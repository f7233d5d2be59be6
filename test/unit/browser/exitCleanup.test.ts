// tabward exiting ends the browsers it launched and removes their profiles (launch.ts's exit hook). That hook runs
// inside process.exit: if it threw, process.exit would return without exiting, and a tabward with a server still
// listening (mcp --http, relay, serve) would live on after SIGTERM. Seen once after a test run: Chromium's helpers
// were still writing into the profile being removed, so its removal failed with ENOTEMPTY.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { within } from '../../helpers/waitFor.ts';

const launchModule = fileURLToPath(new URL('../../../src/browser/launch.ts', import.meta.url));

test('an exit whose profile cannot be removed (still being written into) still exits', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabward-exit-'));
  const profile = join(dir, 'profile');
  // Stands in for Chromium's helpers: files appear in the profile faster than it can be emptied.
  const writer = spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('fs'); fs.mkdirSync(${JSON.stringify(profile)}, { recursive: true });
       for (let i = 0; ; i++) { try { fs.mkdirSync(${JSON.stringify(profile)}, { recursive: true }); fs.writeFileSync(${JSON.stringify(profile)} + '/f' + i, 'x'); } catch {} }`,
    ],
    { stdio: 'ignore' },
  );
  // What tabward's front ends do: a server keeps the process alive, a rejection is logged rather than fatal, and
  // the shutdown ends in process.exit from an async function.
  const subject = `
    import { createServer } from 'node:http';
    import { rememberBrowser } from ${JSON.stringify(launchModule)};
    process.on('unhandledRejection', (error) => process.stderr.write('rejection: ' + String(error) + '\\n'));
    createServer().listen(0, '127.0.0.1', () => {
      rememberBrowser(() => undefined, ${JSON.stringify(profile)});
      setTimeout(async () => { process.exit(0); }, 300);
    });`;
  try {
    while (!existsSync(profile)) await new Promise((done) => setTimeout(done, 10));
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', subject], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    try {
      const code = await within('the exit', exited, 20_000).catch((error: unknown) => {
        throw new Error(`${String(error)}; stderr: ${stderr}`);
      });
      assert.equal(code, 0, stderr);
      assert.match(stderr, /could not remove the browser profile .*ENOTEMPTY/, 'said, not thrown');
    } finally {
      child.kill('SIGKILL');
    }
  } finally {
    writer.kill('SIGKILL');
    await new Promise((done) => writer.once('exit', done));
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  }
});
