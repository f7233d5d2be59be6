// "Your Chrome" for the demo and the tests: a second Chromium with its own profile and remote debugging on,
// logged in to a site through its real login form, with a tab of its own left open.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectCdp } from '../browser/connect.ts';
import { findChrome } from '../browser/findChrome.ts';
import { launchChrome, removeAtExit } from '../browser/launch.ts';

export interface UserChrome {
  readonly userDataDir: string;
  readonly wsEndpoint: string;
  close(): Promise<void>;
}

export interface UserChromeOptions {
  readonly chromeArgs: readonly string[];
  readonly executablePath?: string;
  /** Log in through this form: page URL, user name, password. */
  readonly login?: { readonly url: string; readonly username: string; readonly password: string };
  /** A tab the user keeps open. */
  readonly openTab?: string;
}

export async function startUserChrome(options: UserChromeOptions): Promise<UserChrome> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'tabward-your-chrome-'));
  // Ctrl-C, a crash of the demo, any exit: the folder goes with the browser (which launchChrome already ends).
  const forgetFolder = removeAtExit(userDataDir);
  const chrome = await launchChrome({
    executablePath: findChrome(options.executablePath),
    headless: true,
    userDataDir,
    extraArgs: options.chromeArgs,
  });
  const browser = await connectCdp(chrome.wsEndpoint, 20_000, () => undefined);
  try {
    const context = browser.contexts()[0];
    const tab = context?.pages()[0] ?? (await context?.newPage());
    if (!tab) throw new Error('the demo Chrome has no tab');
    if (options.login) {
      await tab.goto(options.login.url, { timeout: 20_000 });
      await tab.getByLabel('User name').fill(options.login.username);
      await tab.getByLabel('Password').fill(options.login.password);
      await Promise.all([
        tab.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 20_000 }),
        tab.getByRole('button', { name: 'Sign in' }).click(),
      ]);
    }
    if (options.openTab) await tab.goto(options.openTab, { timeout: 20_000 });
  } finally {
    // Disconnect only: the browser and its tab stay open, like a user's.
    await browser.close();
  }
  return {
    userDataDir,
    wsEndpoint: chrome.wsEndpoint,
    close: async () => {
      await chrome.close();
      rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      forgetFolder();
    },
  };
}
