// A browser tabward launched whose guard could not be set up (the backstop failed to watch its context) is never
// used: it closes with its profile at once, rather than running beside the next start until tabward exits (the
// warm-up's browser would otherwise hold its memory for the whole session, unseen).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NetworkGuard } from '../../src/browser/networkGuard.ts';
import { BrowserSession } from '../../src/browser/session.ts';
import { TabwardError } from '../../src/core/errors.ts';
import { testChromeArgs } from '../helpers/fixtureServer.ts';
import { assertNothingLeft, makePlace, removePlace } from '../helpers/lifecycle.ts';

test('a launched browser that could not be guarded is closed with its profile, not left until shutdown', async () => {
  const place = makePlace();
  const tmpdirBefore = process.env.TMPDIR;
  // The profile and Chromium's own temp files land in the place, where what is left can be seen.
  process.env.TMPDIR = place.tmp;
  const network = {
    protectedPorts: new Set<number>(),
    judgeSocket: () => undefined,
    addCutter: () => () => undefined,
    behindEgressProxy: () => undefined,
    watchContext: async () => {
      throw new TabwardError('internal', 'the backstop failed (test)');
    },
  } as unknown as NetworkGuard;
  const session = new BrowserSession({
    mode: 'isolated',
    headless: true,
    chromeArgs: testChromeArgs,
    attach: {},
    attachTimeoutMs: 5_000,
    notify: () => undefined,
    network,
  });
  try {
    await assert.rejects(session.ensure(), /backstop failed/);
    assert.equal(session.status().pid, undefined, 'no browser listed as starting');
    await assertNothingLeft(place, 10_000);
  } finally {
    await session.close();
    if (tmpdirBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdirBefore;
    removePlace(place);
  }
});
