// A question does not outlive its call (issue 10, class 11), against a real `tabward mcp --approval inbox` over
// stdio: a call cancelled by its client, or timed out by it, takes its question out of `tabward approvals`, a
// late "approve" is refused (404) and audited, and the fixture server sees no write; while a question waits, a
// client that asked for progress hears where the human is being asked.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { type InboxHuman, inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor, within } from '../helpers/waitFor.ts';

const vault =
  '<title>Vault settings</title><form method="post" action="/settings/vault"><button>Delete vault</button></form>';

describe('a question does not outlive its call', () => {
  let site: Fixture;
  let mcp: McpUnderTest;
  let deleteRef = '';
  let human: InboxHuman;
  const pending = () => human.questions();
  const decide = (id: string, choice: string) => human.answer(id, choice);
  const question = (tool: string) => human.question(tool);
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
    mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'inbox'], elicitation: false });
    human = inboxOf(mcp.home);
    const opening = mcp.call('new_page', { url: site.url('github.com', '/settings/vault') });
    assert.equal(await decide((await question('new_page')).id, 'approve'), 200);
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
    assert.equal(await decide(asked.id, 'approve'), 404, 'a withdrawn question cannot be approved');
    const ignored = await waitFor('the ignored answer in the audit log', () =>
      readFileSync(mcp.auditPath, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { tool: string; outcome: string; reason?: string })
        .find((entry) => entry.tool === '(approval)'),
    );
    assert.equal(ignored.outcome, 'blocked');
    assert.match(
      ignored.reason ?? '',
      new RegExp(
        `answer \\(approve\\) through tabward approvals to question ${asked.id} was ignored: its call was cancelled`,
      ),
    );
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
    assert.equal(await decide(asked.id, 'approve'), 404);
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
      /^waiting for the human to approve click on button "Delete vault" \(in `tabward approvals`/,
    );
    assert.ok((heard[1]?.progress ?? 0) > (heard[0]?.progress ?? 0), 'progress increases');
    const token = new URL(asked.pageUrl ?? '').pathname.split('/')[2] ?? '';
    assert.ok(token && !JSON.stringify(heard).includes(token), 'the approval token never reaches the agent');
    assert.ok(!mcp.stderr().includes(token), 'nor stderr');
    assert.equal(await decide(asked.id, 'reject'), 200);
    const result = await within('the rejected call to return', clicking);
    assert.equal(result.isError, true);
    assert.deepEqual(site.writes(), []);
  });
});
