// What a failed command prints: one line naming what went wrong and what to do, and the exit code. Errors
// that are not tabward's own (a Node system error that escaped) get the same treatment; the stack trace only
// with TABWARD_DEBUG=1.

import { visibleLines } from '../core/displayText.ts';
import { isTabwardError } from '../core/errors.ts';

export interface Report {
  readonly line: string;
  readonly exitCode: number;
}

/** Node's system errors carry a code, and often the path or port they were about. */
interface SystemError {
  readonly code?: string;
  readonly path?: string;
  readonly port?: number;
  readonly message?: string;
}

const systemReasons: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'it is a folder, not a file',
  ENOENT: 'no such file or folder',
  ENOSPC: 'the disk is full',
};

export function reportError(error: unknown): Report {
  if (isTabwardError(error))
    return { line: `tabward: ${error.describe()}`, exitCode: error.code === 'bad_input' ? 2 : 1 };
  const system = (typeof error === 'object' && error !== null ? error : {}) as SystemError;
  if (system.code === 'EADDRINUSE')
    return {
      line: `tabward: port ${system.port ?? ''} is in use. Stop what uses it, or choose another port.`,
      exitCode: 2,
    };
  const reason = system.code ? systemReasons[system.code] : undefined;
  if (reason && system.path)
    return {
      line: `tabward: cannot use ${system.path}: ${reason}. Check the path you gave, or its permissions.`,
      exitCode: 2,
    };
  const message = error instanceof Error ? error.message : String(error);
  return {
    line: `tabward: unexpected error: ${message.split('\n')[0]} (TABWARD_DEBUG=1 shows the details; please report it).`,
    exitCode: 1,
  };
}

/** Prints the report (and the stack under TABWARD_DEBUG=1) and ends the process with its code. */
export function exitWithError(error: unknown): never {
  if (process.env.TABWARD_DEBUG === '1' && error instanceof Error && error.stack)
    process.stderr.write(`${visibleLines(error.stack)}\n`);
  const report = reportError(error);
  process.stderr.write(`${visibleLines(report.line)}\n`);
  process.exit(report.exitCode);
}
