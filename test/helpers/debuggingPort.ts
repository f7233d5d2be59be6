// The isolated browser is driven over a pipe. A test that must also reach it over CDP (to crash a tab, to change a
// page behind tabward's back, to use it as another tabward's remote browser) starts it with a debugging port of its
// own and finds that port in the profile's DevToolsActivePort.

import { readActivePort } from '../../src/browser/devToolsActivePort.ts';
import { waitFor } from './waitFor.ts';

/** Chromium flags for such a browser (passed as --chrome-arg, or as chromeArgs in process). */
export const debuggingPortArgs: readonly string[] = ['--remote-debugging-port=0'];

/** The CDP endpoint of the browser whose profile is given, or named in a browser_status text. */
export async function debuggingEndpoint(profileOrStatus: string): Promise<string> {
  const profile = /temporary profile: (\S+)/.exec(profileOrStatus)?.[1] ?? profileOrStatus;
  return waitFor(`DevToolsActivePort in ${profile}`, () => readActivePort(profile)?.wsEndpoint);
}
