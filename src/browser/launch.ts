// Launching a Chromium of our own: a fresh temporary profile, remote debugging on a free port (found through
// DevToolsActivePort, like the user's Chrome), spawned detached so that closing ends the whole process group,
// and the profile deleted on close. Everything such a browser leaves on disk lives under its profile (its temp
// folder too), and every way it can end (closed, crashed, killed, tabward exiting) removes that profile.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TabwardError } from '../core/errors.ts';
import { type ActivePort, readActivePort } from './devToolsActivePort.ts';

export interface LaunchOptions {
  readonly executablePath: string;
  readonly headless: boolean;
  readonly extraArgs?: readonly string[];
  /** A profile to use instead of a fresh temporary one; it is kept on close. */
  readonly userDataDir?: string;
  readonly timeoutMs?: number;
  /** Aborting stops a launch in flight: the browser is killed and its profile removed. */
  readonly signal?: AbortSignal;
}

export interface LaunchedChrome {
  readonly wsEndpoint: string;
  readonly userDataDir: string;
  readonly pid: number;
  /** Where Playwright keeps its artifacts (downloads, traces) for this browser: inside the profile. */
  readonly artifactsDir: string;
  /**
   * Stops the browser: `graceful` first (CDP Browser.close, so Chromium removes its own temp files), then its
   * process group; then the temporary profile is removed. Safe to call more than once.
   */
  close(graceful?: () => Promise<void>): Promise<void>;
}

export const baseChromeArgs = [
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--disable-gpu',
  '--password-store=basic',
  '--use-mock-keychain',
];

export async function launchChrome(options: LaunchOptions): Promise<LaunchedChrome> {
  options.signal?.throwIfAborted();
  const temporary = options.userDataDir === undefined;
  const userDataDir = options.userDataDir ?? mkdtempSync(join(tmpdir(), 'tabward-profile-'));
  // Chromium's own temp folders (org.chromium.Chromium.*) go inside a profile we delete, even after a crash.
  const ownTmp = join(userDataDir, '.tmp');
  const artifactsDir = join(userDataDir, '.playwright-artifacts');
  mkdirSync(ownTmp, { recursive: true });
  mkdirSync(artifactsDir, { recursive: true });
  const args = [
    ...baseChromeArgs,
    ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
    ...(options.headless ? ['--headless'] : []),
    `--user-data-dir=${userDataDir}`,
    '--remote-debugging-port=0',
    ...(options.extraArgs ?? []),
    'about:blank',
  ];
  const child = spawn(options.executablePath, args, {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, TMPDIR: ownTmp },
  });
  const profileToDelete = temporary ? userDataDir : undefined;
  const forget = remember(child, profileToDelete);
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 200) stderr.push(chunk.toString());
  });
  let closing: Promise<void> | undefined;
  const close = (graceful?: () => Promise<void>) => {
    closing ??= stopChrome(child, profileToDelete, graceful).finally(forget);
    return closing;
  };
  const onAbort = () => void close();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const port = await waitForActivePort(
      child,
      userDataDir,
      options.timeoutMs ?? 30_000,
      stderr,
      options.signal,
    );
    return { wsEndpoint: port.wsEndpoint, userDataDir, pid: child.pid ?? 0, artifactsDir, close };
  } catch (error) {
    await close();
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** Browsers still running, so that tabward exiting by any path (even process.exit) ends them and their profiles. */
const running = new Map<ChildProcess, string | undefined>();

function remember(child: ChildProcess, profile: string | undefined): () => void {
  if (running.size === 0) process.once('exit', killAllSync);
  running.set(child, profile);
  return () => {
    running.delete(child);
    if (running.size === 0) process.removeListener('exit', killAllSync);
  };
}

function killAllSync(): void {
  for (const [child, profile] of running) {
    if (child.pid) killGroup(child.pid, 'SIGKILL');
    if (profile) rmSync(profile, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
  }
}

async function waitForActivePort(
  child: ChildProcess,
  userDataDir: string,
  timeoutMs: number,
  stderr: string[],
  signal: AbortSignal | undefined,
): Promise<ActivePort> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (signal?.aborted)
      throw new TabwardError(
        'browser_unavailable',
        'The browser start was stopped: tabward is shutting down.',
      );
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new TabwardError(
        'browser_unavailable',
        `The browser exited during start-up (${child.exitCode ?? child.signalCode}): ${stderr.join('').slice(-600)}`,
      );
    }
    const port = readPortIfComplete(userDataDir);
    if (port) return port;
    await sleep(50);
  }
  throw new TabwardError('timeout', `The browser did not open its debugging port within ${timeoutMs} ms.`);
}

/** Chrome may be half-way through writing the file; an incomplete one means "not yet". */
function readPortIfComplete(userDataDir: string): ActivePort | undefined {
  try {
    return readActivePort(userDataDir);
  } catch {
    return undefined;
  }
}

async function stopChrome(
  child: ChildProcess,
  profileToDelete: string | undefined,
  graceful: (() => Promise<void>) | undefined,
): Promise<void> {
  const alive = () => child.exitCode === null && child.signalCode === null;
  if (alive() && child.pid) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (graceful) {
      // Browser.close lets Chromium shut down as it would on quit (its temp files removed); a bounded wait.
      await Promise.race([graceful().catch(() => undefined), sleep(2000)]);
      await Promise.race([exited, sleep(2000)]);
    }
    if (alive()) {
      killGroup(child.pid, 'SIGTERM');
      const outcome = await Promise.race([exited.then(() => 'exited'), sleep(3000).then(() => 'slow')]);
      if (outcome === 'slow') {
        killGroup(child.pid, 'SIGKILL');
        await Promise.race([exited, sleep(2000)]);
      }
    }
  }
  // Helpers (renderers, the GPU process) may outlive a browser process that crashed or was killed.
  if (child.pid) killGroup(child.pid, 'SIGKILL');
  if (profileToDelete) await removeWithRetries(profileToDelete);
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
  } catch {
    // already gone
  }
}

/** Chrome's helpers may still be writing for a moment after exit; ENOTEMPTY goes away on a retry. */
async function removeWithRetries(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch {
      await sleep(100 * (attempt + 1));
    }
  }
}
