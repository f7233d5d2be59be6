// `tabward demo`, the README's first command, as a user runs it.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { binPath } from '../helpers/mcpClient.ts';

test('the demo tells the whole story and the demo site saw only the approved write', async () => {
  const home = mkdtempSync(join(tmpdir(), 'tabward-demo-test-'));
  const { stdout } = await promisify(execFile)(process.execPath, [binPath, 'demo'], {
    env: { ...process.env, TABWARD_HOME: home },
    timeout: 120_000,
  });
  assert.match(stdout, /cafeteria opens at 8/, 'the public page is read isolated');
  assert.match(stdout, /Switched to your Chrome/);
  assert.match(stdout, /Ship the billing rewrite/, "the private page is read through the user's login");
  assert.match(stdout, /rejected: The user rejected click: never delete the workspace/);
  assert.match(stdout, /blocked: close_page refused/);
  assert.match(stdout, /recorded these writes: \["save Acme"\]/);
  assert.match(stdout, /The audit log/);
});
