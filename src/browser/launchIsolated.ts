// The isolated browser: a Chromium launched by Playwright and driven over a pipe (--remote-debugging-pipe), in a
// fresh temporary profile of tabward's own, with tabward's flags only (Playwright's defaults are left out). No port
// to poll for and no WebSocket to open: about a second less to the first tab than launching with a port and
// attaching over CDP, and no debugging port that another local process could reach. Closing asks Chromium to quit
// (Browser.close) before ending its process group; the profile goes however the browser ends. Playwright's own
// SIGINT/SIGTERM/SIGHUP handlers stay off: tabward's shutdown decides when the browser closes.

import { readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, BrowserContext } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import { loadChromium } from './connect.ts';
import { settledWithin } from './deadline.ts';
import {
  chromeArgs,
  killGroup,
  type LaunchOptions,
  prepareProfile,
  rememberBrowser,
  removeWithRetries,
} from './launch.ts';

export interface IsolatedBrowser {
  readonly browser: Browser;
  /** The profile's own context: every tab of the agent lives here. */
  readonly context: BrowserContext;
  readonly userDataDir: string;
  /** The browser process, leader of its process group (0 if Chromium did not say). */
  readonly pid: number;
  /** Browser.close, then the process group, then the temporary profile. Safe to call more than once. */
  close(): Promise<void>;
}

export async function launchIsolated(options: LaunchOptions): Promise<IsolatedBrowser> {
  options.signal?.throwIfAborted();
  const profile = prepareProfile(options.userDataDir);
  const profileToDelete = profile.temporary ? profile.userDataDir : undefined;
  let pid = 0;
  // Before the pipe answers, the browser is found by the lock it takes on its profile.
  const pidNow = () => pid || lockHolder(profile.userDataDir);
  // Registered before the launch: tabward exiting while Chromium starts still ends it and removes the profile.
  const forget = rememberBrowser(pidNow, profileToDelete);
  // Playwright's launch cannot be cancelled: stopping one in flight kills the browser, which fails the launch.
  const stopStarting = () => void killWhileStarting(pidNow, launched);
  const { promise: launched, resolve: done } = settledSignal();
  options.signal?.addEventListener('abort', stopStarting, { once: true });
  let context: BrowserContext;
  try {
    const chromium = await loadChromium();
    options.signal?.throwIfAborted();
    context = await chromium.launchPersistentContext(profile.userDataDir, {
      executablePath: options.executablePath,
      headless: options.headless,
      ignoreDefaultArgs: true,
      args: chromeArgs(options, profile.userDataDir, '--remote-debugging-pipe', false),
      env: { ...process.env, TMPDIR: profile.ownTmp },
      artifactsDir: profile.artifactsDir,
      // As a browser attached over CDP: the window's own size, no emulated viewport.
      viewport: null,
      timeout: options.timeoutMs ?? 30_000,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (error) {
    forget();
    if (profileToDelete) await removeWithRetries(profileToDelete);
    if (options.signal?.aborted)
      throw new TabwardError(
        'browser_unavailable',
        'The browser start was stopped: tabward is shutting down.',
      );
    const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    throw new TabwardError('browser_unavailable', `The browser did not start: ${message.slice(0, 600)}`);
  } finally {
    done();
    options.signal?.removeEventListener('abort', stopStarting);
  }
  const browser = context.browser();
  pid = lockHolder(profile.userDataDir) || (browser ? await browserPid(browser) : 0);
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= stop(context, browser, pid, profileToDelete).finally(forget);
    return closing;
  };
  // Asked to stop just as the launch finished: closed at once.
  if (!browser || options.signal?.aborted) {
    await close();
    throw new TabwardError(
      'browser_unavailable',
      browser
        ? 'The browser start was stopped: tabward is shutting down.'
        : 'The browser started without a handle.',
    );
  }
  return { browser, context, userDataDir: profile.userDataDir, pid, close };
}

function settledSignal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** The process holding the profile's lock (Chromium's SingletonLock links to "<host>-<pid>"), 0 if none yet. */
function lockHolder(userDataDir: string): number {
  try {
    return Number(/-(\d+)$/.exec(readlinkSync(join(userDataDir, 'SingletonLock')))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

async function killWhileStarting(pid: () => number, launched: Promise<void>): Promise<void> {
  let settled = false;
  void launched.then(() => {
    settled = true;
  });
  while (!settled) {
    const id = pid();
    if (id) {
      killGroup(id, 'SIGKILL');
      return;
    }
    await sleep(25);
  }
}

/** The browser process's id, as Chromium reports it (Playwright does not hand out the process of a pipe launch). */
async function browserPid(browser: Browser): Promise<number> {
  try {
    const cdp = await browser.newBrowserCDPSession();
    const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as {
      processInfo: { type: string; id: number }[];
    };
    void cdp.detach().catch(() => undefined);
    return processInfo.find((info) => info.type === 'browser')?.id ?? 0;
  } catch {
    return 0;
  }
}

async function stop(
  context: BrowserContext,
  browser: Browser | null,
  pid: number,
  profileToDelete: string | undefined,
): Promise<void> {
  if (browser?.isConnected()) {
    // Browser.close lets Chromium quit as it would for a user (its temp files removed). Its answer may never come
    // (the pipe closes as the browser exits), so with the process known, its exit is what is waited for.
    const asked = closeOverCdp(browser).catch(() => undefined);
    if (pid) await until(() => !alive(pid), 2000);
    else await settledWithin(asked, 2000);
  }
  if (alive(pid)) {
    killGroup(pid, 'SIGTERM');
    if (!(await until(() => !alive(pid), 3000))) {
      killGroup(pid, 'SIGKILL');
      await until(() => !alive(pid), 2000);
    }
  }
  // Helpers (renderers, the GPU process) may outlive a browser process that crashed or was killed.
  if (pid) killGroup(pid, 'SIGKILL');
  // With its process gone, Playwright's side ends at once (a pid unknown: Playwright closes it the slow way).
  await settledWithin(context.close(), pid ? 2000 : 10_000);
  if (profileToDelete) await removeWithRetries(profileToDelete);
}

async function closeOverCdp(browser: Browser): Promise<void> {
  const cdp = await browser.newBrowserCDPSession();
  await cdp.send('Browser.close');
}

function alive(pid: number): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
  return true;
}
