// A bearer token in a file of its own (mode 600), for `tabward serve --token-file`: a token is never given on a
// command line, which every local user can read.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function tokenFile(token: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tabward-token-')), 'token');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return file;
}
