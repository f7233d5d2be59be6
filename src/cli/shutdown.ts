// Shutting down within bounds. Every close step gets a few seconds and is then given up on (a socket held open
// by a browser tab or a pre-connect keeps a server's close() waiting for ever); a browser tabward launched that
// has not gone by then is killed with its whole process group, and its temporary profile removed.

import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import type { BrowserSession } from '../browser/session.ts';
import { swallowed } from '../core/debug.ts';

export const closeStepMs = 5_000;

/** Waits for `work` at most `ms`; says so and returns false when it did not finish (or failed). */
export async function boundedStep(
  what: string,
  work: Promise<unknown>,
  log: (line: string) => void,
  ms = closeStepMs,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((done) => {
    timer = setTimeout(() => done('late'), ms);
  });
  try {
    const outcome = await Promise.race([work.then(() => 'done' as const), late]);
    if (outcome === 'late') log(`tabward: ${what} took over ${ms} ms; going on without it.`);
    return outcome === 'done';
  } catch (error) {
    log(`tabward: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Closes the session's browser within its bound; one tabward launched that is still there is killed. */
export async function closeBrowserSession(
  session: BrowserSession,
  log: (line: string) => void,
): Promise<void> {
  const { pid, profile } = session.status();
  if (!(await boundedStep('closing the browser', session.close(), log)))
    killLaunchedBrowser(pid, profile, log);
}

/** Kills a launched browser's process group and removes its profile when it is one tabward made. */
export function killLaunchedBrowser(
  pid: number | undefined,
  profile: string | undefined,
  log: (line: string) => void,
): void {
  if (pid) {
    try {
      process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
      log(`tabward: killed the browser (pid ${pid}).`);
    } catch (error) {
      // already gone
      swallowed('cli', 'shutdown.killLaunchedBrowser: already gone', error);
    }
  }
  // Only the temporary profiles tabward makes (never a --user-data-dir the user gave).
  if (profile && isTemporaryProfile(profile))
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

function isTemporaryProfile(path: string): boolean {
  return dirname(resolve(path)) === resolve(tmpdir()) && basename(path).startsWith('tabward-profile-');
}
