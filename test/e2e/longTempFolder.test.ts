// A temp folder with a long path (TMPDIR of 60 characters here; macOS's own is about 49) made Chromium abort at
// start: its singleton socket inside tabward's temporary profile passed the 107 bytes a Unix socket's path may have
// (found by an attack review). The profile is then made in /tmp, and the browser starts; nothing is left behind.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { profileParent } from '../../src/browser/launch.ts';
import { html, startFixture } from '../helpers/fixtureServer.ts';
import { startMcp } from '../helpers/mcpClient.ts';

test('a long TMPDIR: the isolated browser starts, its profile made where the socket path fits, and removed', async () => {
  const long = join(mkdtempSync('/tmp/tabward-long-'), 'a-temp-folder-with-a-rather-long-name-0123456789');
  mkdirSync(long, { recursive: true });
  assert.ok(long.length >= 60, long);
  assert.equal(profileParent(long), '/tmp', 'a parent whose socket path would not fit is not used');
  assert.equal(profileParent('/tmp'), '/tmp');
  const site = await startFixture({
    '/': (_req, _body, res) => html(res, '<title>Home</title><p>hello</p>'),
  });
  const mcp = await startMcp({ args: ['--mode', 'isolated', '--no-warm-up'], env: { TMPDIR: long } });
  let profile: string | undefined;
  try {
    const opened = await mcp.call('new_page', { url: site.url('home.example', '/') });
    assert.equal(opened.isError, false, `${opened.text}\n${mcp.stderr()}`);
    assert.match(opened.text, /Home/);
    profile = profileOf(mcp.home);
    assert.match(profile ?? '', /^\/tmp\/tabward-profile-/, 'its browser runs on a profile made in /tmp');
  } finally {
    await mcp.close();
    await site.close();
  }
  assert.equal(existsSync(profile ?? ''), false, 'the profile made in /tmp is gone with its browser');
  rmSync(join(long, '..'), { recursive: true, force: true });
});

/** The --user-data-dir of the browser that this tabward (known by its TABWARD_HOME, which Chromium inherits) runs. */
function profileOf(home: string): string | undefined {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`TABWARD_HOME=${home}\0`)) continue;
      const dir = /--user-data-dir=([^\0]+)/.exec(readFileSync(`/proc/${pid}/cmdline`, 'latin1'))?.[1];
      if (dir) return dir;
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}
