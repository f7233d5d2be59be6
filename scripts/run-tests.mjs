#!/usr/bin/env node
// Runs every test file under test/ with Node's own runner through tsx. Node 20 does not expand quoted globs,
// and `node --test` with no files runs nothing and exits 0, so the files are listed here and must exist.

import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const only = process.argv.slice(2);

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

const files = testFiles(join(root, 'test'))
  .filter((file) => only.length === 0 || only.some((part) => file.includes(part)))
  .sort();
if (files.length === 0) {
  process.stderr.write('run-tests: no test files found\n');
  process.exit(1);
}
const args = [
  '--import',
  'tsx',
  '--test',
  '--test-reporter=spec',
  '--test-concurrency=3',
  '--test-force-exit',
  '--test-timeout=120000',
  ...files,
];
const result = spawnSync(process.execPath, args, {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TABWARD_TEST: '1' },
});
process.exit(result.status ?? 1);
