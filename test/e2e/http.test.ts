// `tabward mcp --http`: the real SDK client over Streamable HTTP, a client without elicitation, and the local
// approval page as the human's way to answer (driven here over HTTP, as the page's own script does). The
// endpoint's doors: bearer token, Host, Origin; elicitation reaches only the session that made the call; and a
// shutdown that leaves no browser behind.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect as openSocket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { type InboxHuman, inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { binPath, refOf } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';
import { waitFor } from '../helpers/waitFor.ts';

interface Pending {
  id: string;
  tool: string;
  sensitive: boolean;
  approveAllAllowed: boolean;
  element?: { role: string; name: string };
}

describe('Streamable HTTP and the approval page', { timeout: 180_000 }, () => {
  let site: Fixture;
  let server: ChildProcess;
  let mcpUrl = '';
  let pageUrl = '';
  let token = '';
  let home = '';
  let stderr = '';
  let human: InboxHuman;

  before(async () => {
    site = await startFixture(
      {
        'GET /settings/emails': (_req, _body, res) =>
          html(res, '<title>Emails</title><form method="post"><button>Add email</button></form>'),
        'POST /settings/emails': (_req, _body, res) => html(res, '<title>Added</title>Added'),
        'GET /settings/keys': (_req, _body, res) => html(res, '<title>Keys</title>SSH keys'),
      },
      { tls: true },
    );
    home = mkdtempSync(join(tmpdir(), 'tabward-http-'));
    server = spawn(
      process.execPath,
      [
        binPath,
        'mcp',
        '--mode',
        'isolated',
        '--http',
        '0',
        '--approval',
        'auto',
        ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]),
      ],
      {
        env: { ...process.env, TABWARD_HOME: home },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    server.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await waitFor('the start-up lines', () => {
      mcpUrl = /MCP over Streamable HTTP at (\S+)/.exec(stderr)?.[1] ?? '';
      token = /new bearer token for MCP over HTTP.*: (\S+)\n/.exec(stderr)?.[1] ?? '';
      if (server.exitCode !== null) throw new Error(`tabward exited ${server.exitCode}`);
      return Boolean(mcpUrl && token);
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}\nstderr: ${stderr}`);
    });
    human = inboxOf(home);
    pageUrl = `http://127.0.0.1:${await human.pagePort()}/`;
  });
  after(async () => {
    server?.kill('SIGTERM');
    await site?.close();
  });

  const transport = (bearer = token) =>
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    });
  const connect = async () => {
    const client = new Client({ name: 'http-test', version: '1' });
    await client.connect(transport());
    return client;
  };
  const text = (result: object) =>
    (('content' in result ? result.content : []) as { text?: string }[])
      .map((part) => part.text ?? '')
      .join('\n');
  /** The open question, as `tabward approvals` lists it, with what its page shows. */
  const waitForPending = async (): Promise<Pending & { pageUrl: string }> => {
    const question = await waitFor(
      'a question in tabward approvals',
      async () => (await human.questions())[0],
    );
    const [shown] = (await (await fetch(`${question.pageUrl}pending`)).json()) as Pending[];
    assert.ok(shown, 'its page shows it');
    return { ...shown, id: question.id, pageUrl: question.pageUrl ?? '' };
  };
  const decide = async (id: string, decision: Record<string, unknown>) => ({
    status: await human.answer(id, decision),
  });

  test('a sensitive write waits on the approval page, shows the element, and runs once approved', async () => {
    const client = await connect();
    try {
      const opening = client.callTool({
        name: 'new_page',
        arguments: { url: site.url('github.com', '/settings/emails') },
      });
      const navigation = await waitForPending();
      assert.equal(navigation.tool, 'new_page');
      assert.equal((await decide(navigation.id, { choice: 'approve' })).status, 200);
      await opening;
      const snapshot = text(await client.callTool({ name: 'take_snapshot', arguments: {} }));
      const clicking = client.callTool({ name: 'click', arguments: { ref: refOf(snapshot, 'Add email') } });
      const write = await waitForPending();
      assert.deepEqual(write.element, { role: 'button', name: 'Add email' });
      assert.ok(write.sensitive && !write.approveAllAllowed);
      await decide(write.id, { choice: 'approve-all' });
      const result = await clicking;
      assert.ok(!result.isError, text(result));
      assert.equal(site.writes().length, 1);
      assert.equal(
        (await decide(write.id, { choice: 'approve' })).status,
        404,
        'an answered request cannot be answered again',
      );
      const status = text(await client.callTool({ name: 'browser_status', arguments: {} }));
      assert.match(
        status,
        /approve-all grants: none/,
        'approve-all on a sensitive page was downgraded to one approval',
      );
      assert.match(status, /approver: the inbox/);
    } finally {
      await client.close();
    }
  });

  test('the approval page checks its token and Host header; the MCP endpoint checks Host', async () => {
    const client = await connect();
    const opening = client.callTool({
      name: 'new_page',
      arguments: { url: site.url('github.com', '/settings/keys') },
    });
    const asked = await waitForPending();
    const questionUrl = asked.pageUrl;
    const base = new URL(questionUrl);
    assert.equal((await fetch(`http://127.0.0.1:${base.port}/q/wrong-token/pending`)).status, 404);
    const rawStatus = (url: URL, host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: url.port, path: url.pathname, headers: { host } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    assert.equal(await rawStatus(new URL(`${questionUrl}pending`), 'evil.example'), 403);
    assert.equal(await rawStatus(new URL(mcpUrl), `evil.example:${new URL(mcpUrl).port}`), 403);
    const page = await fetch(questionUrl);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /tabward approvals/);
    const wrongType = await fetch(`${questionUrl}decide`, { method: 'POST', body: '{}' });
    assert.equal(wrongType.status, 415, 'only JSON posts, so a cross-site form cannot answer');
    assert.equal((await decide(asked.id, { choice: 'reject' })).status, 200);
    assert.ok((await opening).isError);
    assert.ok(!stderr.includes(base.pathname), "the question's address is not on stderr");
    await client.close();
  });

  test('the token is made once, kept 0600, and shown with the line that adds tabward to a client', () => {
    const file = join(home, 'mcp-token');
    assert.equal(readFileSync(file, 'utf8').trim(), token);
    assert.ok(token.length >= 32);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(home).mode & 0o777, 0o700);
    assert.ok(
      stderr.includes(
        `claude mcp add --transport http tabward ${mcpUrl} --header "Authorization: Bearer ${token}"`,
      ),
      stderr,
    );
  });

  test('no token or a wrong one is 401 saying how to authenticate; a web page Origin is 403', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(initialize),
      });
    for (const auth of [
      undefined,
      'Bearer wrong-token-0123456789abcdef',
      `Bearer ${token}x`,
      `Basic ${token}`,
    ]) {
      const response = await post(auth === undefined ? {} : { authorization: auth });
      assert.equal(response.status, 401, String(auth));
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
      const body = (await response.json()) as { jsonrpc: string; error: { message: string } };
      assert.equal(body.jsonrpc, '2.0');
      assert.match(body.error.message, /Authorization: Bearer <token>.*mcp-token/);
      assert.ok(!body.error.message.includes(token), 'the 401 never tells the token');
    }
    const fromPage = await post({ authorization: `Bearer ${token}`, origin: 'http://evil.example' });
    assert.equal(fromPage.status, 403);
    await fromPage.body?.cancel();
    // The real SDK client: without the token, or with a wrong one, it cannot even start a session.
    for (const bearer of ['', 'wrong-token-0123456789abcdef']) {
      const client = new Client({ name: 'intruder', version: '1' });
      await assert.rejects(client.connect(transport(bearer)));
    }
    const client = await connect();
    assert.ok((await client.listTools()).tools.length > 10, 'the right token works');
    await client.close();
  });

  test('an empty or short TABWARD_MCP_TOKEN is refused before anything starts', async () => {
    const refusedHome = mkdtempSync(join(tmpdir(), 'tabward-http-refused-'));
    for (const [value, says] of [
      ['', /TABWARD_MCP_TOKEN is empty/],
      ['too-short', /TABWARD_MCP_TOKEN is 9 characters; at least 16/],
    ] as const) {
      const out = await runCli(['mcp', '--http', '0'], {
        TABWARD_HOME: refusedHome,
        TABWARD_MCP_TOKEN: value,
      });
      assert.equal(out.code, 2, out.stderr);
      assert.match(out.stderr, says);
      assert.doesNotMatch(out.stderr, /Streamable HTTP at/);
    }
  });

  test('elicitation goes to the session that made the call only; another session cannot answer it', async () => {
    const asked: string[] = [];
    let answerA: ((result: ElicitResult) => void) | undefined;
    const eliciting = async (name: string, answer: () => Promise<ElicitResult>) => {
      const client = new Client({ name, version: '1' }, { capabilities: { elicitation: {} } });
      client.setRequestHandler(ElicitRequestSchema, () => {
        asked.push(name);
        return answer();
      });
      const through = transport();
      await client.connect(through);
      return { client, sessionId: through.sessionId ?? '' };
    };
    const a = await eliciting(
      'a',
      () =>
        new Promise<ElicitResult>((resolve) => {
          answerA = resolve;
        }),
    );
    // B would approve anything it were asked.
    const b = await eliciting('b', async () => ({ action: 'accept', content: { decision: 'approve' } }));
    try {
      const opening = a.client.callTool({
        name: 'new_page',
        arguments: { url: site.url('github.com', '/settings/keys') },
      });
      await waitFor('the question to session a', () => asked.includes('a'));
      // B answers every request id A's question could have, in its own session: nothing of A's moves.
      for (let id = 0; id < 5; id++) {
        const forged = await fetch(mcpUrl, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': b.sessionId,
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id,
            result: { action: 'accept', content: { decision: 'approve' } },
          }),
        });
        await forged.body?.cancel();
      }
      assert.deepEqual(asked, ['a'], 'only the calling session was asked');
      assert.ok(answerA);
      answerA({ action: 'decline' });
      const result = await opening;
      assert.match(text(result), /declin|reject/i);
      assert.equal(
        site.seen.filter((seen) => seen.path === '/settings/keys').length,
        0,
        'the page was never requested',
      );
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  test('shutting down while something holds the approval page open closes the browser and its profile', async () => {
    const client = await connect();
    const status = text(await client.callTool({ name: 'browser_status', arguments: {} }));
    await client.close();
    const pid = Number(/\(pid (\d+)\)/.exec(status)?.[1]);
    const profile = /temporary profile: (\S+)/.exec(status)?.[1] ?? '';
    assert.ok(pid > 0 && profile, status);
    // As a tab on the page would: a kept-alive connection polling it, and a socket opened ahead of its next
    // request (Chromium pre-connects), which keeps the page's server from closing.
    const agent = new Agent({ keepAlive: true });
    const poll = () =>
      new Promise<void>((resolve) => {
        const req = request(`${pageUrl}pending`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.on('error', () => resolve());
        req.end();
      });
    await poll();
    const polling = setInterval(() => void poll(), 100);
    const preconnect = openSocket(Number(new URL(pageUrl).port), '127.0.0.1');
    preconnect.on('error', () => undefined);
    await new Promise((resolve) => preconnect.once('connect', resolve));
    await poll();
    try {
      const started = Date.now();
      let code: number | null | undefined;
      server.once('exit', (exitCode) => {
        code = exitCode;
      });
      server.kill('SIGTERM');
      await waitFor('tabward to exit after SIGTERM', () => code !== undefined, { timeoutMs: 25_000 });
      assert.equal(code, 0);
      assert.ok(Date.now() - started < 25_000, `shutdown took ${Date.now() - started} ms`);
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      await waitFor('Chromium gone', () => !alive(), { timeoutMs: 5_000 });
      await waitFor('the profile deleted', () => !existsSync(profile), { timeoutMs: 5_000 });
    } finally {
      clearInterval(polling);
      preconnect.destroy();
      if (server.exitCode === null) server.kill('SIGKILL');
      try {
        process.kill(-pid, 'SIGKILL'); // the browser this test started, if a failure left it
      } catch {
        // gone, as it should be
      }
      agent.destroy();
    }
  });
});
