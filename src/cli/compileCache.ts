// V8's code cache for what tabward loads as CommonJS, kept between runs in tabward's private home. playwright-core's
// ~3 MB of JavaScript takes ~250 ms of CPU to load, the largest part of an MCP server's first browser call after
// tools/list; compiled code read back from the cache saves ~50 ms of it on every later start. Node 22.1+ keeps such
// a cache itself (module.enableCompileCache, which covers tabward's own ES modules too); on Node 20 the
// v8-compile-cache-lib hook does, for CommonJS modules loaded after it is installed. Best effort: a cache that
// cannot be made, read or written means compiling without one, never an error.

import { mkdirSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { install } from 'v8-compile-cache-lib';
import { tabwardHome } from './config.ts';

let installed = false;

/** Turns the cache on for this process (once), in `<home>/cache`; TABWARD_NO_COMPILE_CACHE=1 leaves it off. */
export function cacheCompiledCode(): void {
  if (installed || process.env.TABWARD_NO_COMPILE_CACHE === '1') return;
  installed = true;
  const dir = join(tabwardHome(), 'cache');
  try {
    // Private like the rest of the home (a cache is code this process runs): a home made here is 0700 too.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const builtIn = (module as { enableCompileCache?: (directory: string) => unknown }).enableCompileCache;
    if (builtIn) builtIn(dir);
    // One cache for every start, wherever it is started from (the library's default keys it by the working folder).
    else install({ cacheDir: dir, prefix: 'tabward' });
  } catch {
    // Unwritable home, read-only file system: compiled afresh each time, as without the cache.
  }
}
