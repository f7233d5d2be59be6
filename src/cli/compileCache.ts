// V8's code cache for what tabward loads as CommonJS, kept between runs in tabward's private home. playwright-core's
// ~3 MB of JavaScript takes ~250 ms of CPU to load, the largest part of an MCP server's first browser call after
// tools/list; compiled code read back from the cache saves ~50 ms of it on every later start. Node 22.8+ keeps such
// a cache itself (module.enableCompileCache, which covers tabward's own ES modules too); on Node 20 the
// v8-compile-cache-lib hook does, for CommonJS modules loaded after it is installed. Best effort: a cache that
// cannot be made, read or written means compiling without one, never an error. A module the Node 20 hook compiles
// cannot import() (it compiles without a dynamic-import callback): playwright-core's one import() is of the optional
// kerberos package for Negotiate proxies, which tabward does not install, so it fails the same way either way; a
// CommonJS dependency that needs import() must be loaded before cacheCompiledCode or without the hook.
//
// The cache is code: V8 checks an entry against its script's length only, so whoever can write the cache runs code
// in tabward, with the user's logins. It is used only where no one else can write (home.ts makes the home private,
// but later, and TABWARD_HOME may name a folder someone else made).

import { mkdirSync, statSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { install } from 'v8-compile-cache-lib';
import { swallowed } from '../core/debug.ts';
import { tabwardHome } from './config.ts';

let installed = false;

/** Turns the cache on for this process (once), in `<home>/cache`; TABWARD_NO_COMPILE_CACHE=1 leaves it off. */
export function cacheCompiledCode(): void {
  if (installed || process.env.TABWARD_NO_COMPILE_CACHE === '1') return;
  installed = true;
  const home = tabwardHome();
  const dir = join(home, 'cache');
  try {
    // Private like the rest of the home: a home made here is 0700 too.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // The home too: whoever can write it can put a cache folder of their own in place of this one.
    const open = [home, dir].map(writableByOthers).find((why) => why !== undefined);
    if (open) {
      process.stderr.write(
        `tabward: not using the compiled-code cache in ${dir}: ${open}. Make it yours alone (chmod 700), or delete it.\n`,
      );
      return;
    }
    const builtIn = (module as { enableCompileCache?: (directory: string) => unknown }).enableCompileCache;
    if (builtIn) builtIn(dir);
    // One cache for every start, wherever it is started from (the library's default keys it by the working folder).
    else install({ cacheDir: dir, prefix: 'tabward' });
  } catch (error) {
    // Unwritable home, read-only file system: compiled afresh each time, as without the cache.
    swallowed(
      'cli',
      'compileCache.cacheCompiledCode: Unwritable home, read-only file system: compiled afresh e...',
      error,
    );
  }
}

/** Why someone other than this user can write the folder, if they can (POSIX owner and mode bits). */
function writableByOthers(path: string): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const stats = statSync(path);
  if (stats.uid !== uid) return `${path} belongs to user ${stats.uid}`;
  const bits = stats.mode & 0o777;
  if (bits & 0o022) return `${path} can be written by others (mode ${bits.toString(8).padStart(3, '0')})`;
  return undefined;
}
