// `tabward relay ...` as a user types it: tokens (create, list, revoke), pairing codes, the extension folder,
// and clear errors for a bad workspace name or a port already taken.

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '../helpers/runCli.ts';
import { startRelayProcess } from '../helpers/webmcpRig.ts';

const home = mkdtempSync(join(tmpdir(), 'tabward-relay-cli-'));
const env = { TABWARD_HOME: home };
after(() => rmSync(home, { recursive: true, force: true }));

test('token create prints the token once and the claude mcp add line; list never shows it; revoke', async () => {
  const unknown = await runCli(['relay', 'token', 'create', '--workspace', 'nosuch'], env);
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /^tabward: Workspace "nosuch" has no paired browser and no agents\. .*--new-workspace/,
  );
  assert.equal(unknown.stderr.trim().split('\n').length, 1);
  const created = await runCli(
    [
      'relay',
      'token',
      'create',
      '--workspace',
      'team',
      '--name',
      'laptop',
      '--port',
      '9999',
      '--new-workspace',
    ],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const token = /^(twa_\S+)$/m.exec(created.stdout)?.[1] ?? '';
  assert.ok(token);
  assert.match(
    created.stdout,
    new RegExp(
      `claude mcp add --transport http tabward-relay http://127\\.0\\.0\\.1:9999/mcp --header "Authorization: Bearer ${token}"`,
    ),
  );
  assert.ok(existsSync(join(home, 'relay.db')), 'the store defaults to TABWARD_HOME');
  assert.equal(statSync(join(home, 'relay.db')).mode & 0o777, 0o600, 'the store is its owner’s only');
  const listed = await runCli(['relay', 'token', 'list'], env);
  assert.match(listed.stdout, /agent-\w+ {2}team {2}laptop/);
  assert.ok(!listed.stdout.includes(token));
  const id = /(agent-\w+)/.exec(listed.stdout)?.[1] ?? '';
  assert.equal((await runCli(['relay', 'token', 'revoke', id], env)).code, 0);
  assert.match((await runCli(['relay', 'token', 'list'], env)).stdout, /REVOKED/);
  const again = await runCli(['relay', 'token', 'revoke', id], env);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /No active agent token with id/);
});

test('pair prints a one-time code; bad workspace names are refused', async () => {
  const paired = await runCli(['relay', 'pair', '--workspace', 'team'], env);
  assert.match(paired.stdout, /Pairing code for workspace "team": [A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}\n/);
  const bad = await runCli(['relay', 'pair', '--workspace', 'no spaces'], env);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Workspace "no spaces" is not a valid name/);
  const missing = await runCli(['relay', 'token', 'create'], env);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /--workspace/);
});

test('a home that other users can read is made private on start, and tabward says so', async () => {
  const open = join(home, 'open-home');
  mkdirSync(open, { mode: 0o755 });
  chmodSync(open, 0o755);
  writeFileSync(join(open, 'audit.jsonl'), '', { mode: 0o644 });
  chmodSync(join(open, 'audit.jsonl'), 0o644);
  const fresh = join(home, 'fresh', 'home');
  for (const dir of [open, fresh]) {
    const out = await runCli(['relay', 'token', 'list'], { TABWARD_HOME: dir });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(statSync(dir).mode & 0o777, 0o700, dir);
    assert.equal(statSync(join(dir, 'relay.db')).mode & 0o777, 0o600);
    if (dir === open) {
      assert.match(out.stderr, /open-home was open to other users \(mode 755\); it is now 700/);
      assert.match(out.stderr, /made audit\.jsonl in .* private to you/);
      assert.equal(statSync(join(dir, 'audit.jsonl')).mode & 0o777, 0o600);
    } else assert.doesNotMatch(out.stderr, /open to other users/);
  }
});

test('the extension folder is printed for Load unpacked', async () => {
  const out = await runCli(['relay', 'extension'], env);
  if (out.code !== 0) assert.match(out.stderr, /Run `node scripts\/setup\.mjs`/);
  else assert.ok(existsSync(join(out.stdout.trim(), 'manifest.json')));
});

test('a port already taken is a clear error', async () => {
  const first = await startRelayProcess(join(home, 'a.db'));
  try {
    const second = await runCli(['relay', '--port', String(first.port), '--db', join(home, 'b.db')], env);
    assert.equal(second.code, 2);
    assert.match(second.stderr, new RegExp(`Port ${first.port} is in use\\. Is a relay already running\\?`));
  } finally {
    await first.stop();
  }
});
