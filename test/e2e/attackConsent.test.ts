// Attacks on the consent inbox (issue 31), written after it by a review as an attacker would: the agent (tool calls, their arguments, results,
// browser_status, the pages of its browser) or a hostile page tries to get a write run without the human's yes, to
// spend one yes on another action or twice, to learn an approval page's token, or to make the audit lie. Each test
// asserts what should hold; a failing one is a hole. A1 (a yes about one tab spent in another), U1 (a question
// worded otherwise joined), A3 (a notified id approving another process's question) and U4 (dead page tokens
// kept in the redactor for good) were holes when written.

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ApprovalPage } from '../../src/approval/approvalPage.ts';
import { ApprovalInbox } from '../../src/approval/inbox.ts';
import { serveInboxSocket, socketRequest } from '../../src/approval/inboxSocket.ts';
import { questionLines } from '../../src/core/approvalDisplay.ts';
import type { ApprovalRequest } from '../../src/core/approvals.ts';
import { Secrets } from '../../src/core/secrets.ts';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { approvalRequest } from '../helpers/approvalRequest.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';
import { waitFor, within } from '../helpers/waitFor.ts';

/** The shared helper's question, as a click on GitHub's token settings. */
const sensitiveRequest = (over: Partial<ApprovalRequest> = {}): ApprovalRequest =>
  approvalRequest({
    reason: 'writes on sensitive pages need a fresh approval (the page github.com)',
    rule: 'github-settings',
    url: 'https://github.com/settings/tokens',
    origin: 'https://github.com',
    element: { role: 'button', name: 'Revoke token' },
    ...over,
  });

describe('attack: the consent inbox (no browser)', () => {
  test('U1 a question whose text differs (reason, warning, offers) is not joined', () => {
    const inbox = new ApprovalInbox();
    // The human is asked about a taint question: data from one origin may go to one place.
    const first = sensitiveRequest({
      rule: 'taint',
      reason:
        'data read on sensitive https://github.com could be sent to https://blog.example; approving lets https://blog.example receive requests for the rest of this session',
    });
    // The re-call after "still waiting": its click now also reaches another origin (and read a bank), so the
    // question says something else, and its yes would allow other hosts for the session.
    const second = sensitiveRequest({
      rule: 'taint',
      reason:
        'data read on sensitive https://bank.example, https://github.com could be sent to https://blog.example, https://evil.example; approving lets https://blog.example, https://evil.example receive requests for the rest of this session',
    });
    assert.notEqual(questionLines(first).join('\n'), questionLines(second).join('\n'), 'the texts differ');
    inbox.ask(first);
    const { joined } = inbox.ask(second);
    assert.equal(joined, false, 'a call whose question reads differently joined the question the human saw');
  });

  test('U2 the socket narrows what a sensitive question did not offer (approve-all, site-grant)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'attack-consent-'));
    const inbox = new ApprovalInbox();
    const socket = await serveInboxSocket(inbox, home, () => undefined);
    try {
      for (const decision of [
        { choice: 'approve-all', scope: 'server' },
        { choice: 'site-grant', minutes: 60 },
      ]) {
        const { question } = inbox.ask(sensitiveRequest({ args: { ref: String(Math.random()) } }));
        const reply = await socketRequest(socket.path, 'POST', '/answer', { id: question.id, decision });
        assert.equal(reply.status, 200);
        assert.deepEqual(question.answer, { choice: 'approve' }, JSON.stringify(decision));
      }
      // A second answer to an answered (unspent) question is refused: spent once.
      const { question } = inbox.ask(sensitiveRequest({ args: { ref: 'x' } }));
      assert.equal(inbox.answer(question.id, { choice: 'approve' }, 'tabward approvals').ok, true);
      const again = await socketRequest(socket.path, 'POST', '/answer', {
        id: question.id,
        decision: { choice: 'modify', args: { ref: 'e9' } },
      });
      assert.equal(again.status, 409);
      assert.deepEqual(question.answer, { choice: 'approve' });
    } finally {
      await socket.close();
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('U3 fingerprint quirks: key order, -0, undefined never make two different actions one question', () => {
    const inbox = new ApprovalInbox();
    inbox.ask(sensitiveRequest({ args: { ref: 'e3', doubleClick: true } }));
    assert.equal(inbox.ask(sensitiveRequest({ args: { ref: 'e3' } })).joined, false);
    assert.equal(inbox.ask(sensitiveRequest({ args: { ref: 'e3', doubleClick: false } })).joined, false);
    assert.equal(inbox.ask(sensitiveRequest({ args: { ref: ['e3'] } })).joined, false);
    assert.equal(inbox.ask(sensitiveRequest({ args: { ref: 'e3 ' } })).joined, false);
  });

  test('U4 a dead question leaves no token in the redactor: questions made and dropped do not pile up', async () => {
    // The agent can make hundreds of questions cheaply (a sensitive new_page with a changing query, cancelled at
    // once); each that got a page address put a token into the redactor, which is rebuilt for each one.
    const secrets = new Secrets();
    const inbox = new ApprovalInbox();
    const page = new ApprovalPage(inbox, {
      made: (token) => secrets.redactAlso(token),
      gone: (token) => secrets.forget(token),
    });
    await page.start();
    try {
      const tokens: string[] = [];
      for (let i = 0; i < 200; i++) {
        const { question } = inbox.ask(
          sensitiveRequest({ url: `https://github.com/settings/tokens?n=${i}` }),
        );
        tokens.push(new URL(page.urlFor(question) ?? '').pathname.split('/')[2] ?? '');
        inbox.withdraw(question.id, 'its call was cancelled');
      }
      const { question: live } = inbox.ask(
        sensitiveRequest({ url: 'https://github.com/settings/tokens?live' }),
      );
      const liveToken = new URL(page.urlFor(live) ?? '').pathname.split('/')[2] ?? '';
      assert.equal(secrets.redactor.text(liveToken).includes(liveToken), false, 'a live token is hidden');
      const kept = tokens.filter((token) => !secrets.redactor.text(token).includes(token));
      assert.deepEqual(kept, [], `${kept.length} dead tokens are still in the redactor`);
    } finally {
      await page.stop();
    }
  });
});

/** Runs `call`, and approves its question in `tabward approvals` while it waits. */
async function approved(mcp: McpUnderTest, tool: string, call: Promise<{ text: string; isError: boolean }>) {
  const question = await inboxOf(mcp.home).question(tool);
  assert.equal(await inboxOf(mcp.home).answer(question.id, 'approve'), 200);
  const result = await call;
  assert.ok(!result.isError, result.text);
  return result;
}

describe('attack: joining a question from another tab', { timeout: 240_000 }, () => {
  test('A1 the answer given about tab 1 is spent by the same call made in tab 2 (another document)', async () => {
    let loads = 0;
    const site: Fixture = await startFixture(
      {
        // Each load of the page revokes a different token (GitHub lists one per row; here one per load).
        'GET /settings/tokens': (_req, _body, res) => {
          const n = ++loads;
          html(
            res,
            `<title>Tokens</title><p>Token #${n} (deploy-key-${n})</p><form method="post" action="/settings/tokens/revoke"><input type="hidden" name="token" value="${n}"><button>Revoke token</button></form>`,
          );
        },
        'POST /settings/tokens/revoke': (_req, body, res) =>
          html(res, `<title>Revoked</title>Revoked ${body}`),
      },
      { tls: true },
    );
    const mcp = await startMcp({
      args: ['--mode', 'isolated', '--approval', 'inbox', '--approval-wait', '6'],
      elicitation: false,
    });
    try {
      const url = site.url('github.com', '/settings/tokens');
      await approved(mcp, 'new_page', mcp.call('new_page', { url }));
      await approved(mcp, 'new_page', mcp.call('new_page', { url }));
      const pages = (await mcp.call('list_pages')).text;
      const ids = [...pages.matchAll(/^[ *](\S+) \[agent\] https:\/\/github\.com/gm)].map((m) => m[1] ?? '');
      assert.equal(ids.length, 2, pages);
      const [tab1, tab2] = ids as [string, string];

      assert.ok(!(await mcp.call('select_page', { pageId: tab1 })).isError);
      const snap1 = (await mcp.call('take_snapshot')).text;
      const shown1 = /Token #(\d+)/.exec(snap1)?.[1];
      const ref = refOf(snap1, 'Revoke token');
      // The human is asked about tab 1's token; nobody answers in time: "still waiting".
      const first = await mcp.call('click', { ref });
      assert.match(first.text, /^pending_approval:/, first.text);
      const [asked] = await inboxOf(mcp.home).questions();
      assert.ok(asked, 'the question is open');

      // The agent moves to tab 2 (another document, another token) and makes "the same call again".
      assert.ok(!(await mcp.call('select_page', { pageId: tab2 })).isError);
      const snap2 = (await mcp.call('take_snapshot')).text;
      const shown2 = /Token #(\d+)/.exec(snap2)?.[1];
      assert.notEqual(shown1, shown2);
      assert.equal(refOf(snap2, 'Revoke token'), ref, 'the same ref in the other tab');
      const again = mcp.call('click', { ref });
      await new Promise((done) => setTimeout(done, 1_000));
      const open = await inboxOf(mcp.home).questions();
      // What should hold: the call in tab 2 is its own question (the human was never asked about tab 2).
      const joined = open.length === 1 && open[0]?.id === asked.id;
      if (joined) assert.equal(await inboxOf(mcp.home).answer(asked.id, 'approve'), 200);
      else for (const q of open) await inboxOf(mcp.home).answer(q.id, 'reject');
      const ran = await within('the re-call', again, 30_000);
      const revoked = site.writes().map((w) => w.body);
      assert.deepEqual(
        revoked.filter((body) => body !== `token=${shown1}`),
        [],
        `the human approved revoking token ${shown1} (tab 1); tabward revoked: ${JSON.stringify(revoked)} (joined: ${joined}; ${ran.text.slice(0, 200)})`,
      );
    } finally {
      await mcp.close();
      await site.close();
    }
  });

  test('A2 two identical calls at once, one yes: the action runs once', async () => {
    const site: Fixture = await startFixture(
      {
        'GET /settings/vault': (_req, _body, res) =>
          html(
            res,
            '<title>V</title><form method="post" action="/settings/vault"><button>Delete vault</button></form>',
          ),
        'POST /settings/vault': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted'),
      },
      { tls: true },
    );
    const mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'inbox'], elicitation: false });
    try {
      await approved(
        mcp,
        'new_page',
        mcp.call('new_page', { url: site.url('github.com', '/settings/vault') }),
      );
      const ref = refOf((await mcp.call('take_snapshot')).text, 'Delete vault');
      const both = [mcp.call('click', { ref }), mcp.call('click', { ref })];
      const question = await inboxOf(mcp.home).question('click');
      await new Promise((done) => setTimeout(done, 1_000));
      assert.equal((await inboxOf(mcp.home).questions()).length, 1, 'one question for both');
      assert.equal(await inboxOf(mcp.home).answer(question.id, 'approve'), 200);
      const results = await Promise.all(both);
      assert.equal(site.writes().length, 1, JSON.stringify(results));
      assert.equal(results.filter((r) => !r.isError).length, 1);
      // A second yes to the same id changes nothing.
      assert.equal(await inboxOf(mcp.home).answer(question.id, 'approve'), 404);
      assert.equal(site.writes().length, 1);
    } finally {
      await mcp.close();
      await site.close();
    }
  });
});

describe('attack: question ids across processes', { timeout: 240_000 }, () => {
  test("A3 the notification names a question; the agent withdraws it; the id typed approves no other process's question", async () => {
    const site: Fixture = await startFixture(
      {
        '/settings/profile': (_req, _body, res) => html(res, '<title>Profile</title>Profile'),
        '/settings/admin': (_req, _body, res) => html(res, '<title>Admin</title>Danger zone'),
      },
      { tls: true },
    );
    const shared = mkdtempSync(join(tmpdir(), 'attack-consent-home-'));
    const bin = mkdtempSync(join(tmpdir(), 'attack-notify-'));
    writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\nprintf '%s\\n' "$@" >> "${bin}/shown"\n`);
    chmodSync(join(bin, 'notify-send'), 0o755);
    const start = (notify: boolean) =>
      startMcp({
        args: ['--mode', 'isolated', '--approval', 'inbox', '--approval-wait', '40', '--no-warm-up'],
        elicitation: false,
        notify,
        env: { TABWARD_HOME: shared, PATH: `${bin}:${process.env.PATH}` },
      });
    const a = await start(true);
    const b = await start(false);
    try {
      const cancel = new AbortController();
      const benign = a.client
        .callTool(
          { name: 'new_page', arguments: { url: site.url('github.com', '/settings/profile') } },
          undefined,
          {
            signal: cancel.signal,
            timeout: 60_000,
          },
        )
        .catch((error: unknown) => error);
      // Read once written whole: the fake notifier's file exists (empty) a moment before its line is in it.
      const shown = await waitFor('the notification of process A', () => {
        try {
          return /Answer: tabward approvals approve [a-z2-9]{4} /.exec(
            readFileSync(join(bin, 'shown'), 'utf8'),
          )?.input;
        } catch {
          return undefined;
        }
      });
      assert.match(shown, /tabward asks: new_page on a sensitive page/);
      const notified = /Answer: tabward approvals approve ([a-z2-9]{4}) /.exec(shown)?.[1] ?? '';
      assert.ok(notified, shown);
      // Process B (the same agent's other server) asks its own question: something else entirely.
      const danger = b.client
        .callTool(
          { name: 'new_page', arguments: { url: site.url('github.com', '/settings/admin') } },
          undefined,
          { timeout: 120_000 },
        )
        .catch((error: unknown) => ({ isError: true, content: [{ text: String(error) }] }));
      const listed = async () =>
        ((await runCli(['approvals', '--json'], { TABWARD_HOME: shared })).json as { id: string }[] | null) ??
        [];
      await waitFor('both questions', async () => (await listed()).length === 2 || undefined);
      // The agent withdraws the question the human was notified about, just before the human acts on it.
      cancel.abort('agent');
      await benign;
      await waitFor("A's question gone", async () => (await listed()).length === 1 || undefined);
      // The human types what the notification said.
      const typed = await runCli(['approvals', 'approve', notified], { TABWARD_HOME: shared });
      assert.notEqual(typed.code, 0, 'the withdrawn question cannot be approved');
      const result = (await Promise.race([
        danger,
        new Promise((done) => setTimeout(() => done(undefined), 5_000)),
      ])) as { isError?: boolean; content?: { text?: string }[] } | undefined;
      const ran = result !== undefined && result.isError !== true;
      assert.ok(
        !ran,
        `"tabward approvals approve ${notified}" (from A's notification) approved B's question (new_page ${site.url('github.com', '/settings/admin')}): ${typed.stdout}${typed.stderr}`,
      );
    } finally {
      await a.close();
      await b.close();
      await site.close();
      rmSync(shared, { recursive: true, force: true });
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe('attack: the approval page token', { timeout: 240_000 }, () => {
  test('A4 a client error naming the link, browser_status, audit, stderr: no token; no host spelling reaches the page', async () => {
    const site: Fixture = await startFixture(
      { '/settings/vault': (_req, _body, res) => html(res, '<title>Vault</title>Vault') },
      { tls: true },
    );
    const links: string[] = [];
    const mcp = await startMcp({
      args: ['--mode', 'isolated', '--approval-wait', '4'],
      elicitation: {
        capability: { url: {}, form: {} },
        // A client that cannot open links echoes the link in its error: tabward tells the agent that error.
        answer: async (params) => {
          if (params.url) links.push(params.url);
          throw new Error(`could not open ${params.url} (${params.url?.toUpperCase()})`);
        },
      },
    });
    try {
      const first = await mcp.call('new_page', { url: site.url('github.com', '/settings/vault') });
      const link = await waitFor('the link', () => links[0]);
      const token = new URL(link).pathname.split('/')[2] ?? '';
      const port = new URL(link).port;
      assert.match(first.text, /^pending_approval/, first.text);
      // The client's error reached the agent, with the link in it redacted.
      assert.match(first.text, /Your MCP client could not ask \(.*«redacted»/, first.text);
      const outputs = [first.text, (await mcp.call('browser_status')).text];
      // The agent's browser, at every spelling of the page's host it can think of.
      for (const host of [
        'localhost',
        '127.0.0.1',
        '0.0.0.0',
        '127.1',
        '2130706433',
        'localhost.',
        '[::ffff:127.0.0.1]',
        'github.com',
      ]) {
        const tried = await mcp.call('new_page', { url: `http://${host}:${port}/q/${token}/pending` });
        outputs.push(tried.text);
        assert.doesNotMatch(tried.text, /"tool"\s*:\s*"new_page"/, `${host}: the page answered the agent`);
      }
      outputs.push(mcp.stderr(), readFileSync(mcp.auditPath, 'utf8'));
      for (const output of outputs) {
        assert.ok(!output.includes(token), `the token leaked: ${output.slice(0, 400)}`);
        assert.ok(!output.toLowerCase().includes(token.toLowerCase()), 'the token leaked (case)');
      }
      // Still the human's: the question is open and unanswered.
      assert.equal((await inboxOf(mcp.home).questions()).length, 1);
      assert.equal(site.seen.filter((r) => r.path === '/settings/vault').length, 0);
    } finally {
      await mcp.close();
      await site.close();
    }
  });
});
