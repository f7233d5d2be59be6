// Extra browser arguments are switches only: anything else Chromium would open as a page at start, in a tab that
// loads before tabward's guard watches it. Refused before any browser or profile exists.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchChrome } from '../../../src/browser/launch.ts';
import { launchIsolated } from '../../../src/browser/launchIsolated.ts';
import { TabwardError } from '../../../src/core/errors.ts';

const refused = (error: unknown) =>
  error instanceof TabwardError &&
  error.code === 'bad_input' &&
  error.message.includes('is not a Chromium switch') &&
  (error.hint ?? '').includes('navigate_page');

// A lone "--" ends the switches: every switch after it (tabward's proxy among them) would be opened as a page.
for (const page of [
  'https://github.com/settings',
  'github.com',
  'about:blank',
  'file:///etc/passwd',
  '--',
  '-',
]) {
  test(`a page among the extra arguments is refused: ${page}`, async () => {
    // A path that cannot start anything: the refusal comes before any spawn.
    const options = {
      executablePath: '/nonexistent/chromium',
      headless: true,
      extraArgs: ['--mute-audio', page],
    };
    await assert.rejects(launchIsolated(options), refused);
    await assert.rejects(launchChrome(options), refused);
  });
}
