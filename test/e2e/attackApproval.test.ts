// The agent tries to approve its own sensitive call: while the question waits on the local approval page, it
// opens the page's address (which a test hands it, though tabward never prints it where the agent can read),
// fetches its decide endpoint from a script, and loads a page that posts to it. The browser it drives can reach
// none of tabward's own servers; the page refuses cross-origin requests; the question stays the human's.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

interface Pending {
  readonly id: string;
  readonly tool: string;
}

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
    const pageUrl = await waitFor(
      'the approval page address on stderr',
      () => /approval page at (\S+)/.exec(mcp.stderr())?.[1],
    );
    decideUrl = `${pageUrl}decide`;
    const token = new URL(pageUrl).pathname.split('/')[1] ?? '';
    const pending = async (): Promise<Pending[]> =>
      (await fetch(`${pageUrl}pending`)).json() as Promise<Pending[]>;
    const outputs: string[] = [];
    const sensitive = mcp.call('new_page', { url: gh.url('github.com', '/settings/vault') });
    const question = await waitFor('the question on the approval page', async () =>
      (await pending()).find((entry) => entry.tool === 'new_page'),
    );
    outputs.push((await mcp.call('browser_status')).text);
    outputs.push((await mcp.call('new_page', { url: pageUrl })).text);
    // Had the page loaded, this is where the agent clicks Approve on its own question.
    const approvePage = await mcp.call('take_snapshot');
    const approve = /button "Approve" @(\S+)/.exec(approvePage.text)?.[1];
    if (approve) outputs.push((await mcp.call('click', { ref: approve })).text);
    outputs.push((await mcp.call('navigate_page', { url: `${pageUrl}pending` })).text);
    outputs.push(
      (await mcp.call('new_page', { url: `http://localhost:${new URL(pageUrl).port}/${token}/` })).text,
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
        body: JSON.stringify({ id: ${JSON.stringify(question.id)}, decision: { choice: 'approve' } }) });
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
      body: JSON.stringify({ id: question.id, decision: { choice: 'reject', reason: 'not you' } }),
    });
    assert.equal(answer.status, 200);
    const result = await sensitive;
    assert.ok(result.isError && /not you/.test(result.text), result.text);
    assert.ok(
      !gh.seen.some((request) => request.path.includes('/settings/vault')),
      'the vault was never opened',
    );
    for (const output of outputs) assert.ok(!output.includes(token), `the token leaked: ${output}`);
    return outputs;
  }

  test('isolated: every way in from the agent and its browser fails', async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'page'], elicitation: false });
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
      args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint, '--approval', 'page'],
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
    const mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'page'], elicitation: false });
    try {
      const pageUrl = await waitFor(
        'the approval page address',
        () => /approval page at (\S+)/.exec(mcp.stderr())?.[1],
      );
      const forged = await fetch(`${pageUrl}decide`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://blog.example' },
        body: JSON.stringify({ id: 'a1', decision: { choice: 'approve' } }),
      });
      assert.equal(forged.status, 403);
      const crossSite = await fetch(`${pageUrl}pending`, { headers: { 'sec-fetch-site': 'cross-site' } });
      assert.equal(crossSite.status, 403);
      assert.equal((await fetch(`${pageUrl}pending`)).status, 200, 'the human (no Origin) is served');
    } finally {
      await mcp.close();
    }
  });
});
