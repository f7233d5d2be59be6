#!/usr/bin/env node
// Part of `npm run check`: every front end acts through the one call path (src/core/callPath.ts). Only the call
// path may call the guard's decision function; a front end that imported `decide` (or kept a decision function
// of its own) would decide outside the path, unasked and unaudited. Fails naming each file that does.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const allowed = new Set(['src/core/callPath.ts', 'src/core/guard.ts']);

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const importsDecide =
  /import\s*(?:type\s*)?\{[^}]*\bdecide\b[^}]*\}\s*from\s*['"][^'"]*core\/guard(?:\.ts)?['"]/s;
const ownDeciders = /export\s+function\s+(judgeClick|decideSiteCall)\b/;
const offenders = [];
for (const file of [...files(join(root, 'src')), ...files(join(root, 'extension', 'src'))]) {
  const name = relative(root, file);
  const text = readFileSync(file, 'utf8');
  if (!allowed.has(name) && importsDecide.test(text))
    offenders.push(`${name}: imports decide from core/guard`);
  if (ownDeciders.test(text)) offenders.push(`${name}: defines a decision function outside the guard`);
}
if (offenders.length > 0) {
  process.stderr.write(
    `check-call-path: front ends must act through src/core/callPath.ts, not decide themselves:\n  ${offenders.join('\n  ')}\n`,
  );
  process.exit(1);
}
