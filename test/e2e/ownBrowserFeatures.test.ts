// The browser tabward starts itself runs without the Chromium features it disables (session.ts
// withOwnBrowserFeatures): no separate process for sandboxed iframes (the backstop must see their first request),
// no WebUI renderers for the address bar's popup competing with the first tab, no form predictions or time asked of
// Google (ownBrowserQuiet.test.ts); a --disable-features the user gave is kept, merged into the same switch (Chromium
// reads only the last one).

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { BrowserSession } from '../../src/browser/session.ts';
import { testChromeArgs } from '../helpers/fixtureServer.ts';

const session = new BrowserSession({
  mode: 'isolated',
  headless: true,
  chromeArgs: [...testChromeArgs, '--disable-features=Translate'],
  attach: {},
  attachTimeoutMs: 10_000,
  notify: () => undefined,
});
after(() => session.close());

test('the isolated browser starts no address-bar WebUI and keeps the user’s --disable-features', async () => {
  const tab = await session.newPage();
  const cdp = await tab.page.context().newCDPSession(tab.page);
  const { targetInfos } = (await cdp.send('Target.getTargets')) as {
    targetInfos: { type: string; url: string }[];
  };
  const others = targetInfos.filter((target) => target.type !== 'page' || target.url !== 'about:blank');
  assert.deepEqual(others, [], 'only the agent’s tab, no chrome://omnibox-popup renderers');
  await tab.page.goto('chrome://version', { timeout: 10_000 });
  const commandLine = await tab.page.locator('#command_line').innerText({ timeout: 10_000 });
  const switches = commandLine.split(/\s+/).filter((arg) => arg.startsWith('--disable-features='));
  assert.deepEqual(switches, [
    '--disable-features=Translate,IsolateSandboxedIframes,WebUIOmniboxPopup,WebUIOmniboxAimPopup,AutofillServerCommunication,NetworkTimeServiceQuerying,WebRtcHideLocalIpsWithMdns',
  ]);
});
