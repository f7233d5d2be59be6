// Silencing a tab before it closes: its out-of-process frames' scripts off and their requests blocked, then its
// renderer stopped, so that no unload handler sends anything as the tab goes. TrackedPage.silence
// (browser/pages.ts) is this.

import type { Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { withDeadline } from './deadline.ts';

/**
 * Stops the page's renderer, so that no unload handler runs when the tab is closed next. Its out-of-process frames
 * live in other renderers (shared with other tabs of their site, so not crashed): their scripts are switched off
 * and their requests blocked first, so that no `pagehide` beacon leaves as they are torn down. In the browsers
 * tabward starts the egress proxy stops such a request anyway; in the user's Chrome this is all there is.
 */
export async function silencePage(page: Page, timeoutMs: number, gone: () => boolean): Promise<void> {
  await withDeadline(freezeFrames(page), timeoutMs / 2, 'Stopping the frames').catch(
    swallow(
      'browser',
      'tabSilence.silencePage: withDeadline(freezeFrames(page), timeoutMs / 2, "Stopping the frames")',
    ),
  );
  const crash = async () => {
    const cdp = await page.context().newCDPSession(page);
    // The renderer dies before it answers: the reply never comes, the crash event does.
    void cdp.send('Page.crash').catch(swallow('browser', 'tabSilence.silencePage: cdp.send("Page.crash")'));
    await new Promise<void>((resolve) => {
      if (gone()) resolve();
      page.once('crash', () => resolve());
      page.once('close', () => resolve());
    });
  };
  await withDeadline(crash(), timeoutMs, 'Stopping the page').catch(
    swallow('browser', 'tabSilence.silencePage: withDeadline(crash(), timeoutMs, "Stopping the page")'),
  );
}

async function freezeFrames(page: Page): Promise<void> {
  const frames = page.frames().filter((frame) => frame !== page.mainFrame());
  await Promise.all(
    frames.map(async (frame) => {
      // Only an out-of-process frame has a session of its own; the others die with the main renderer.
      const cdp = await page
        .context()
        .newCDPSession(frame)
        .catch(swallow('browser', 'tabSilence.freezeFrames: a frame with no session of its own'));
      if (!cdp) return;
      await Promise.all([
        cdp.send('Emulation.setScriptExecutionDisabled', { value: true }),
        cdp.send('Network.enable').then(() => cdp.send('Network.setBlockedURLs', { urls: ['*'] })),
      ]).catch(swallow('browser', 'tabSilence.freezeFrames: switching off a frame’s scripts and requests'));
    }),
  );
}
