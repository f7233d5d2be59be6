// The package as users install it: scripts/check-packed-install.mjs packs a copy of the checkout, installs
// the tarball into an empty folder and drives the installed `tabward mcp` with the MCP SDK client.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const script = fileURLToPath(new URL('../../scripts/check-packed-install.mjs', import.meta.url));

test('the packed tarball installs without native builds and its tabward mcp lists its tools', {
  timeout: 300_000,
}, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 280_000 }).catch(
    (error: { stdout?: string; stderr?: string }) => {
      assert.fail(`check-packed-install failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    },
  );
  assert.match(stdout, /installed in [\d.]+ s: playwright-core, tabward\n/);
  assert.match(stdout, /tabward mcp: \d+ tools listed/);
  assert.match(stdout, /tabward relay extension without better-sqlite3: exit 0/);
  assert.match(stdout, /packed-install: ok/);
});
