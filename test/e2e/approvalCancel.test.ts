// A question does not outlive its call (issue 10, class 11), against a real `tabward mcp --approval page` over
// stdio: a call cancelled by its client, or timed out by it, takes its question off the approval page, a late
// "approve" gets 404 and the fixture server sees no write; while a question waits, a client that asked for
// progress hears where the human is being asked.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor, within } from '../helpers/waitFor.ts';

interface Pending {
  readonly id: string;
  readonly tool: string;
}

const vault =
  '<title>Vault settings</title><form method="post" action="/settings/vault"><button>Delete vault</button></form>';

describe('a question does not outlive its call', () => {
  let site: Fixture;
  let mcp: McpUnderTest;
  let pageUrl = '';
  let deleteRef = '';

  const pending = async (): Promise<Pending[]> =>
    (await fetch(`${pageUrl}pending`)).json() as Promise<Pending[]>;
  const decide = (id: string, choice: string) =>
    fetch(`${pageUrl}decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, decision: { choice } }),
    });
  const question = (tool: string) =>
    waitFor(`a ${tool} question on the approval page`, async () =>
      (await pending()).find((entry) => entry.tool === tool),
    );
  /** The audit record of the n-th click, once the call has really ended inside tabward. */
  const clickRecord = (n: number) =>
    waitFor(`audit record of click #${n}`, () => {
      if (!existsSync(mcp.auditPath)) return undefined;
      const clicks = readFileSync(mcp.auditPath, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { tool: string; outcome: string; error?: string })
        .filter((entry) => entry.tool === 'click' && entry.outcome !== 'started');
      return clicks[n - 1];
    });

  before(async () => {
    site = await startFixture(
      {
        'GET /settings/vault': (_req, _body, res) => html(res, vault),
        'POST /settings/vault': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted'),
      },
      { tls: true },
    );
    mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'page'], elicitation: false });
    pageUrl = await waitFor(
      'the approval page address on stderr',
      () => /approval page at (\S+)/.exec(mcp.stderr())?.[1],
    );
    const opening = mcp.call('new_page', { url: site.url('github.com', '/settings/vault') });
    assert.equal((await decide((await question('new_page')).id, 'approve')).status, 200);
    const opened = await opening;
    assert.ok(!opened.isError, opened.text);
    deleteRef = refOf((await mcp.call('take_snapshot')).text, 'Delete vault');
  });
  after(async () => {
    await mcp?.close();
    await site?.close();
  });

  test('cancelled by the client: the question leaves the page, a late approve is 404, nothing is sent', async () => {
    const cancel = new AbortController();
    const clicking = mcp.client.callTool({ name: 'click', arguments: { ref: deleteRef } }, undefined, {
      signal: cancel.signal,
    });
    const asked = await question('click');
    cancel.abort('the user pressed Esc');
    await assert.rejects(clicking);
    await waitFor(
      'the cancelled question to leave the page',
      async () => !(await pending()).some((entry) => entry.id === asked.id),
      { timeoutMs: 10_000 },
    );
    assert.equal((await decide(asked.id, 'approve')).status, 404, 'a withdrawn question cannot be approved');
    const record = await clickRecord(1);
    assert.equal(record.outcome, 'rejected');
    assert.match(record.error ?? '', /cancelled/);
    assert.deepEqual(site.writes(), [], 'no POST reached the site');
  });

  test('timed out by the client: the same', async () => {
    const clicking = mcp.client.callTool({ name: 'click', arguments: { ref: deleteRef } }, undefined, {
      timeout: 3_000,
    });
    const asked = await question('click');
    await assert.rejects(clicking, /timed out/i);
    await waitFor(
      'the timed-out question to leave the page',
      async () => !(await pending()).some((entry) => entry.id === asked.id),
      { timeoutMs: 10_000 },
    );
    assert.equal((await decide(asked.id, 'approve')).status, 404);
    assert.equal((await clickRecord(2)).outcome, 'rejected');
    assert.deepEqual(site.writes(), []);
  });

  test('while the question waits, a client that asked for progress hears what is asked and where', async () => {
    const heard: Progress[] = [];
    const clicking = mcp.client.callTool({ name: 'click', arguments: { ref: deleteRef } }, undefined, {
      timeout: 60_000,
      resetTimeoutOnProgress: true,
      onprogress: (progress) => heard.push(progress),
    });
    const asked = await question('click');
    await waitFor('two progress notifications', () => heard.length >= 2, { timeoutMs: 20_000 });
    assert.match(
      heard[0]?.message ?? '',
      /^waiting for the human to approve click on button "Delete vault" \(on the approval page/,
    );
    assert.ok((heard[1]?.progress ?? 0) > (heard[0]?.progress ?? 0), 'progress increases');
    const token = new URL(pageUrl).pathname.split('/')[1] ?? '';
    assert.ok(token && !JSON.stringify(heard).includes(token), 'the approval token never reaches the agent');
    assert.equal((await decide(asked.id, 'reject')).status, 200);
    const result = await within('the rejected call to return', clicking);
    assert.equal(result.isError, true);
    assert.deepEqual(site.writes(), []);
  });
});
