// Attacks that let the page, not the agent, choose where the browser goes: a 302 from a harmless URL, a data:
// page with a meta refresh, `location=` from a script, a popup, a hover that posts. Each would reach a sensitive
// /delete URL; the network backstop stops the request before it leaves, in isolated mode and in an agent tab of
// the user's own Chrome. Assertions are on what the sensitive fixture received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, redirect, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('the page cannot walk the agent into a sensitive URL', () => {
  let gh: Fixture;
  let blog: Fixture;
  let chrome: UserChrome;
  const deletes = () => gh.seen.filter((request) => request.path.includes('/settings/delete'));

  before(async () => {
    gh = await startFixture(
      {
        '/settings/delete': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted'),
        '/acme': (_req, _body, res) => html(res, '<title>acme</title>acme'),
      },
      { tls: true },
    );
    const target = () => gh.url('github.com', '/settings/delete');
    blog = await startFixture({
      '/r': (_req, _body, res) => redirect(res, target()),
      '/r2': (_req, _body, res) => redirect(res, blog.url('blog.example', '/r')),
      '/refresh': (_req, _body, res) =>
        html(res, `<title>Soon</title><meta http-equiv="refresh" content="0;url=${target()}">`),
      '/hover': (_req, _body, res) =>
        html(
          res,
          `<title>Tips</title><p onmouseover="fetch('${target()}', {method: 'POST', mode: 'no-cors', body: 'x'})">Read me</p>
          <button onmouseover="fetch('${target()}', {method: 'POST', mode: 'no-cors', body: 'x'})">Hover me</button>`,
        ),
    });
    chrome = await startUserChrome({ chromeArgs: testChromeArgs, openTab: gh.url('github.com', '/acme') });
  });
  after(async () => {
    await chrome?.close();
    await gh?.close();
    await blog?.close();
  });

  async function tryEveryWay(mcp: McpUnderTest, popup: boolean): Promise<void> {
    const target = gh.url('github.com', '/settings/delete');
    const hop = await mcp.call('new_page', { url: blog.url('blog.example', '/r') });
    assert.match(hop.text, /tabward stopped 1 request|ERR_BLOCKED_BY_CLIENT/, hop.text);
    await mcp.call('new_page', { url: blog.url('blog.example', '/r2') });
    await mcp.call('new_page', { url: blog.url('blog.example', '/refresh') });
    const dataUrl = `data:text/html,<meta http-equiv="refresh" content="0;url=${target}">`;
    await mcp.call('new_page', { url: dataUrl });
    await mcp.call('new_page', { url: blog.url('blog.example', '/hover') });
    const script = await mcp.call('evaluate_script', {
      function: `() => { location.href = ${JSON.stringify(target)}; return 'moved'; }`,
    });
    assert.ok(!script.isError, script.text);
    // Its navigation may be refused after the script returned (nobody left to ask): its error page is waited for,
    // or it could commit over the navigation below on a loaded machine.
    await waitFor('the script’s navigation to be refused', async () =>
      /^Tab \S+ chrome-error:/m.test((await mcp.call('take_snapshot')).text),
    );
    await mcp.call('navigate_page', { url: blog.url('blog.example', '/hover') });
    const snapshot = await mcp.call('take_snapshot');
    const hover = await mcp.call('hover', { ref: refOf(snapshot.text, 'Hover me') });
    assert.match(hover.text, /tabward stopped 1 request[\s\S]*POST/, hover.text);
    if (popup)
      await mcp.call('evaluate_script', { function: `() => { window.open(${JSON.stringify(target)}); }` });
    // Every attempt was made (each ends on Chrome's error page for a blocked request), none arrived.
    await waitFor('the refreshes and the popup to be attempted', async () => {
      const pages = (await mcp.call('list_pages')).text;
      return (pages.match(/chrome-error:/g) ?? []).length >= (popup ? 5 : 4);
    });
    assert.deepEqual(deletes(), [], 'no request reached the sensitive URL');
  }

  test('isolated: redirects, refresh, data:, script, popup and hover are all stopped', async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated'] });
    try {
      await tryEveryWay(mcp, true);
      const audit = (await import('node:fs')).readFileSync(mcp.auditPath, 'utf8');
      assert.match(audit, /"blocked":\["POST https:\/\/github\.com:\d+\/settings\/delete/);
    } finally {
      await mcp.close();
    }
  });

  // A popup's first request in the user's Chrome is not policed: only the agent's own tabs are routed there,
  // and the popup becomes one only once it exists (docs/security.md says so).
  test("shared: the same, in the agent's tabs of the user's Chrome (popups aside)", async () => {
    const mcp = await startMcp({ args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint] });
    // In the user's Chrome every write asks: the human allows those that touch no sensitive page.
    mcp.human.policy = (message) =>
      /SENSITIVE/.test(message) ? { decision: 'reject' } : { decision: 'approve' };
    try {
      await tryEveryWay(mcp, false);
    } finally {
      await mcp.close();
    }
  });

  test('an approved navigation to a sensitive page still goes through, redirects within it included', async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated'] });
    const before = deletes().length;
    try {
      mcp.human.will({ decision: 'approve' });
      const opened = await mcp.call('new_page', { url: gh.url('github.com', '/settings/delete') });
      assert.ok(!opened.isError && /Deleted/.test(opened.text), opened.text);
      assert.equal(deletes().length, before + 1, 'the human said yes: it arrived once');
    } finally {
      await mcp.close();
    }
  });
});
