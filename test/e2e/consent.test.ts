// Consent reaches the human in every shape of client (issue 31), against a real `tabward mcp` over stdio and the
// real `tabward approvals` command: a client without elicitation gets "still waiting" before its own timeout, the
// same call again joins the question and runs once on a yes given in `tabward approvals`; a headless client's
// instant cancel is no human's answer; URL-mode elicitation links that one question's page, which the agent's
// browser cannot open; a desktop notification is sent (a fake notify-send on PATH records it); nothing on stderr
// names a page address or token.

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, startMcp } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';
import { waitFor, within } from '../helpers/waitFor.ts';

interface AuditRecord {
  readonly tool: string;
  readonly outcome: string;
  readonly approver?: string;
  readonly choice?: string;
}

const records = (mcp: McpUnderTest): AuditRecord[] =>
  readFileSync(mcp.auditPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditRecord)
    .filter((entry) => entry.outcome !== 'started');

/** A call as a client with a 10 s tool timeout makes it (tabward is told to answer "still waiting" at 3 s). */
/** A call with a bound of its own: 30 s, for a call that waits while the test plays the human (loaded CI hosts). */
async function callWithTimeout(mcp: McpUnderTest, name: string, args: object) {
  const result = await mcp.client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, {
    timeout: 30_000,
  });
  const text = (result.content as { text?: string }[]).map((part) => part.text ?? '').join('\n');
  return { text, isError: result.isError === true };
}

describe('consent reaches the human', { timeout: 240_000 }, () => {
  let site: Fixture;
  let bin = '';
  const vault = () => site.url('github.com', '/settings/vault');
  const vaultGets = () => site.seen.filter((request) => request.path === '/settings/vault').length;

  before(async () => {
    site = await startFixture(
      { 'GET /settings/vault': (_req, _body, res) => html(res, '<title>Vault</title>Vault') },
      { tls: true },
    );
    // A fake notify-send first on PATH: it records what it was asked to show.
    bin = mkdtempSync(join(tmpdir(), 'tabward-notify-'));
    writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\nprintf '%s\\n' "$@" >> "${bin}/shown"\n`);
    chmodSync(join(bin, 'notify-send'), 0o755);
  });
  after(async () => {
    await site?.close();
    rmSync(bin, { recursive: true, force: true });
  });

  test('no elicitation: "still waiting" in time, the call again joins, approved in `tabward approvals` it runs once', async () => {
    const mcp = await startMcp({
      args: ['--mode', 'isolated', '--approval-wait', '3'],
      elicitation: false,
      notify: true,
      env: { PATH: `${bin}:${process.env.PATH}` },
    });
    const cli = (...args: string[]) => runCli(['approvals', ...args], { TABWARD_HOME: mcp.home });
    try {
      const started = Date.now();
      const first = await callWithTimeout(mcp, 'new_page', { url: vault() });
      const took = Date.now() - started;
      assert.ok(first.isError, first.text);
      assert.match(
        first.text,
        /^pending_approval: Waiting for the human's approval of new_page \(question [a-z2-9]{4}, in `tabward approvals` in your terminal, or from the desktop notification\); nothing was done yet\. Call the same tool again with the same arguments/,
      );
      const id = /question ([a-z2-9]{4})/.exec(first.text)?.[1] ?? '';
      assert.ok(took < 10_000, `answered before the client's timeout (${took} ms)`);
      assert.equal(vaultGets(), 0);
      assert.equal(
        records(mcp)
          .filter((entry) => entry.tool === 'new_page')
          .at(-1)?.outcome,
        'pending',
      );

      const listed = await cli('--json');
      assert.equal(listed.code, 0, listed.stderr);
      const [question] = listed.json as { id: string; tool: string; page: string; question: string }[];
      assert.equal(question?.id, id);
      assert.equal(question?.tool, 'new_page');
      assert.match(question?.page ?? '', /^https:\/\/github\.com:\d+\/settings\/vault$/);
      assert.match(
        question?.question ?? '',
        /^tabward: new_page — SENSITIVE PAGE\nPage: https:\/\/github\.com/,
      );
      const human = await cli();
      assert.match(human.stdout, new RegExp(`^\\[${id}\\] SENSITIVE asked .*\\n {2}tabward: new_page`));
      assert.match(human.stdout, new RegExp(`answer: tabward approvals approve ${id} \\| reject ${id}`));

      const shown = await waitFor('the notification', () => readFileSync(join(bin, 'shown'), 'utf8'));
      assert.match(shown, /tabward asks: new_page on a sensitive page/);
      // A notifier's text is its command line, which every local user can read: no browsing details in it.
      assert.doesNotMatch(shown, /github/);
      assert.match(shown, new RegExp(`Answer: tabward approvals approve ${id}`));

      // The call again, with the same arguments: the same question, waited on; the yes runs it once.
      const again = callWithTimeout(mcp, 'new_page', { url: vault() });
      await new Promise((done) => setTimeout(done, 500));
      assert.deepEqual(
        (await inboxOf(mcp.home).questions()).map((q) => q.id),
        [id],
        'joined, never a second question',
      );
      const approved = await cli('approve', id);
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(approved.stdout, new RegExp(`question ${id}: approve sent`));
      // On a loaded machine the command may take longer than the call's 3 s wait: the call then says "still
      // waiting" again, and the client calls again, as told (the answer is kept for it).
      let ran = await within('the joined call to end', again);
      for (let tries = 0; /^pending_approval/.test(ran.text) && tries < 5; tries++)
        ran = await callWithTimeout(mcp, 'new_page', { url: vault() });
      assert.ok(!ran.isError, ran.text);
      assert.equal(vaultGets(), 1, 'it ran once');
      const done = records(mcp)
        .filter((entry) => entry.tool === 'new_page')
        .map((entry) => [entry.outcome, entry.approver]);
      assert.deepEqual(done.at(-1), ['ok', 'tabward approvals']);
      assert.deepEqual(
        new Set(done.slice(0, -1).map(String)),
        new Set(['pending,the inbox (tabward approvals, notification)']),
        'every call before the yes was still waiting',
      );

      // The answer was spent: the same call later is a new question; a second answer to question 1 is refused.
      const late = await cli('approve', id);
      assert.notEqual(late.code, 0);
      assert.match(late.stderr, new RegExp(`No open question ${id}`));
      const third = callWithTimeout(mcp, 'new_page', { url: vault() });
      const next = await inboxOf(mcp.home).question('new_page');
      assert.notEqual(next.id, id);
      // Its notification, sent once the approval page runs: a notifier's text is its command line, which every
      // local user can read, so the page's address (its token is all the page asks for) is never in it (an attack
      // review approved questions as another user from `ps`).
      const notified = await waitFor('the second notification', () => {
        const text = readFileSync(join(bin, 'shown'), 'utf8');
        return text.includes(next.id) ? text : undefined;
      });
      assert.doesNotMatch(notified, /localhost:\d+|\/q\//, 'no approval page address in a notification');
      const rejected = await cli('reject', next.id, '--reason', 'not now');
      assert.equal(rejected.code, 0, rejected.stderr);
      const refused = await third;
      assert.match(refused.text, /^rejected: The user rejected new_page: not now/);
      assert.equal(vaultGets(), 1);
      for (const secret of ['/q/', 'localhost:'])
        assert.ok(!mcp.stderr().includes(secret), `stderr names the page (${secret}): ${mcp.stderr()}`);
    } finally {
      await mcp.close();
    }
  });

  test("a headless client's instant cancel is routed on to the inbox, and the agent is told why", async () => {
    const mcp = await startMcp({
      args: ['--mode', 'isolated', '--approval-wait', '3', '--approval-human-ms', '1000'],
      elicitation: { capability: { form: {} }, answer: async () => ({ action: 'cancel' }) },
    });
    try {
      const first = await callWithTimeout(mcp, 'new_page', { url: vault() });
      assert.match(
        first.text,
        /^pending_approval: Waiting for the human's approval of new_page \(question [a-z2-9]{4}/,
      );
      assert.match(
        first.text,
        /Your MCP client answered "cancel" after \d+ ms, before anyone could have read/,
      );
      const before = vaultGets();
      const [open] = await inboxOf(mcp.home).questions();
      assert.equal(await inboxOf(mcp.home).answer(open?.id ?? '', 'approve'), 200);
      const ran = await callWithTimeout(mcp, 'new_page', { url: vault() });
      assert.ok(!ran.isError, ran.text);
      assert.equal(vaultGets(), before + 1);
    } finally {
      await mcp.close();
    }
  });

  test("URL elicitation links that one question's page; the agent's browser cannot open it; the page's yes runs it", async () => {
    const links: string[] = [];
    const mcp = await startMcp({
      args: ['--mode', 'isolated', '--approval-wait', '20'],
      elicitation: {
        capability: { url: {}, form: {} },
        answer: async (params) => {
          if (params.mode === 'url' && params.url) links.push(params.url);
          return { action: 'accept' };
        },
      },
    });
    try {
      const before = vaultGets();
      const opening = callWithTimeout(mcp, 'new_page', { url: vault() });
      const link = await waitFor('the link at the client', () => links[0]);
      assert.match(link, /^http:\/\/localhost:\d+\/q\/[\w-]{32}\/$/);
      // The agent, handed the link, tries it in its own browser: tabward's own port is refused there.
      const tried = await callWithTimeout(mcp, 'new_page', { url: link });
      assert.match(tried.text, /tabward stopped|ERR_BLOCKED_BY_CLIENT|blocked/, tried.text);
      const [shown] = (await (await fetch(`${link}pending`)).json()) as { tool: string }[];
      assert.equal(shown?.tool, 'new_page');
      const decided = await fetch(`${link}decide`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision: { choice: 'approve' } }),
      });
      assert.equal(decided.status, 200);
      const ran = await within('the approved call', opening);
      assert.ok(!ran.isError, ran.text);
      assert.equal(vaultGets(), before + 1);
      assert.equal((await fetch(link)).status, 404, 'the page died with its question');
      assert.equal(
        records(mcp).find((entry) => entry.tool === 'new_page' && entry.outcome === 'ok')?.approver,
        'the approval page',
      );
      assert.ok(!mcp.stderr().includes(new URL(link).pathname), 'the link is not on stderr');
    } finally {
      await mcp.close();
    }
  });
});
