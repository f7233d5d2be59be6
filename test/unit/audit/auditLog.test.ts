// The audit log keeps every record a process wrote before it died, even by SIGKILL, and follows a log that was
// moved or deleted under it.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AuditLog, formatAuditEntry, readAuditLog } from '../../../src/audit/auditLog.ts';

const start = (call: string) => ({
  time: new Date().toISOString(),
  call,
  frontEnd: 'test',
  tool: 'take_snapshot',
  mode: 'isolated' as const,
  outcome: 'started' as const,
});

test('a record written before a SIGKILL is in the log', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'audit-')), 'audit.jsonl');
  const script = `
    const { AuditLog } = await import(${JSON.stringify(new URL('../../../src/audit/auditLog.ts', import.meta.url).href)});
    const log = new AuditLog(${JSON.stringify(path)});
    log.record({ time: 't', call: 'k-1', frontEnd: 'x', tool: 'click', mode: 'isolated', outcome: 'started' });
    process.kill(process.pid, 'SIGKILL');`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
  assert.equal(child.signal, 'SIGKILL');
  assert.deepEqual(
    readAuditLog(path).unfinished.map((entry) => entry.call),
    ['k-1'],
  );
  assert.equal(statSync(path).mode & 0o777, 0o600);
});

test('a log deleted under a running process is written afresh', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'audit-')), 'audit.jsonl');
  const log = new AuditLog(path);
  log.record(start('a-1'));
  rmSync(path);
  log.record(start('a-2'));
  log.record(start('a-3'));
  assert.deepEqual(
    readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { call: string }).call),
    ['a-2', 'a-3'],
  );
});

test('a line says why a stop no call carries was made, and leaves an allowed call’s reasoning out', () => {
  const stop = {
    time: 't',
    frontEnd: 'browser',
    tool: '(egress)',
    kind: 'request',
    args: { method: 'POST' },
    mode: 'isolated' as const,
    url: 'https://accounts.google.com/ListAccounts',
    decision: 'block' as const,
    reason: 'it would change state on a sensitive page',
    outcome: 'blocked' as const,
    durationMs: 0,
  };
  assert.match(formatAuditEntry(stop), / block blocked 0ms — it would change state on a sensitive page$/);
  const sent = { ...stop, outcome: 'error' as const, error: 'sent although refused' };
  assert.match(formatAuditEntry(sent), / — sent although refused$/);
  const read = {
    ...stop,
    tool: 'take_snapshot',
    decision: 'allow' as const,
    reason: 'a read',
    outcome: 'ok' as const,
  };
  assert.doesNotMatch(formatAuditEntry(read), /a read/);
});
