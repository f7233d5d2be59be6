// tabward survives its browser (issue 18, items 3, 7 and 8): the isolated Chromium killed under it, and the user's
// Chrome dying in shared mode. The dead browser's profile and temp folders go at once, the agent is told what
// changed with its next result, and an old tab id says its browser is gone. Each test has its own TMPDIR and
// TABWARD_HOME and ends with nothing of it left and every call audited at start and end.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findChrome } from '../../src/browser/findChrome.ts';
import { launchChrome } from '../../src/browser/launch.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import {
  assertNothingLeft,
  auditedCalls,
  isAlive,
  makePlace,
  processesMentioning,
  removePlace,
  startIn,
} from '../helpers/lifecycle.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('tabward survives its browser', () => {
  let site: Fixture;

  before(async () => {
    site = await startFixture({ '/': (_req, _body, res) => html(res, '<title>Home</title><h1>Home</h1>') });
  });
  after(async () => {
    await site?.close();
  });

  test('the browser killed: its profile goes at once, the next call says so, an old tab id says why', async () => {
    const place = makePlace();
    const mcp = await startIn(place);
    try {
      const first = await mcp.call('new_page', { url: site.url('site.test', '/') });
      const tab = /Tab (p\d+)/.exec(first.text)?.[1] ?? '';
      const status = (await mcp.call('browser_status')).text;
      const pid = Number(/\(pid (\d+)\)/.exec(status)?.[1]);
      const profile = /temporary profile: (\S+)/.exec(status)?.[1] ?? '';
      assert.ok(pid > 0 && existsSync(profile), status);

      // The browser process alone, as a crash would end it: its helpers and its profile are tabward's to clean.
      process.kill(pid, 'SIGKILL');
      await waitFor('the dead browser cleaned up', () => !existsSync(profile), { timeoutMs: 15_000 });
      assert.deepEqual(processesMentioning(profile), []);

      const again = await mcp.call('new_page', { url: site.url('site.test', '/') });
      assert.ok(!again.isError, again.text);
      assert.match(again.text, /^The browser closed or crashed; the next call starts a new one\./);
      const old = await mcp.call('take_snapshot', { pageId: tab });
      assert.ok(old.isError, old.text);
      assert.match(old.text, new RegExp(`page_closed: Tab ${tab} belonged to a browser that is gone`));
      // Told once: the next result is plain.
      assert.doesNotMatch((await mcp.call('list_pages')).text, /closed or crashed/);

      await mcp.close();
      await waitFor('tabward exits', () => !isAlive(mcp.pid));
      await assertNothingLeft(place);
      assert.deepEqual(
        auditedCalls(place).map((call) => [call.tool, call.outcome]),
        [
          ['new_page', 'ok'],
          ['browser_status', 'ok'],
          ['new_page', 'ok'],
          ['take_snapshot', 'error'],
          ['list_pages', 'ok'],
        ],
      );
    } finally {
      await mcp.close();
      removePlace(place);
    }
  });

  test("shared mode: the user's Chrome dies; the next result says the mode changed to isolated", async () => {
    const place = makePlace();
    // "Your Chrome": a Chromium of its own, outside the place (it is not tabward's to clean).
    const userDataDir = mkdtempSync(join(tmpdir(), 'tabward-users-chrome-'));
    const chrome = await launchChrome({
      executablePath: findChrome(),
      headless: true,
      userDataDir,
      extraArgs: testChromeArgs,
    });
    const mcp = await startIn(place, ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint]);
    try {
      const first = await mcp.call('new_page', { url: site.url('site.test', '/') });
      assert.ok(!first.isError, first.text);
      assert.doesNotMatch(first.text, /Mode changed/);
      assert.match((await mcp.call('browser_status')).text, /mode: shared/);

      process.kill(-chrome.pid, 'SIGKILL');
      const next = await mcp.call('new_page', { url: site.url('site.test', '/') });
      assert.ok(!next.isError, next.text);
      assert.match(next.text, /Mode changed: the connection to your Chrome was lost/);
      assert.match(
        next.text,
        /Mode changed: your Chrome could not be reached, so this now runs in an isolated browser/,
      );
      assert.match(next.text, /"Home"/);
      const status = await mcp.call('browser_status');
      assert.match(status.text, /mode: isolated/);
      assert.doesNotMatch(status.text, /Mode changed/);

      await mcp.close();
      await waitFor('tabward exits', () => !isAlive(mcp.pid));
      await assertNothingLeft(place);
      assert.deepEqual(
        auditedCalls(place).map((call) => [call.tool, call.outcome, call.mode]),
        [
          ['new_page', 'ok', 'shared'],
          ['browser_status', 'ok', 'shared'],
          // Judged while the mode was still shared; it ran in the isolated browser it fell back to.
          ['new_page', 'ok', 'shared'],
          ['browser_status', 'ok', 'isolated'],
        ],
      );
    } finally {
      await mcp.close();
      await chrome.close();
      rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      removePlace(place);
    }
  });
});
