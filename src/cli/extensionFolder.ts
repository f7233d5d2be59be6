// `tabward relay extension`: where the built extension is, to load unpacked. Apart from the relay's code on
// purpose: printing a folder needs neither SQLite nor the relay (better-sqlite3 is an optional install).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TabwardError } from '../core/errors.ts';
import { packageRoot } from './packageRoot.ts';

export function extensionPath(): string {
  return join(packageRoot, 'dist', 'extension');
}

export function printExtensionPath(): void {
  const path = extensionPath();
  if (!existsSync(join(path, 'manifest.json')))
    throw new TabwardError(
      'not_found',
      `The extension is not built at ${path}.`,
      'Run `node scripts/setup.mjs`.',
    );
  process.stdout.write(`${path}\n`);
}
