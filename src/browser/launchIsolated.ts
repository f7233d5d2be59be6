// The isolated browser: a Chromium of tabward's own, driven over a pipe (--remote-debugging-pipe), in a fresh
// temporary profile, with tabward's flags only. tabward spawns it and hands the pipe to Playwright
// (connectOverCDP with a transport, pipeTransport.ts) rather than have Playwright launch it, so the browser and its
// first tab start while playwright-core loads. No port to poll for and no WebSocket to open, and no debugging port
// that another local process could reach. Closing asks Chromium to quit (Browser.close) before ending its process
// group; the profile goes however the browser ends. Playwright installs no signal handlers for a browser it did not
// launch: tabward's shutdown decides when the browser closes.

import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import { loadChromium, withRefEngine } from './connect.ts';
import { settledWithin } from './deadline.ts';
import {
  exitedDuringStart,
  groupGone,
  killGroup,
  type LaunchOptions,
  prepareProfile,
  refuseNonSwitches,
  rememberBrowser,
  removeWithRetries,
  spawnChrome,
  stopChrome,
} from './launch.ts';
import { registerPipe } from './pipeSession.ts';
import { PipeTransport } from './pipeTransport.ts';

export interface IsolatedBrowser {
  readonly browser: Browser;
  /** The profile's own context: every tab of the agent lives here. */
  readonly context: BrowserContext;
  readonly userDataDir: string;
  /** The browser process, leader of its process group. */
  readonly pid: number;
  /** The blank tab the browser started with, if it is there: the agent's first tab, with no tab to open. */
  readonly firstTab: Page | undefined;
  /** Browser.close, then the process group, then the temporary profile. Safe to call more than once. */
  close(): Promise<void>;
}

export async function launchIsolated(options: LaunchOptions): Promise<IsolatedBrowser> {
  options.signal?.throwIfAborted();
  refuseNonSwitches(options.extraArgs);
  const profile = prepareProfile(options.userDataDir);
  const profileToDelete = profile.temporary ? profile.userDataDir : undefined;
  // Spawned before playwright-core is loaded: the browser boots (its first tab's renderer too) on another core
  // while the library loads here, about 0.15 s of the first call's wait (bench/results.md, eighth pass).
  const { child, stderr } = spawnChrome(options, profile, '--remote-debugging-pipe');
  const pid = child.pid ?? 0;
  // Registered at once: tabward exiting while Chromium starts still ends it and removes the profile.
  const forget = rememberBrowser(() => pid, profileToDelete, profile.reaper);
  const failed = startFailure(child, stderr, options.signal);
  let browser: Browser;
  try {
    const toBrowser = child.stdio[3] as Writable | null;
    const fromBrowser = child.stdio[4] as Readable | null;
    if (!pid || !toBrowser || !fromBrowser) throw await failed.reason;
    const chromium = await loadChromium();
    options.signal?.throwIfAborted();
    const transport = new PipeTransport(toBrowser, fromBrowser);
    browser = await Promise.race([
      chromium
        .connectOverCDP(transport, {
          timeout: options.timeoutMs ?? 30_000,
          artifactsDir: profile.artifactsDir,
        })
        .then(withRefEngine),
      failed.reason,
    ]);
    registerPipe(browser, transport);
  } catch (error) {
    failed.stop();
    if (pid) killGroup(pid, 'SIGKILL');
    if (pid && profileToDelete) await groupGone(pid, 2_000);
    // Forgotten only once removed: tabward exiting meanwhile (a client gone during the start) still removes it.
    if (profileToDelete) await removeWithRetries(profileToDelete);
    forget();
    if (options.signal?.aborted)
      throw new TabwardError(
        'browser_unavailable',
        'The browser start was stopped: tabward is shutting down.',
      );
    if (error instanceof TabwardError) throw error;
    const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    throw new TabwardError(
      'browser_unavailable',
      `The browser did not start: ${message.slice(0, 300)} ${stderr.join('').slice(-300)}`.trim(),
    );
  }
  failed.stop();
  // The browser's own profile: the one its command line named, where every tab of the agent lives.
  const context = browser.contexts()[0];
  let closing: Promise<void> | undefined;
  const close = () => {
    // Browser.close lets Chromium quit as it would for a user (its temp files removed); then its process group.
    // With the process gone (the pipe with it), Playwright's side ends at once.
    closing ??= stopChrome(child, profileToDelete, () => closeOverCdp(browser))
      .then(async () => {
        await settledWithin(browser.close(), 2000);
      })
      .finally(forget);
    return closing;
  };
  // Asked to stop just as the start finished: closed at once.
  if (!context || options.signal?.aborted) {
    await close();
    throw new TabwardError(
      'browser_unavailable',
      context
        ? 'The browser start was stopped: tabward is shutting down.'
        : 'The browser started without its default profile.',
    );
  }
  const firstTab = context.pages().find((page) => page.url() === 'about:blank');
  return { browser, context, userDataDir: profile.userDataDir, pid, firstTab, close };
}

/**
 * Rejects (with what the browser said on stderr) when the start cannot succeed: the process would not spawn or
 * exited, or tabward began shutting down, in which case the browser is killed. `stop` ends the watch.
 */
function startFailure(
  child: ChildProcess,
  stderr: readonly string[],
  signal: AbortSignal | undefined,
): { reason: Promise<never>; stop: () => void } {
  let fail: (error: Error) => void = () => undefined;
  const reason = new Promise<never>((_, reject) => {
    fail = reject;
  });
  // Only ever awaited in a race: unobserved otherwise.
  reason.catch(() => undefined);
  const onError = (error: Error) =>
    fail(new TabwardError('browser_unavailable', `The browser did not start: ${error.message}`));
  const onExit = (code: number | null, signalName: string | null) =>
    fail(exitedDuringStart(code ?? signalName, stderr));
  const onAbort = () => {
    if (child.pid) killGroup(child.pid, 'SIGKILL');
    fail(new TabwardError('browser_unavailable', 'The browser start was stopped: tabward is shutting down.'));
  };
  child.on('error', onError);
  child.once('exit', onExit);
  signal?.addEventListener('abort', onAbort, { once: true });
  return {
    reason,
    stop: () => {
      child.off('exit', onExit);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

async function closeOverCdp(browser: Browser): Promise<void> {
  const cdp = await browser.newBrowserCDPSession();
  await cdp.send('Browser.close');
}
