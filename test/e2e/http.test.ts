// `tabward mcp --http`: the real SDK client over Streamable HTTP, a client without elicitation, and the local
// approval page as the human's way to answer (driven here over HTTP, as the page's own script does).

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { binPath, refOf } from '../helpers/mcpClient.ts';

interface Pending {
  id: string;
  tool: string;
  sensitive: boolean;
  approveAllAllowed: boolean;
  element?: { role: string; name: string };
}

describe('Streamable HTTP and the approval page', () => {
  let site: Fixture;
  let server: ChildProcess;
  let mcpUrl = '';
  let pageUrl = '';

  before(async () => {
    site = await startFixture(
      {
        'GET /settings/emails': (_req, _body, res) =>
          html(res, '<title>Emails</title><form method="post"><button>Add email</button></form>'),
        'POST /settings/emails': (_req, _body, res) => html(res, '<title>Added</title>Added'),
      },
      { tls: true },
    );
    const home = mkdtempSync(join(tmpdir(), 'tabward-http-'));
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
        'page',
        ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]),
      ],
      {
        env: { ...process.env, TABWARD_HOME: home },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start-up lines: ${stderr}`)), 30_000);
      server.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        mcpUrl = /MCP over Streamable HTTP at (\S+)/.exec(stderr)?.[1] ?? '';
        pageUrl = /approval page at (\S+)/.exec(stderr)?.[1] ?? '';
        if (mcpUrl && pageUrl) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  });
  after(async () => {
    server?.kill('SIGTERM');
    await site?.close();
  });

  const connect = async () => {
    const client = new Client({ name: 'http-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
    return client;
  };
  const text = (result: object) =>
    (('content' in result ? result.content : []) as { text?: string }[])
      .map((part) => part.text ?? '')
      .join('\n');
  const pending = async (): Promise<Pending[]> =>
    (await fetch(`${pageUrl}pending`)).json() as Promise<Pending[]>;
  const decide = (id: string, decision: object) =>
    fetch(`${pageUrl}decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, decision }),
    });
  const waitForPending = async (): Promise<Pending> => {
    for (let i = 0; i < 200; i++) {
      const [first] = await pending();
      if (first) return first;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('no approval request appeared');
  };

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
      assert.match(status, /approver: page http:\/\/127\.0\.0\.1/);
    } finally {
      await client.close();
    }
  });

  test('the approval page checks its token and Host header; the MCP endpoint checks Host', async () => {
    const base = new URL(pageUrl);
    assert.equal((await fetch(`http://127.0.0.1:${base.port}/wrong-token/pending`)).status, 404);
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
    assert.equal(await rawStatus(new URL(`${pageUrl}pending`), 'evil.example'), 403);
    assert.equal(await rawStatus(new URL(mcpUrl), `evil.example:${new URL(mcpUrl).port}`), 403);
    const page = await fetch(pageUrl);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /tabward approvals/);
    const wrongType = await fetch(`${pageUrl}decide`, { method: 'POST', body: '{}' });
    assert.equal(wrongType.status, 415, 'only JSON posts, so a cross-site form cannot answer');
  });
});
