// The folder tabward is installed in, found from wherever this code runs: src/ through tsx, or the bundle
// in dist/.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'tabward'
    )
      return dir;
    dir = dirname(dir);
  }
  throw new Error('tabward cannot find its own package.json');
}

export const packageRoot = findRoot();
export const version: string = (
  JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }
).version;
