// The isolated browser through `tabward mcp` over stdio: the tool list, a profile that is really temporary,
// and deadlines — an open alert, a crashed tab, a closed tab and a dead browser give clear errors quickly.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { debuggingEndpoint, debuggingPortArgs } from '../helpers/debuggingPort.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('isolated browser', { timeout: 180_000 }, () => {
  let site: Fixture;
  // One tabward for the tests that need no fresh start (the profile test starts and ends its own).
  let mcp: McpUnderTest;
  before(async () => {
    site = await startFixture({
      '/': (_req, _body, res) =>
        html(
          res,
          '<title>Home</title><h1>Home</h1><button onclick="alert(\'Are you sure?\')">Warn me</button>',
        ),
      '/other': (_req, _body, res) => html(res, '<title>Other</title><h1>Other page</h1>'),
    });
    // The browser is driven over a pipe; a debugging port of its own lets the test crash one of its tabs.
    mcp = await startMcp({
      args: [
        '--mode',
        'isolated',
        '--timeout',
        '5000',
        ...debuggingPortArgs.flatMap((arg) => ['--chrome-arg', arg]),
      ],
    });
  });
  after(async () => {
    await mcp?.close();
    await site?.close();
  });

  test('lists every tool of the catalogue, with hints from its kind', async () => {
    const { tools } = await mcp.client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of [
      'list_pages',
      'select_page',
      'new_page',
      'close_page',
      'navigate_page',
      'take_snapshot',
      'take_screenshot',
      'wait_for',
      'click',
      'fill',
      'fill_form',
      'hover',
      'drag',
      'press_key',
      'handle_dialog',
      'upload_file',
      'evaluate_script',
      'resize_page',
      'browser_status',
      'browser_connect',
      'browser_disconnect',
    ]) {
      assert.ok(names.includes(name), name);
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.equal(byName.get('take_snapshot')?.annotations?.readOnlyHint, true);
    assert.equal(byName.get('click')?.annotations?.destructiveHint, true);
    assert.equal(byName.get('click')?.annotations?.readOnlyHint, undefined);
    const bad = await mcp.call('click', {});
    assert.ok(bad.isError && bad.text.startsWith('bad_input:') && bad.text.includes('ref'), bad.text);
  });

  test('the profile is temporary: it exists while the browser runs and is gone after close', async () => {
    const fresh = await startMcp({ args: ['--mode', 'isolated'] });
    let profile = '';
    try {
      const status = await fresh.call('browser_status');
      assert.match(status.text, /mode: isolated \(not started\)/, 'the browser starts lazily');
      await fresh.call('new_page', { url: site.url('site.test', '/') });
      profile = /temporary profile: (\S+)/.exec((await fresh.call('browser_status')).text)?.[1] ?? '';
      assert.ok(profile && existsSync(profile), profile);
    } finally {
      await fresh.close();
    }
    await waitFor(`${profile} deleted`, () => !existsSync(profile), { timeoutMs: 10_000 });
  });

  test('an open alert, a crashed tab, a closed tab and a dead browser give clear errors, never a hang', async () => {
    await mcp.call('new_page', { url: site.url('site.test', '/') });
    const snapshot = await mcp.call('take_snapshot');
    const clicked = await mcp.call('click', { ref: refOf(snapshot.text, 'Warn me') });
    assert.match(clicked.text, /alert dialog is open: "Are you sure\?"/);
    const blocked = await mcp.call('take_snapshot');
    assert.ok(blocked.isError && blocked.text.startsWith('dialog_open:'), blocked.text);

    const other = await mcp.call('new_page', { url: site.url('site.test', '/other') });
    assert.ok(!other.isError, 'another tab works while the dialog is open');
    const dialogTab = /(p\d+) \[agent\] \S+:\d+\/ /.exec((await mcp.call('list_pages')).text)?.[1];
    assert.ok(dialogTab);
    const answered = await mcp.call('handle_dialog', { action: 'accept', pageId: dialogTab });
    assert.match(answered.text, /Accepted "Are you sure\?"/);
    assert.ok(!(await mcp.call('take_snapshot', { pageId: dialogTab })).isError);

    const status = (await mcp.call('browser_status')).text;
    const endpoint = await debuggingEndpoint(status);
    const browser = await chromium.connectOverCDP(endpoint, { timeout: 10_000 });
    const victim = browser
      .contexts()[0]
      ?.pages()
      .find((page) => page.url().endsWith('/other'));
    assert.ok(victim);
    const cdp = await victim.context().newCDPSession(victim);
    // The crash takes the CDP answer with it: do not wait for one.
    void cdp.send('Page.crash').catch(() => undefined);
    const otherTab = /(p\d+) \[agent\] \S+\/other/.exec(status)?.[1] ?? '';
    // Until tabward hears of the crash a snapshot may still succeed; each try is bounded by --timeout.
    await waitFor('the crash to be reported as such', async () => {
      const snapshot = await mcp.call('take_snapshot', { pageId: otherTab });
      return snapshot.isError && /^(page_crashed|page_closed):/.test(snapshot.text);
    });
    await browser.close();

    await mcp.call('close_page', { pageId: dialogTab });
    const gone = await mcp.call('take_snapshot', { pageId: dialogTab });
    assert.ok(
      gone.isError && gone.text.startsWith('not_found:') && gone.text.includes('list_pages'),
      gone.text,
    );

    const pid = Number(/pid (\d+)/.exec(status)?.[1] ?? 0);
    if (pid) process.kill(-pid, 'SIGKILL');
    const started = Date.now();
    const afterDeath = await mcp.call('take_snapshot', { pageId: otherTab });
    assert.ok(afterDeath.isError, afterDeath.text);
    assert.ok(Date.now() - started < 30_000);
    const fresh = await mcp.call('new_page', { url: site.url('site.test', '/other') });
    assert.ok(!fresh.isError, `a new browser starts after the old one died: ${fresh.text}`);
  });
});
