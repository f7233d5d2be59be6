// Launching a Chromium of tabward's own with remote debugging on a free port (found through DevToolsActivePort,
// like the user's Chrome): the stand-in for "your Chrome" in the demo and the tests. The isolated browser is
// launched over a pipe instead (launchIsolated.ts); both share what is here: a fresh temporary profile, the flags,
// a process group ended as a whole, and the profile deleted on close. Everything such a browser leaves on disk lives
// under its profile (its temp folder too), and every way it can end (closed, crashed, killed, tabward exiting)
// removes that profile.

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { swallowed } from '../core/debug.ts';
import { TabwardError } from '../core/errors.ts';
import { settledWithin } from './deadline.ts';
import { type ActivePort, readActivePort } from './devToolsActivePort.ts';
import { type Reaper, startReaper } from './profileReaper.ts';

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
  // Start-up work a throwaway automation profile never needs: about 0.2 s of a cold start here (bench/results.md).
  '--disable-field-trial-config',
  '--disable-breakpad',
  '--disable-client-side-phishing-detection',
  '--disable-component-extensions-with-background-pages',
  '--disable-default-apps',
  '--disable-dev-shm-usage',
  '--disable-search-engine-choice-screen',
  '--metrics-recording-only',
  '--no-service-autorun',
  // A tab the agent is not looking at must not be slowed down (its timers, its renderer), nor make a sound.
  '--disable-background-timer-throttling',
  '--disable-backgrounding-occluded-windows',
  '--disable-renderer-backgrounding',
  '--mute-audio',
  // A SharedWorker is a target of its own that neither Playwright's routes nor a tab's CDP session intercepts: its
  // requests would pass the network backstop unseen. In the browsers tabward starts the API is not there at all
  // (pages feature-detect it); in the user's Chrome it is a documented residual (docs/security.md).
  '--disable-shared-workers',
];

export async function launchChrome(options: LaunchOptions): Promise<LaunchedChrome> {
  options.signal?.throwIfAborted();
  refuseNonSwitches(options.extraArgs);
  const profile = prepareProfile(options.userDataDir);
  const { userDataDir, artifactsDir } = profile;
  const { child, stderr } = spawnChrome(options, profile, '--remote-debugging-port=0');
  const profileToDelete = profile.temporary ? userDataDir : undefined;
  const forget = rememberBrowser(() => child.pid, profileToDelete, profile.reaper);
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

export interface Profile {
  readonly userDataDir: string;
  /** Made by tabward (and removed with its browser), not given by the user. */
  readonly temporary: boolean;
  /** Chromium's own temp folders (org.chromium.Chromium.*) go here, inside a profile we delete, even after a crash. */
  readonly ownTmp: string;
  /** Where Playwright keeps its artifacts (downloads, traces) for this browser: inside the profile. */
  readonly artifactsDir: string;
  /** Ends the browser and removes a temporary profile if tabward is killed outright (profileReaper.ts). */
  readonly reaper: Reaper;
}

/**
 * Where a temporary profile is made: the system's temp folder, unless its path is so long that Chromium's
 * singleton socket inside the profile (`.tmp/org.chromium.Chromium.XXXXXX/SingletonSocket`) would pass the 107
 * bytes a Unix socket's path may have, and the browser would abort at start (a TMPDIR of 40 characters did; macOS's
 * own is about 49): then /tmp.
 */
export function profileParent(temp = tmpdir()): string {
  const socket = join(
    temp,
    'tabward-profile-XXXXXX',
    '.tmp',
    'org.chromium.Chromium.XXXXXX',
    'SingletonSocket',
  );
  // Windows has no such socket (and its C:\\tmp is no private place).
  if (process.platform === 'win32' || Buffer.byteLength(socket) <= 107 || !existsSync('/tmp')) return temp;
  return '/tmp';
}

export function prepareProfile(given: string | undefined): Profile {
  const userDataDir = given ?? mkdtempSync(join(profileParent(), 'tabward-profile-'));
  // At once, before the browser is spawned: tabward killed from here on leaves nothing.
  const reaper = startReaper(given === undefined ? userDataDir : undefined);
  const ownTmp = join(userDataDir, '.tmp');
  const artifactsDir = join(userDataDir, '.playwright-artifacts');
  mkdirSync(ownTmp, { recursive: true });
  mkdirSync(artifactsDir, { recursive: true });
  return { userDataDir, temporary: given === undefined, ownTmp, artifactsDir, reaper };
}

/**
 * tabward's flags for a browser of its own, with how it is to be driven (a port, or a pipe) before the page. It
 * starts with one blank tab: a headless one's renderer starts with the browser (launchIsolated.ts hands that tab to
 * the agent), and a headed browser keeps its window, or closing the agent's last tab would quit it.
 */
export function chromeArgs(options: LaunchOptions, userDataDir: string, debugging: string): string[] {
  return [
    ...baseChromeArgs,
    ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
    // Headless, the start-up infobars (an unsupported flag: --no-sandbox as root, --ignore-certificate-errors) are
    // seen by nobody, yet take 56 px off the top of the first tab, which is the agent's: its viewport would differ
    // from every later tab's. A window keeps them, for the human who sees it.
    ...(options.headless ? ['--headless', '--disable-infobars'] : []),
    `--user-data-dir=${userDataDir}`,
    debugging,
    ...(options.extraArgs ?? []),
    'about:blank',
  ];
}

/**
 * Extra arguments must be switches: Chromium opens any other argument as a page at start, in a tab that loads before
 * tabward's guard watches it. Pages are opened with navigate_page or new_page.
 */
export function refuseNonSwitches(extraArgs: readonly string[] | undefined): void {
  // A lone "--" (or "-") ends Chromium's switches: every switch after it, tabward's proxy and features among them,
  // would be opened as pages instead (an attack review).
  const page = extraArgs?.find((arg) => !arg.startsWith('-') || /^-{1,2}$/.test(arg));
  if (page === undefined) return;
  throw new TabwardError(
    'bad_input',
    `The browser argument "${page.slice(0, 200)}" is not a Chromium switch: Chromium would open it as a page before tabward's guard watches the tab.`,
    'Give --chrome-arg switches only (starting with --); open pages with navigate_page or new_page.',
  );
}

/** Browsers still running, so that tabward exiting by any path (even process.exit) ends them and their profiles. */
const running = new Map<symbol, { readonly pid: () => number | undefined; readonly profile?: string }>();

/**
 * Until the returned function is called, tabward's exit kills the browser's process group and removes its profile;
 * so does a reaper process (profileReaper.ts) if tabward is killed outright, which runs no exit handler.
 */
export function rememberBrowser(
  pid: () => number | undefined,
  profile: string | undefined,
  reaper: Reaper = startReaper(profile),
): () => void {
  if (running.size === 0) process.once('exit', killAllSync);
  const key = Symbol('browser');
  running.set(key, { pid, ...(profile ? { profile } : {}) });
  const group = pid();
  if (group) reaper.adopt(group);
  return () => {
    reaper.done();
    running.delete(key);
    if (running.size === 0) process.removeListener('exit', killAllSync);
  };
}

/** A folder tabward made for a browser it did not launch itself (the demo's "your Chrome"): removed at exit too. */
export function removeAtExit(dir: string): () => void {
  return rememberBrowser(() => undefined, dir);
}

/**
 * Runs inside process.exit, so it must never throw: an exception there makes process.exit return without exiting,
 * and a tabward with a server listening would live on. Chromium's helpers can still be writing into the profile for
 * a moment after the kill (ENOTEMPTY): one more try after they had time to die, then it is said, not thrown.
 */
function killAllSync(): void {
  for (const { pid, profile } of running.values()) {
    try {
      const id = pid();
      if (id) {
        killGroup(id, 'SIGKILL');
        // On a loaded machine the group's helpers take a while to die and write into the profile meanwhile: a
        // removal before they are gone leaves a folder behind (ENOTEMPTY). Wait for the group, bounded.
        waitForGroupGoneSync(id, 2_000);
      }
      if (profile) removeProfileSync(profile);
    } catch (error) {
      sayAtExit(`tabward: could not remove the browser profile ${profile ?? ''}: ${String(error)}`);
    }
  }
}

function waitForGroupGoneSync(pgid: number, ms: number): void {
  if (process.platform !== 'linux') return;
  const deadline = Date.now() + ms;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (Date.now() < deadline && groupRunsSync(pgid))
    // A synchronous pause: nothing asynchronous runs during an exit.
    Atomics.wait(pause, 0, 0, 25);
}

/**
 * Whether a process of the group still runs, read from /proc: kill(-pgid, 0) would say yes for as long as the
 * leader, tabward's own child, is a zombie nobody reaps during an exit.
 */
function groupRunsSync(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(group) === pgid && state !== 'Z' && state !== 'X') return true;
    } catch (error) {
      // gone meanwhile
      swallowed('browser', 'launch.groupRunsSync: gone meanwhile', error);
    }
  }
  return false;
}

function removeProfileSync(profile: string): void {
  const remove = () => rmSync(profile, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
  try {
    remove();
  } catch {
    // A synchronous pause: nothing asynchronous runs during an exit.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    remove();
  }
}

function sayAtExit(line: string): void {
  try {
    writeSync(2, `${line}\n`);
  } catch {
    // stderr is gone with the client (nowhere to say it, the debug channel included)
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
    if (child.exitCode !== null || child.signalCode !== null)
      throw exitedDuringStart(child.exitCode ?? child.signalCode, stderr);
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

/**
 * Chromium with tabward's flags, driven by `debugging` (a port, or the pipe on its fds 3 and 4), leader of its own
 * process group, its temp folders inside the profile. What it says on stderr is kept (the first 200 chunks, enough to
 * say why a start failed) and the rest drained, so that it never blocks on a full pipe.
 */
export function spawnChrome(
  options: LaunchOptions,
  profile: Profile,
  debugging: '--remote-debugging-port=0' | '--remote-debugging-pipe',
): { child: ChildProcess; stderr: string[] } {
  const pipe = debugging === '--remote-debugging-pipe';
  const child = spawn(options.executablePath, chromeArgs(options, profile.userDataDir, debugging), {
    detached: process.platform !== 'win32',
    stdio: pipe ? ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, TMPDIR: profile.ownTmp },
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 200) stderr.push(chunk.toString());
  });
  return { child, stderr };
}

export function exitedDuringStart(how: number | string | null, stderr: readonly string[]): TabwardError {
  const said = stderr.join('').trim().slice(-600) || 'it said nothing on stderr';
  return new TabwardError('browser_unavailable', `The browser exited during start-up (${how}): ${said}`);
}

export async function stopChrome(
  child: ChildProcess,
  profileToDelete: string | undefined,
  graceful: (() => Promise<void>) | undefined,
): Promise<void> {
  const alive = () => child.exitCode === null && child.signalCode === null;
  if (alive() && child.pid) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (graceful) {
      // Browser.close lets Chromium shut down as it would on quit (its temp files removed); a bounded wait.
      await settledWithin(graceful(), 2000);
      await settledWithin(exited, 2000);
    }
    if (alive()) {
      killGroup(child.pid, 'SIGTERM');
      const exitedInTime = await settledWithin(
        exited.then(() => true),
        3000,
      );
      if (!exitedInTime) {
        killGroup(child.pid, 'SIGKILL');
        await settledWithin(exited, 2000);
      }
    }
  }
  // Helpers (renderers, the GPU process) may outlive a browser process that crashed or was killed.
  if (child.pid) killGroup(child.pid, 'SIGKILL');
  if (child.pid && profileToDelete) await groupGone(child.pid, 2_000);
  if (profileToDelete) await removeWithRetries(profileToDelete);
}

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
  } catch (error) {
    // already gone
    swallowed('browser', 'launch.killGroup: already gone', error);
  }
}

/**
 * Waits (bounded) until no process of the group runs. Removing a profile while the killed browser's helpers still
 * write into it fails (ENOTEMPTY) and was retried with growing pauses, seconds in all under load: longer than an
 * MCP client waits after closing tabward's stdin before it kills tabward outright, which leaves the profile behind.
 */
export async function groupGone(pgid: number, ms: number): Promise<void> {
  if (process.platform !== 'linux') return;
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && groupRunsSync(pgid)) await sleep(25);
}

/** Chrome's helpers may still be writing for a moment after exit; ENOTEMPTY goes away on a retry. */
export async function removeWithRetries(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch {
      await sleep(100 * (attempt + 1));
    }
  }
}
