// The blank tab the isolated browser starts with becomes the agent's first tab (BrowserSession.install): it must be
// guarded as a tab tabward opened is, and look like one to a page. Its requests are its own page's doing, never a
// later new_page call's: a page in it that keeps posting into a sensitive site gets nothing put to the human who
// approves another tab's opening. Its viewport is a new tab's: no start-up infobar takes its top.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BrowserSession } from '../../src/browser/session.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, startMcp } from '../helpers/mcpClient.ts';

describe("the browser's first tab, used by the agent", () => {
  let gh: Fixture;
  let blog: Fixture;
  let mcp: McpUnderTest;
  const deletes = () => gh.seen.filter((request) => request.path.startsWith('/settings/delete'));

  before(async () => {
    gh = await startFixture(
      {
        '/settings/delete': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted'),
        '/settings/profile': (_req, _body, res) => html(res, '<title>Profile</title>Profile'),
      },
      { tls: true },
    );
    blog = await startFixture({
      '/noisy': (_req, _body, res) =>
        html(
          res,
          `<title>Noisy</title><script>setInterval(() => fetch(${JSON.stringify(gh.url('github.com', '/settings/delete'))}, { method: 'POST', mode: 'no-cors' }).catch(() => {}), 20)</script>`,
        ),
    });
    mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'auto'] });
  });
  after(async () => {
    await mcp?.close();
    await gh?.close();
    await blog?.close();
  });

  test("its page's writes are not put to the human approving new_page, nor let through", async () => {
    const first = await mcp.call('navigate_page', { url: blog.url('blog.example', '/noisy') });
    assert.ok(!first.isError, first.text);
    const status = await mcp.call('browser_status');
    assert.match(status.text, /\*p1 \[agent\] http:\/\/blog\.example/, 'the noisy page is in the first tab');
    // A human who approves whatever new_page is said to do.
    mcp.human.policy = () => ({ decision: 'approve' });
    const opened = await mcp.call('new_page', { url: gh.url('github.com', '/settings/profile') });
    assert.ok(!opened.isError, opened.text);
    const askedForNewPage = mcp.human.questions.filter(
      (question) => question.startsWith('tabward: new_page') && question.includes('/settings/delete'),
    );
    assert.deepEqual(askedForNewPage, [], 'the first tab’s POSTs are not new_page’s doing');
    assert.equal(deletes().length, 0);
  });
});

test('new_page as the first call of a session uses the blank tab the browser started with: no tab beside it', async () => {
  const mcp = await startMcp({ args: ['--mode', 'isolated', '--no-warm-up'] });
  const site = await startFixture({ '/': (_req, _body, res) => html(res, '<title>Home</title>Home') });
  try {
    const opened = await mcp.call('new_page', { url: site.url('example.com', '/') });
    assert.match(opened.text, /^Tab p1: /, opened.text);
    const status = await mcp.call('browser_status');
    assert.doesNotMatch(status.text, /about:blank/, status.text);
    assert.doesNotMatch(status.text, /\bp2\b/, status.text);
  } finally {
    await mcp.close();
    await site.close();
  }
});

test('the first tab has the viewport of a tab opened later', async () => {
  // testChromeArgs' --ignore-certificate-errors (and --no-sandbox, as root) are flags Chromium warns about in an
  // infobar over the first tab of its first window.
  const session = new BrowserSession({
    mode: 'isolated',
    headless: true,
    chromeArgs: testChromeArgs,
    attach: {},
    attachTimeoutMs: 5_000,
    notify: () => undefined,
  });
  try {
    const first = await session.target();
    const later = await session.newPage();
    assert.notEqual(first.id, later.id);
    const size = (tab: typeof first) => tab.page.evaluate('[innerWidth, innerHeight]');
    assert.deepEqual(await size(first), await size(later));
  } finally {
    await session.close();
  }
});
