// The package version, read once from package.json.

import { readFileSync } from 'node:fs';

export const version: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
