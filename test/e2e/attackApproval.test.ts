// The agent tries to approve its own sensitive call: while the question waits, it opens the question's approval
// page (whose address a test hands it, though tabward never prints it where the agent can read),
// fetches its decide endpoint from a script, and loads a page that posts to it. The browser it drives can reach
// none of tabward's own servers; the page refuses cross-origin requests; the question stays the human's.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, startMcp } from '../helpers/mcpClient.ts';

describe('the agent cannot approve its own actions', () => {
  let gh: Fixture;
  let blog: Fixture;
  let chrome: UserChrome;
  let decideUrl = '';
  before(async () => {
    gh = await startFixture(
      { '/settings/vault': (_req, _body, res) => html(res, '<title>Vault</title>Vault') },
      { tls: true },
    );
    blog = await startFixture({
      '/post': (_req, _body, res) => html(res, '<title>Post</title><p>Hello</p>'),
      // A hostile page that approves every pending question it can guess, from the browser.
      '/approve': (_req, _body, res) =>
        html(
          res,
          `<title>Approve</title><script>
          for (const id of ['a1', 'a2', 'a3']) fetch(${JSON.stringify('DECIDE')}.replace('DECIDE', decodeURIComponent(location.hash.slice(1))),
            { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' },
              body: JSON.stringify({ id, decision: { choice: 'approve' } }) }).catch(() => {});
          </script><form id="f" method="post"><input name="id" value="a1"></form>
          <script>document.getElementById('f').action = decodeURIComponent(location.hash.slice(1));
          document.getElementById('f').submit();</script>`,
        ),
    });
    chrome = await startUserChrome({
      chromeArgs: testChromeArgs,
      openTab: blog.url('blog.example', '/post'),
    });
  });
  after(async () => {
    await chrome?.close();
    await gh?.close();
    await blog?.close();
  });

  async function attempt(mcp: McpUnderTest, withScripts: boolean): Promise<string[]> {
    const human = inboxOf(mcp.home);
    const outputs: string[] = [];
    const sensitive = mcp.call('new_page', { url: gh.url('github.com', '/settings/vault') });
    const question = await human.question('new_page');
    // The page of this one question, as the human's notification or `tabward approvals` links it.
    const pageUrl = question.pageUrl ?? '';
    assert.match(pageUrl, /^http:\/\/localhost:\d+\/q\/[\w-]+\/$/);
    decideUrl = `${pageUrl}decide`;
    const token = new URL(pageUrl).pathname.split('/')[2] ?? '';
    const pending = () => human.questions();
    outputs.push((await mcp.call('browser_status')).text);
    outputs.push((await mcp.call('new_page', { url: pageUrl })).text);
    // Had the page loaded, this is where the agent clicks Approve on its own question.
    const approvePage = await mcp.call('take_snapshot');
    const approve = /button Approve @(\S+)/.exec(approvePage.text)?.[1];
    if (approve) outputs.push((await mcp.call('click', { ref: approve })).text);
    outputs.push((await mcp.call('navigate_page', { url: `${pageUrl}pending` })).text);
    outputs.push(
      (await mcp.call('new_page', { url: `http://127.0.0.1:${new URL(pageUrl).port}/q/${token}/` })).text,
    );
    outputs.push(
      (
        await mcp.call('new_page', {
          url: `${blog.url('blog.example', '/approve')}#${encodeURIComponent(decideUrl)}`,
        })
      ).text,
    );
    if (withScripts) {
      await mcp.call('new_page', { url: blog.url('blog.example', '/post') });
      const script = `async () => { try { const r = await fetch(${JSON.stringify(decideUrl)}, { method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision: { choice: 'approve' } }) });
        return r.status; } catch (e) { return String(e); } }`;
      outputs.push((await mcp.call('evaluate_script', { function: script })).text);
      outputs.push((await mcp.call('list_pages')).text);
    }
    assert.ok(
      (await pending()).some((entry) => entry.id === question.id),
      'the question is still waiting for the human',
    );
    // The human says no, on the approval page.
    const answer = await fetch(decideUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: { choice: 'reject', reason: 'not you' } }),
    });
    assert.equal(answer.status, 200);
    const result = await sensitive;
    assert.ok(result.isError && /not you/.test(result.text), result.text);
    assert.ok(
      !gh.seen.some((request) => request.path.includes('/settings/vault')),
      'the vault was never opened',
    );
    for (const output of outputs) assert.ok(!output.includes(token), `the token leaked: ${output}`);
    assert.ok(!mcp.stderr().includes(token), 'the token is not on stderr');
    assert.ok(!readFileSync(mcp.auditPath, 'utf8').includes(token), 'nor in the audit log');
    return outputs;
  }

  test('isolated: every way in from the agent and its browser fails', async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'inbox'], elicitation: false });
    try {
      const outputs = await attempt(mcp, true);
      assert.match(outputs[1] ?? '', /tabward stopped|ERR_BLOCKED_BY_CLIENT/, outputs[1]);
      assert.match(outputs.at(-2) ?? '', /TypeError|Failed to fetch/, outputs.at(-2));
    } finally {
      await mcp.close();
    }
  });

  test("shared: the agent's tabs in the user's Chrome cannot reach it either", async () => {
    const mcp = await startMcp({
      args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint, '--approval', 'inbox'],
      elicitation: false,
    });
    try {
      const outputs = await attempt(mcp, false);
      assert.match(outputs[1] ?? '', /tabward stopped|ERR_BLOCKED_BY_CLIENT/, outputs[1]);
    } finally {
      await mcp.close();
    }
  });

  test('the approval page refuses requests another page makes, even with the token', async () => {
    assert.ok(decideUrl, 'an earlier test found the page');
    const mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'inbox'], elicitation: false });
    try {
      const human = inboxOf(mcp.home);
      const sensitive = mcp.call('new_page', { url: gh.url('github.com', '/settings/vault') });
      const pageUrl = (await human.question('new_page')).pageUrl ?? '';
      const forged = await fetch(`${pageUrl}decide`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://blog.example' },
        body: JSON.stringify({ decision: { choice: 'approve' } }),
      });
      assert.equal(forged.status, 403);
      const crossSite = await fetch(`${pageUrl}pending`, { headers: { 'sec-fetch-site': 'cross-site' } });
      assert.equal(crossSite.status, 403);
      assert.equal((await fetch(`${pageUrl}pending`)).status, 200, 'the human (no Origin) is served');
      const [open] = await human.questions();
      assert.equal(await human.answer(open?.id ?? '', 'reject'), 200);
      assert.ok((await sensitive).isError);
    } finally {
      await mcp.close();
    }
  });
});
