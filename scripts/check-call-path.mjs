#!/usr/bin/env node
// Part of `npm run check`: every front end acts through the one call path (src/core/callPath.ts). Only the call
// path may call the guard's decision function; a front end that imported `decide` (or kept a decision function
// of its own) would decide outside the path, unasked and unaudited. Fails naming each file that does.
// Also: the guard, the call path and the runner go by the effects tools declare (core/kinds.ts ToolEffects), never
// by a tool's name (docs/architecture.md "Tool effects"); a comparison with a tool's name there fails.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
// The call path's approval rounds are where it decides (src/core/callPath.ts wires them).
const allowed = new Set(['src/core/approvalRounds.ts', 'src/core/guard.ts']);

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const importsDecide =
  /import\s*(?:type\s*)?\{[^}]*\bdecide\b[^}]*\}\s*from\s*['"](?:[^'"]*core\/|\.\/)guard(?:\.ts)?['"]/s;
const ownDeciders = /export\s+function\s+(judgeClick|decideSiteCall)\b/;
const offenders = [];
for (const file of [...files(join(root, 'src')), ...files(join(root, 'extension', 'src'))]) {
  const name = relative(root, file);
  const text = readFileSync(file, 'utf8');
  if (!allowed.has(name) && importsDecide.test(text))
    offenders.push(`${name}: imports decide from core/guard`);
  if (ownDeciders.test(text)) offenders.push(`${name}: defines a decision function outside the guard`);
}
// Every browser tool's name, as declared (`name: 'close_page'` in src/tools/).
const toolNames = new Set(
  files(join(root, 'src', 'tools')).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/^\s*name:\s*'([a-z][a-z0-9_]*)',/gm)].map((match) => match[1]),
  ),
);
const byName = (dir) => (name) => name.startsWith(dir);
const judgedByEffects = [byName('src/core/'), (name) => name === 'src/tools/runner.ts'];
const nameComparison =
  /(?:[!=]==\s*(['"`])([a-z][a-z0-9_]*)\1)|(?:(['"`])([a-z][a-z0-9_]*)\3\s*[!=]==)|(?:\bcase\s+(['"`])([a-z][a-z0-9_]*)\5\s*:)/g;
for (const file of files(join(root, 'src'))) {
  const name = relative(root, file);
  if (!judgedByEffects.some((covers) => covers(name))) continue;
  for (const match of readFileSync(file, 'utf8').matchAll(nameComparison)) {
    const compared = match[2] ?? match[4] ?? match[6];
    if (toolNames.has(compared))
      offenders.push(
        `${name}: compares with the tool name '${compared}' (declare an effect in core/kinds.ts)`,
      );
  }
}
if (offenders.length > 0) {
  process.stderr.write(
    `check-call-path: front ends must act through src/core/callPath.ts, not decide themselves, and go by tools' effects, not names:\n  ${offenders.join('\n  ')}\n`,
  );
  process.exit(1);
}
