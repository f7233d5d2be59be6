// One in-process tabward for a describe block, over a browser of its own ('isolated') or over a user's Chrome
// started for it ('shared'): the same attack run in both modes (taint tests).

import { after, before } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { testChromeArgs } from './fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from './inProcessMcp.ts';

export function useBrowserIn(mode: 'isolated' | 'shared'): { connect(): Promise<InProcessMcp> } {
  let chrome: UserChrome | undefined;
  let tw: InProcessBrowser | undefined;
  before(async () => {
    if (mode === 'shared') chrome = await startUserChrome({ chromeArgs: testChromeArgs });
    tw = await startInProcess(chrome ? { mode: 'shared', wsEndpoint: chrome.wsEndpoint } : {});
  });
  after(async () => {
    await tw?.close();
    await chrome?.close();
  });
  return {
    connect: () => {
      if (!tw) throw new Error('the browser starts in before()');
      return tw.connect();
    },
  };
}
