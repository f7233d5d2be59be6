#!/usr/bin/env node
// Runs every test file under test/ with Node's own runner through tsx. Node 20 does not expand quoted globs,
// and `node --test` with no files runs nothing and exits 0, so the files are listed here and must exist.
//
// Sized for small machines: as many files at once as there are CPUs plus one (most of a browser test is waiting),
// TABWARD_TEST_CONCURRENCY to choose. Node 20 applies --test-timeout to a whole file (each file is one test of
// this runner), so it is a budget for the slowest file on a loaded machine, not a per-test deadline: tests bound
// their own waits (test/helpers/waitFor.ts) and tabward bounds every browser call. `--stress` (npm run
// test:stress) keeps one core busy beside the suite, to reproduce load failures at will.

import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const stress = process.argv.includes('--stress');
const only = process.argv.slice(2).filter((arg) => arg !== '--stress');
const concurrency = Number(process.env.TABWARD_TEST_CONCURRENCY) || availableParallelism() + 1;

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
  `--test-concurrency=${concurrency}`,
  '--test-force-exit',
  '--test-timeout=600000',
  ...files,
];
// One busy loop: a second process competing for a core, as CI machines and laptops running other work have.
const hog = stress ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined;
const started = Date.now();
// The tests' browsers reach only fixtures on 127.0.0.1: a proxy set in the environment (for package installs)
// must not change what they do (with one, tabward's browsers keep their WebSocket gate off).
const proxyVariables = /^(https?|all|no)_proxy$/i;
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !proxyVariables.test(name)));
const result = spawnSync(process.execPath, args, {
  cwd: root,
  stdio: 'inherit',
  env: { ...env, TABWARD_TEST: '1' },
});
hog?.kill();
const seconds = Math.round((Date.now() - started) / 1000);
process.stderr.write(
  `run-tests: ${files.length} files, ${concurrency} at a time${stress ? ', one core kept busy' : ''}: ${seconds} s\n`,
);
process.exit(result.status ?? 1);
