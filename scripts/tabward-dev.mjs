#!/usr/bin/env node
// tabward from a checkout, for development and the tests: runs the bundle in dist/ when it is newer than every
// source file, and otherwise the TypeScript sources through tsx, so an edit to src/ is never hidden behind a
// stale bundle. The published package has no sources and no tsx: its bin/tabward runs the bundle only.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import '../bin/debugLogs.mjs';

const root = join(import.meta.dirname, '..');
const bundle = join(root, 'dist', 'tabward.js');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const fresh = existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource(join(root, 'src'));
if (fresh) {
  const { main } = await import(bundle);
  await main(process.argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/cli/main.ts');
  await main(process.argv);
}
