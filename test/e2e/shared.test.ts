// Shared and auto modes against "your Chrome": a second Chromium logged in to a fixture intranet through its
// real login form, with a tab of its own. Isolated mode does not see the login; shared mode does. Tests that do
// not depend on a fresh start share one tabward per describe; the guard's rules in shared and remote mode are
// also told in-process in callPath.test.ts.

import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { probeBrowser } from '../../src/browser/connect.ts';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { loginHost, startLoginSite } from '../helpers/loginSite.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';

describe('shared and auto modes', { timeout: 300_000 }, () => {
  let site: Fixture;
  let chrome: UserChrome;
  let privateUrl: string;

  before(async () => {
    site = await startLoginSite();
    privateUrl = site.url(loginHost, '/private');
    chrome = await startUserChrome({
      chromeArgs: testChromeArgs,
      login: { url: site.url(loginHost, '/login'), username: 'alice', password: 'pw-alice' },
      openTab: privateUrl,
    });
  });
  after(async () => {
    await chrome?.close();
    await site?.close();
  });

  test('isolated sees a login wall; after a human yes, shared sees the private page; the user tab is protected', async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated', '--user-data-dir', chrome.userDataDir] });
    try {
      const walled = await mcp.call('new_page', { url: privateUrl });
      assert.match(walled.text, /Login wall: .*password field/);
      mcp.human.will({ decision: 'approve' });
      const connected = await mcp.call('browser_connect');
      assert.ok(!connected.isError, connected.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /use your own Chrome/);
      await mcp.call('new_page', { url: privateUrl });
      const snapshot = await mcp.call('take_snapshot');
      assert.match(snapshot.text, /Secret plan: launch in May/);
      const pages = await mcp.call('list_pages');
      const userTab = /(p\d+) \[user\] \S+\/private/.exec(pages.text)?.[1];
      assert.ok(userTab, pages.text);

      const close = await mcp.call('close_page', { pageId: userTab });
      assert.ok(close.isError && close.text.startsWith('blocked:'), close.text);

      await mcp.call('take_snapshot', { pageId: userTab });
      const before = site.writes().length;
      const userSnapshot = await mcp.call('take_snapshot', { pageId: userTab });
      assert.match(
        userSnapshot.text,
        new RegExp(`^Tab ${userTab} \\[user\\] \\S+/private`),
        "marked as the user's",
      );
      assert.match(snapshot.text, /^Tab p\d+ \S+\/private/, "the agent's own tab carries no mark");
      mcp.human.will({ decision: 'reject', reason: 'that is my tab' });
      const click = await mcp.call('click', { pageId: userTab, ref: refOf(userSnapshot.text, 'Edit plan') });
      assert.ok(click.isError && /rejected: .*that is my tab/.test(click.text), click.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /user's own tab/);
      assert.equal(site.writes().length, before);

      const detached = await mcp.call('browser_disconnect');
      assert.ok(!detached.isError, detached.text);
      const probe = await probeBrowser(chrome.wsEndpoint, 10_000);
      assert.ok(probe.tabs >= 1, "the user's tabs survive the detach");
      const status = await mcp.call('browser_status');
      assert.match(status.text, /mode: isolated/);
    } finally {
      await mcp.close();
    }
    const afterClose = await probeBrowser(chrome.wsEndpoint, 10_000);
    assert.ok(afterClose.tabs >= 1, "closing tabward leaves the user's Chrome open");
  });

  // One tabward in auto mode for both answers: refused first (it stays isolated), then approved (it switches).
  describe('auto mode on a login wall', () => {
    let mcp: McpUnderTest;
    before(async () => {
      mcp = await startMcp({ args: ['--mode', 'auto', '--user-data-dir', chrome.userDataDir] });
    });
    after(() => mcp?.close());

    test('stays isolated when the human refuses', async () => {
      mcp.human.will({ decision: 'reject' });
      const opened = await mcp.call('new_page', { url: privateUrl });
      assert.match(opened.text, /chose not to use their Chrome/);
      assert.match((await mcp.call('browser_status')).text, /mode: isolated/);
    });

    test('switches after approval, and reopens the URL in an agent tab', async () => {
      mcp.human.will({ decision: 'approve' });
      const opened = await mcp.call('new_page', { url: privateUrl });
      assert.match(opened.text, /Switched to your Chrome/);
      assert.match(opened.text, /"Private"/);
      const status = await mcp.call('browser_status');
      assert.match(status.text, /mode: shared/);
      assert.match(status.text, /\[agent\] \S+\/private/);
    });
  });

  test('a Chrome that cannot be reached is never asked about: the agent is told how to turn on remote debugging', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-chrome-'));
    const mcp = await startMcp({
      args: ['--mode', 'auto', '--user-data-dir', empty, '--attach-timeout', '3000'],
    });
    try {
      mcp.human.will({ decision: 'approve' });
      const opened = await mcp.call('new_page', { url: privateUrl });
      assert.match(
        opened.text,
        /Login wall at .*The user was not asked to switch to their Chrome: it cannot be reached/s,
      );
      assert.match(
        opened.text,
        /No DevToolsActivePort file found in .*chrome:\/\/inspect\/#remote-debugging/s,
      );
      // browser_connect, which the agent may call itself, says the same before any question.
      const connect = await mcp.call('browser_connect');
      assert.ok(connect.isError);
      assert.match(connect.text, /No DevToolsActivePort file found.*chrome:\/\/inspect\/#remote-debugging/s);
      assert.deepEqual(mcp.human.questions, [], 'no yes was asked for that could not work');
      assert.match((await mcp.call('browser_status')).text, /mode: isolated/);
    } finally {
      await mcp.close();
    }
  });

  test('shared mode at start-up attaches through --browser-url too', async () => {
    const port = new URL(chrome.wsEndpoint).port;
    const mcp = await startMcp({ args: ['--mode', 'shared', '--browser-url', `http://127.0.0.1:${port}`] });
    try {
      await mcp.call('new_page', { url: privateUrl });
      assert.match((await mcp.call('take_snapshot')).text, /Secret plan/);
    } finally {
      await mcp.close();
    }
  });

  test('while Chrome waits for the user to allow the connection, tabward says so, and gives up in bounded time', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    const port = (silent.address() as { port: number }).port;
    const mcp = await startMcp({
      args: [
        '--mode',
        'shared',
        '--ws-endpoint',
        `ws://127.0.0.1:${port}/devtools/browser/x`,
        '--attach-timeout',
        '3000',
      ],
    });
    try {
      const started = Date.now();
      const opened = await mcp.call('new_page', { url: site.url(loginHost, '/') });
      assert.ok(!opened.isError, 'falls back to the isolated browser');
      assert.ok(Date.now() - started < 20_000);
      assert.match(mcp.stderr(), /if it asks whether to allow remote debugging, click "Allow"/);
      assert.match(mcp.stderr(), /could not use your Chrome, continuing isolated/);
      assert.match((await mcp.call('browser_status')).text, /mode: isolated/);
    } finally {
      await mcp.close();
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  // One tabward on the "browser service" for both: its first call must find a fresh context (so it goes first);
  // the approve-all test ends by switching to your Chrome.
  describe('remote mode', () => {
    let mcp: McpUnderTest;
    before(async () => {
      mcp = await startMcp({
        args: ['--mode', 'remote', '--ws-endpoint', chrome.wsEndpoint, '--user-data-dir', chrome.userDataDir],
      });
    });
    after(() => mcp?.close());

    test("a browser service gives a fresh context of the agent's own, and writes there ask", async () => {
      const opened = await mcp.call('new_page', { url: privateUrl });
      assert.match(opened.text, /Login wall/, "no cookies of the service's other sessions");
      const pages = await mcp.call('list_pages');
      assert.doesNotMatch(pages.text, /\[user\]/);
      const snapshot = await mcp.call('take_snapshot');
      // No answer scripted: the human declines.
      const click = await mcp.call('click', { ref: refOf(snapshot.text, 'Sign in') });
      assert.ok(click.isError && click.text.startsWith('rejected:'), click.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /writes in remote mode ask/);
      assert.match((await mcp.call('browser_status')).text, /mode: remote/);
    });

    test('approve-all is honoured on ordinary pages and cleared by the switch to your Chrome; skip and modify', async () => {
      await mcp.call('new_page', { url: site.url(loginHost, '/login') });
      const form = await mcp.call('take_snapshot');
      const userField = refOf(form.text, 'User name');
      mcp.human.will({ decision: 'modify', args: JSON.stringify({ ref: userField, value: 'alice' }) });
      assert.ok(!(await mcp.call('fill', { ref: userField, value: 'mallory' })).isError);
      assert.match(
        (await mcp.call('take_snapshot')).text,
        /textbox User name ="alice"/,
        "the human's arguments ran",
      );
      mcp.human.will({ decision: 'skip' });
      const skipped = await mcp.call('fill', { ref: refOf(form.text, 'Password'), value: 'guess' });
      assert.match(skipped.text, /skipped fill; nothing was done/);

      mcp.human.will({ decision: 'approve-all' });
      await mcp.call('fill', { ref: userField, value: 'a' });
      const asked = mcp.human.questions.length;
      assert.ok(!(await mcp.call('fill', { ref: userField, value: 'b' })).isError);
      assert.equal(mcp.human.questions.length, asked, 'approve-all covered the second fill');
      assert.match((await mcp.call('browser_status')).text, /approve-all grants: tool:fill/);

      mcp.human.will({ decision: 'approve' });
      await mcp.call('browser_connect');
      assert.match((await mcp.call('browser_status')).text, /approve-all grants: none/);
      await mcp.call('new_page', { url: site.url(loginHost, '/') });
      await mcp.call('take_snapshot');
      await mcp.call('new_page', { url: site.url(loginHost, '/login') });
      const again = await mcp.call('take_snapshot');
      const before = mcp.human.questions.length;
      const fill = await mcp.call('fill', { ref: refOf(again.text, 'User name'), value: 'c' });
      assert.ok(fill.isError, `no answer scripted: declined: ${fill.text} ${mcp.human.questions.at(-1)}`);
      assert.equal(mcp.human.questions.length, before + 1, 'asked again after the switch');
    });

    test('the service browser is left running when tabward leaves it', async () => {
      await mcp.close();
      assert.ok((await probeBrowser(chrome.wsEndpoint, 10_000)).tabs >= 1);
    });
  });
});
