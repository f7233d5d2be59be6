// Attacks on several MCP clients of one `tabward mcp --http` (issue 36): a hostile page (and a hostile or
// prompt-injected client beside an honest one) trying to cross from one client's world into another's, or past the
// choke point through what the clients share: the one browser process in isolated mode (its storage, HTTP cache,
// tabward's own ports), the audit log, the session lifecycle (DELETE while a page sends, the browser crashing) and,
// in the user's Chrome, the tabs each client hides from the others (a client leaving, a popup being adopted).
// The real CLI, the real SDK client over Streamable HTTP, real Chromium; every host name maps to the fixtures.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { callThrough } from '../helpers/mcpClient.ts';
import { initializeBody, postMcp } from '../helpers/rawMcp.ts';
import { type RunningTabward, startTabward } from '../helpers/tabwardProcess.ts';
import { waitFor } from '../helpers/waitFor.ts';

const secret = 'ghp_attackClients_5521';

interface Connected {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
}

/** Connect and call helpers for one running `tabward mcp --http`. */
function clientsOf(tabward: () => RunningTabward, open: Connected[]) {
  const endpoint = () => /MCP over Streamable HTTP at (\S+)/.exec(tabward().output())?.[1] ?? '';
  const token = () => /new bearer token for MCP over HTTP.*: (\S+)\n/.exec(tabward().output())?.[1] ?? '';
  const connect = async (): Promise<Connected> => {
    const client = new Client({ name: 'attack-several-clients', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(endpoint()), {
      requestInit: { headers: { Authorization: `Bearer ${token()}` } },
    });
    await client.connect(transport);
    const connected = { client, transport };
    open.push(connected);
    return connected;
  };
  const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
    callThrough(client, name, args, 60_000);
  const leave = async (connected: Connected) => {
    await connected.transport.terminateSession().catch(() => undefined);
    await connected.client.close().catch(() => undefined);
  };
  return { endpoint, token, connect, call, leave };
}

async function stop(tabward: RunningTabward | undefined): Promise<void> {
  if (!tabward) return;
  const exited = new Promise((resolve) => tabward.child.once('exit', resolve));
  tabward.child.kill('SIGTERM');
  if (tabward.child.exitCode === null)
    await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
}

interface AuditRecord {
  session?: string;
  tool?: string;
  url?: string;
  reason?: string;
  outcome?: string;
  args?: { url?: string; pageId?: string };
}

function auditOf(home: string): AuditRecord[] {
  return readFileSync(join(home, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as AuditRecord);
}

describe("attacks across clients in the user's Chrome", { timeout: 180_000 }, () => {
  let site: Fixture;
  let chrome: UserChrome;
  let tabward: RunningTabward;
  let home = '';
  const open: Connected[] = [];
  const { connect, call, leave } = clientsOf(() => tabward, open);

  before(async () => {
    site = await startFixture(
      {
        '/mine': (_req, _body, res) => html(res, '<title>Mine</title><p>The user reads this</p>'),
        '/a': (_req, _body, res) => html(res, `<title>A</title><p>Client A read ${secret}</p>`),
        '/b': (_req, _body, res) => html(res, '<title>B</title><p>Client B was here</p>'),
        // A page of A's that opens popups by itself, one every 30 ms, with and without an opener.
        '/spawner': (_req, _body, res) =>
          html(
            res,
            `<title>Spawner</title><p>spawning</p><script>let n = 0; const t = setInterval(() => { n++; window.open('/child?n=' + n, '_blank', n % 2 ? '' : 'noopener'); if (n >= 12) clearInterval(t); }, 30)</script>`,
          ),
        '/child': (_req, _body, res) => html(res, `<title>Child</title><p>A's popup ${secret}</p>`),
      },
      { tls: true },
    );
    chrome = await startUserChrome({
      // The user's Chrome lets a page open windows by itself (a popup blocker is no defence tabward relies on).
      chromeArgs: [...testChromeArgs, '--disable-popup-blocking'],
      openTab: site.url('mine.example', '/mine'),
    });
    home = mkdtempSync(join(tmpdir(), 'tabward-attack-clients-chrome-'));
    tabward = await startTabward(
      ['mcp', '--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint, '--http', '0', '--approval', 'deny'],
      /new bearer token for MCP over HTTP.*: \S+\n/,
      { home },
    );
  });
  after(async () => {
    await Promise.all(open.map((each) => each.client.close().catch(() => undefined)));
    await stop(tabward);
    await chrome?.close();
    await site?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  test("while a client leaves, its tabs are never listed to (nor read by) another client as the user's", async () => {
    const a = await connect();
    const b = await connect();
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    for (let n = 0; n < 3; n++) {
      const opened = await call(a.client, 'new_page', { url: site.url('a.example', `/a?n=${n}`) });
      assert.match(opened.text, /"A"/);
    }
    assert.doesNotMatch((await call(b.client, 'list_pages')).text, /a\.example/);
    // B lists (and reads whatever it finds) as fast as it can while A goes away.
    const seen: string[] = [];
    let leaving = true;
    const watching = (async () => {
      while (leaving) {
        const listed = (await call(b.client, 'list_pages')).text;
        for (const line of listed.split('\n'))
          if (line.includes('a.example')) {
            seen.push(line);
            const id = /\b(p\d+)\b/.exec(line)?.[1];
            if (id) {
              const read = await call(b.client, 'take_snapshot', { pageId: id });
              if (read.text.includes(secret)) seen.push(`read ${id}: ${secret}`);
            }
          }
      }
    })();
    await new Promise((done) => setTimeout(done, 100));
    await leave(a);
    await new Promise((done) => setTimeout(done, 2_000));
    leaving = false;
    await watching;
    assert.deepEqual(seen, [], `B saw A's tabs while A left:\n${seen.join('\n')}`);
    await leave(b);
  });

  test("popups a client's page opens by itself (with or without an opener) are never another client's to see", async () => {
    const a = await connect();
    const b = await connect();
    await call(b.client, 'new_page', { url: site.url('b.example', '/b') });
    const seen: string[] = [];
    let watchingOn = true;
    const watching = (async () => {
      while (watchingOn) {
        const listed = (await call(b.client, 'list_pages')).text;
        for (const line of listed.split('\n'))
          if (line.includes('/child') || line.includes('/spawner')) seen.push(line);
      }
    })();
    await call(a.client, 'new_page', { url: site.url('a.example', '/spawner') });
    await waitFor(
      'the popups opened',
      () => site.seen.filter((s) => s.path.startsWith('/child')).length >= 12,
      {
        timeoutMs: 20_000,
      },
    );
    await new Promise((done) => setTimeout(done, 1_000));
    watchingOn = false;
    await watching;
    const listedA = (await call(a.client, 'list_pages')).text;
    assert.equal((listedA.match(/\[agent\] \S+\/child/g) ?? []).length, 12, `A owns its popups:\n${listedA}`);
    assert.deepEqual(seen, [], `B saw A's popups:\n${seen.join('\n')}`);
    await leave(a);
    await leave(b);
  });
});
