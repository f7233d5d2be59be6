// Launching a Chromium of our own: a fresh temporary profile, remote debugging on a free port (found through
// DevToolsActivePort, like the user's Chrome), spawned detached so that closing ends the whole process group,
// and the profile deleted on close.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
}

export interface LaunchedChrome {
  readonly wsEndpoint: string;
  readonly userDataDir: string;
  readonly pid: number;
  close(): Promise<void>;
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
  const temporary = options.userDataDir === undefined;
  const userDataDir = options.userDataDir ?? mkdtempSync(join(tmpdir(), 'tabward-profile-'));
  const args = [
    ...baseChromeArgs,
    ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
    ...(options.headless ? ['--headless'] : []),
    `--user-data-dir=${userDataDir}`,
    '--remote-debugging-port=0',
    ...(options.extraArgs ?? []),
    'about:blank',
  ];
  const child = spawn(options.executablePath, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 200) stderr.push(chunk.toString());
  });
  const close = () => stopChrome(child, temporary ? userDataDir : undefined);
  try {
    const port = await waitForActivePort(child, userDataDir, options.timeoutMs ?? 30_000, stderr);
    return { wsEndpoint: port.wsEndpoint, userDataDir, pid: child.pid ?? 0, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function waitForActivePort(
  child: ChildProcess,
  userDataDir: string,
  timeoutMs: number,
  stderr: string[],
): Promise<ActivePort> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
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

async function stopChrome(child: ChildProcess, profileToDelete: string | undefined): Promise<void> {
  if (child.exitCode === null && child.signalCode === null && child.pid) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    killGroup(child.pid, 'SIGTERM');
    const outcome = await Promise.race([exited.then(() => 'exited'), sleep(3000).then(() => 'slow')]);
    if (outcome === 'slow') {
      killGroup(child.pid, 'SIGKILL');
      await Promise.race([exited, sleep(2000)]);
    }
  }
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
