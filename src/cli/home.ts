// TABWARD_HOME (~/.tabward) kept private from other local users: the folder 0700 and every file in it 0600,
// a home left too open by an older version tightened on start (and said so), and the bearer tokens that the
// local servers (`serve`, `mcp --http`) keep there.

import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { TabwardError } from '../core/errors.ts';
import { defaultAuditPath, tabwardHome } from './config.ts';

const checked = new Set<string>();

/** Creates the home (0700) or tightens it and its files; once per process. Returns its path. */
export function ensureHome(log: (line: string) => void = stderrLine): string {
  const home = tabwardHome();
  if (checked.has(home)) return home;
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    probeWritable(home);
  } catch (error) {
    throw homeUnusable(home, error);
  }
  const was = tighten(home, 0o700, log);
  if (was !== undefined) log(`tabward: ${home} was open to other users (mode ${octal(was)}); it is now 700.`);
  const files = readdirSync(home, { withFileTypes: true }).filter((entry) => entry.isFile());
  const loosened = files.filter((entry) => tighten(join(home, entry.name), 0o600, log) !== undefined);
  if (loosened.length)
    log(
      `tabward: made ${loosened.map((entry) => entry.name).join(', ')} in ${home} private to you (mode 600).`,
    );
  checked.add(home);
  return home;
}

/** Creates and removes a file: the only sure test that files can be made here (root passes access checks). */
function probeWritable(dir: string): void {
  const probe = join(dir, `.probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  writeFileSync(probe, '', { mode: 0o600 });
  rmSync(probe, { force: true });
}

function homeUnusable(home: string, error: unknown): TabwardError {
  const code = (error as { code?: string }).code ?? String(error);
  return new TabwardError(
    'bad_input',
    `tabward cannot keep its files in ${home} (${code}).`,
    process.env.TABWARD_HOME
      ? 'Set TABWARD_HOME to a folder you can write.'
      : 'Make it writable, or set TABWARD_HOME to a folder you can write.',
  );
}

/** Why the home cannot be used, or undefined when it can (for `tabward doctor`, which must not throw). */
export function homeProblem(): string | undefined {
  try {
    ensureHome(() => undefined);
    return undefined;
  } catch (error) {
    return error instanceof TabwardError ? error.describe() : String(error);
  }
}

/** A file tabward will append to (the audit log) must be writable before anything runs that would record. */
export function checkAppendable(file: string, flag: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    closeSync(openSync(file, 'a', 0o600));
  } catch (error) {
    throw new TabwardError(
      'bad_input',
      `The audit log ${file} cannot be written (${(error as { code?: string }).code ?? String(error)}).`,
      `Give ${flag} a file you can write, or fix the folder's permissions.`,
    );
  }
}

/** The audit log's place in the home, the home made private first. */
export function homeAuditPath(log: (line: string) => void = stderrLine): string {
  ensureHome(log);
  return defaultAuditPath();
}

/**
 * Writes what a page held into a file only its owner can read. A path that is not a file (/dev/stdout, a pipe,
 * `>(jq .)`) is written as it is. A file of another user's is refused: one put first in a shared folder (/tmp,
 * under a name they could guess) kept its owner and mode when written into, and they read what was written (an
 * attack review); a symbolic link is refused too (whose file it ends at is not this one's to judge). A new path,
 * or a file of one's own, gets a new file: written beside it under a random name (created, never opened if there),
 * then renamed onto it.
 */
export function writePrivateFile(path: string, content: string | Uint8Array): void {
  const found = checkPrivateTarget(path);
  if (found && !found.isFile()) {
    writeFileSync(path, content);
    return;
  }
  const fresh = `${path}.${randomBytes(6).toString('hex')}.part`;
  try {
    writeFileSync(fresh, content, { mode: 0o600, flag: 'wx' });
    chmodSync(fresh, 0o600);
    renameSync(fresh, path);
  } catch (error) {
    rmSync(fresh, { force: true });
    throw error;
  }
}

/**
 * What is at a path writePrivateFile will write (undefined: nothing yet), or an error that says why it will not
 * write there: checked before a run starts too, so that a run's result is not lost to a path it cannot use.
 */
export function checkPrivateTarget(path: string): ReturnType<typeof lstatSync> | undefined {
  let found: ReturnType<typeof lstatSync> | undefined;
  try {
    found = lstatSync(path);
  } catch {
    return undefined;
  }
  // A link to a stream (/dev/stdout is one) is written through; a link to a file, or to nothing yet, is refused.
  if (found.isSymbolicLink()) {
    const target = statIfThere(path);
    if (target && !target.isFile()) return target;
  }
  const mine = typeof process.getuid !== 'function' || found.uid === process.getuid();
  if (found.isSymbolicLink() || (found.isFile() && !mine))
    throw new TabwardError(
      'bad_input',
      `${path} is ${found.isSymbolicLink() ? 'a symbolic link' : "another user's file"}: what tabward writes there could be read by others.`,
      'Name a new file, or one of your own (not a link), for it.',
    );
  return found;
}

function statIfThere(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Sets the mode when group or others have any access; returns the old mode bits when it changed them. */
function tighten(path: string, mode: number, log: (line: string) => void): number | undefined {
  const bits = statSync(path).mode & 0o777;
  if ((bits & 0o077) === 0) return undefined;
  try {
    chmodSync(path, mode);
    return bits;
  } catch (error) {
    log(
      `tabward: ${path} is open to other users (mode ${octal(bits)}) and cannot be changed: ${String(error)}`,
    );
    return undefined;
  }
}

const octal = (bits: number) => bits.toString(8).padStart(3, '0');

function stderrLine(line: string): void {
  process.stderr.write(`${line}\n`);
}

export const minTokenLength = 16;

export interface BearerToken {
  readonly token: string;
  /** Where it came from; `new` means made now and kept in `file`, to be shown once. */
  readonly source: 'flag' | 'env' | 'file' | 'new';
  readonly file: string;
}

/**
 * A local server's bearer token: the flag's, else the environment variable's (set but empty or short is
 * refused, never read as "no auth"), else the one kept in the home's `fileName`, made on first use.
 */
export function bearerToken(options: {
  readonly fileName: string;
  readonly envName: string;
  readonly flag?: string | undefined;
}): BearerToken {
  const file = join(ensureHome(), options.fileName);
  const fix = `Unset it to use the token kept in ${file}, or give one of at least ${minTokenLength} random characters.`;
  if (options.flag !== undefined)
    return {
      token: checkToken(
        options.flag,
        'The token in the --token-file file',
        `Write one of at least ${minTokenLength} random characters into it.`,
      ),
      source: 'flag',
      file,
    };
  const fromEnv = process.env[options.envName];
  if (fromEnv !== undefined) return { token: checkToken(fromEnv, options.envName, fix), source: 'env', file };
  let kept: string | undefined;
  try {
    kept = readFileSync(file, 'utf8').trim();
  } catch {
    kept = undefined;
  }
  if (kept !== undefined)
    return {
      token: checkToken(kept, `The token in ${file}`, 'Delete the file to have a new one made.'),
      source: 'file',
      file,
    };
  const token = randomBytes(24).toString('base64url');
  writePrivateFile(file, `${token}\n`);
  return { token, source: 'new', file };
}

function checkToken(token: string, what: string, fix: string): string {
  const trimmed = token.trim();
  if (trimmed.length >= minTokenLength && !/\s/.test(trimmed)) return trimmed;
  const problem = !trimmed
    ? 'is empty'
    : /\s/.test(trimmed)
      ? 'contains white space'
      : `is ${trimmed.length} characters; at least ${minTokenLength} are needed`;
  throw new TabwardError(
    'bad_input',
    `${what} ${problem}: a bearer token must be long enough that no one can guess it.`,
    fix,
  );
}
