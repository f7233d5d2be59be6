// What the relay and the bridge refuse. The relay's doors, tried with real HTTP and WebSocket clients from
// outside: Host header, extension Origin, pairing codes, tickets (missing, expired, replayed), message size,
// agent tokens and workspaces; the relay's verdicts (read-only runs, writes and sensitive sites ask, "always"
// sticks) as the extension receives them. Then a hostile page in a real browser hunting for the bridge's nonce,
// forging outcomes and hoping for another origin's calls.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { bundledExtensionId, type RelayToExtension } from '../../src/protocol/siteTools.ts';
import { RelayStore } from '../../src/relay/relayStore.ts';
import { startWebmcpSite } from '../fixtures/webmcpSite.ts';
import type { Fixture } from '../helpers/fixtureServer.ts';
import { waitFor } from '../helpers/waitFor.ts';
import {
  agentToken,
  callTool,
  connectAgent,
  openAndShare,
  openPopup,
  pairingCode,
  type RelayProcess,
  type Rig,
  startRelayProcess,
  startRig,
  waitForTools,
} from '../helpers/webmcpRig.ts';

const extensionOrigin = `chrome-extension://${bundledExtensionId}`;

/** Opens the extension socket like the extension would; resolves with the socket or the refusal status. */
function openSocket(
  relay: RelayProcess,
  ticket: string | undefined,
  origin = extensionOrigin,
): Promise<WebSocket | number> {
  const query = ticket === undefined ? '' : `?ticket=${encodeURIComponent(ticket)}`;
  const socket = new WebSocket(`${relay.url.replace('http', 'ws')}/extension${query}`, {
    headers: { origin },
  });
  return new Promise((resolve) => {
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    socket.once('error', () => resolve(-1));
  });
}

describe('relay doors', () => {
  let home: string;
  let db: string;
  let relay: RelayProcess;
  let credential: string;

  const post = (path: string, init: { origin?: string; auth?: string; body?: unknown; host?: string } = {}) =>
    fetch(`${relay.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(init.origin ? { origin: init.origin } : {}),
        ...(init.auth ? { authorization: `Bearer ${init.auth}` } : {}),
      },
      body: JSON.stringify(init.body ?? {}),
    });
  const ticket = async (): Promise<string> => {
    const response = await post('/ticket', { origin: extensionOrigin, auth: credential });
    return ((await response.json()) as { ticket: string }).ticket;
  };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'tabward-relay-doors-'));
    db = join(home, 'relay.db');
    relay = await startRelayProcess(db);
  });
  after(async () => {
    await relay?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  test('pairing: only from the extension Origin, only with a fresh code, only once', async () => {
    const code = await pairingCode(db, 'team');
    assert.equal((await post('/pair', { origin: 'https://evil.example', body: { code } })).status, 403);
    assert.equal((await post('/pair', { body: { code } })).status, 403, 'no Origin at all');
    assert.equal((await post('/pair', { origin: extensionOrigin, body: { code: 'AAAA-BBBB' } })).status, 401);
    const paired = await post('/pair', { origin: extensionOrigin, body: { code: code.toLowerCase() } });
    assert.equal(paired.status, 200);
    const body = (await paired.json()) as { credential: string; workspace: string };
    assert.equal(body.workspace, 'team');
    credential = body.credential;
    const again = await post('/pair', { origin: extensionOrigin, body: { code } });
    assert.equal(again.status, 401);
    assert.match(((await again.json()) as { error: string }).error, /tabward relay pair --workspace/);
  });

  test('tickets: need the credential and the extension Origin', async () => {
    assert.equal((await post('/ticket', { origin: extensionOrigin })).status, 401);
    assert.equal((await post('/ticket', { origin: extensionOrigin, auth: 'twe_forged' })).status, 401);
    assert.equal((await post('/ticket', { origin: 'https://evil.example', auth: credential })).status, 403);
    assert.match(await ticket(), /^twt_/);
  });

  test('the socket: no ticket, a wrong Origin, a replayed or expired ticket are refused', async () => {
    assert.equal(await openSocket(relay, undefined), 401);
    const good = await ticket();
    assert.equal(await openSocket(relay, good, 'https://evil.example'), 403);
    const socket = await openSocket(relay, good);
    assert.ok(socket instanceof WebSocket, `a fresh ticket opens the socket (got ${String(socket)})`);
    socket.close();
    assert.equal(await openSocket(relay, good), 401, 'a ticket works once');
    assert.equal(await openSocket(relay, 'twt_made_up'), 401);
    // A ticket a minute old, written into the relay's own database file.
    const store = new RelayStore(db);
    const extensionId = store.extensionByCredential(credential)?.id ?? '';
    const stale = store.issueTicket(extensionId, -1000);
    store.close();
    assert.equal(await openSocket(relay, stale), 401);
  });

  test('the Host header is checked on every door (no DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = (path: string, method: string): Promise<number> =>
      new Promise((resolve) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: relay.port,
            path,
            method,
            headers: { host: `evil.example:${relay.port}`, origin: extensionOrigin },
          },
          (res) => resolve(res.statusCode ?? 0),
        );
        req.end('{}');
      });
    assert.equal(await status('/mcp', 'POST'), 403);
    assert.equal(await status('/ticket', 'POST'), 403);
    assert.equal(await status('/health', 'GET'), 403);
  });

  test('messages over the size cap close the socket', async () => {
    const socket = await openSocket(relay, await ticket());
    assert.ok(socket instanceof WebSocket);
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.send(JSON.stringify({ t: 'sites', sites: [], pad: 'x'.repeat(2 * 1024 * 1024) }));
    assert.equal(await closed, 1009);
  });

  test('agents: a bad or revoked token is refused; a workspace sees only its own sites', async () => {
    const socket = await openSocket(relay, await ticket());
    assert.ok(socket instanceof WebSocket);
    const tools = [
      { name: 'read', description: 'r', inputSchema: { type: 'object' }, readOnly: true },
      { name: 'write', description: 'w', inputSchema: { type: 'object' }, readOnly: false },
    ];
    const shareBoth = (): void =>
      socket.send(
        JSON.stringify({
          t: 'sites',
          sites: [
            { origin: 'https://shop.example', url: 'https://shop.example/', tools, openTabs: 1 },
            { origin: 'https://github.com', url: 'https://github.com/settings/profile', tools, openTabs: 1 },
          ],
        }),
      );
    shareBoth();
    await assert.rejects(connectAgent(relay.url, 'twa_forged'), /valid agent token is required/);
    const outsider = await connectAgent(relay.url, await agentToken(db, 'other'));
    assert.match((await callTool(outsider, 'listSiteTools')).text, /No site is shared yet/);
    const refused = await callTool(outsider, 'callSiteTool', { site: 'https://shop.example', tool: 'read' });
    assert.match(refused.text, /not_found: https:\/\/shop\.example is not shared with workspace "other"/);
    await outsider.close();

    const teamToken = await agentToken(db, 'team', 'verdicts');
    const agent = await connectAgent(relay.url, teamToken);
    await waitForTools(agent, (text) => text.includes('shop.example'));
    // A second browser of the workspace shares another site; the first one's next report does not erase it.
    const laptop = await post('/pair', {
      origin: extensionOrigin,
      body: { code: await pairingCode(db, 'team') },
    });
    const laptopCredential = ((await laptop.json()) as { credential: string }).credential;
    const laptopTicket = (await (
      await post('/ticket', { origin: extensionOrigin, auth: laptopCredential })
    ).json()) as {
      ticket: string;
    };
    const second = await openSocket(relay, laptopTicket.ticket);
    assert.ok(second instanceof WebSocket);
    second.send(
      JSON.stringify({
        t: 'sites',
        sites: [{ origin: 'https://wiki.example', url: 'https://wiki.example/', tools, openTabs: 1 }],
      }),
    );
    await waitForTools(agent, (text) => text.includes('wiki.example'));
    socket.send(
      JSON.stringify({
        t: 'sites',
        sites: [{ origin: 'https://shop.example', url: 'https://shop.example/', tools, openTabs: 1 }],
      }),
    );
    await waitForTools(agent, (text) => !text.includes('github.com') && text.includes('wiki.example'));
    second.close();
    shareBoth();
    await waitForTools(agent, (text) => text.includes('github.com'));
    // The relay's verdicts, as the extension receives them; the fake extension answers at once. The document
    // that would run the call is what is judged: github.com's is a settings page, whatever the site announced.
    const asked = new Set<string>();
    const documentUrl: Record<string, string> = {
      'https://shop.example': 'https://shop.example/cart',
      'https://github.com': 'https://github.com/settings/profile',
    };
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as RelayToExtension;
      const reply = (body: Record<string, unknown>) =>
        socket.send(JSON.stringify({ taskId: 'taskId' in message ? message.taskId : '', ...body }));
      if (message.t === 'locate')
        reply({
          t: 'located',
          target: { documentId: `doc-${message.site}`, url: documentUrl[message.site] },
        });
      if (message.t === 'ask') {
        asked.add(message.taskId);
        const always = message.tool === 'write' && message.site === 'https://shop.example';
        reply({ t: 'decision', decision: always ? 'always' : 'approved' });
      }
      if (message.t === 'call')
        reply({ t: 'outcome', outcome: { ok: true, result: `ask=${asked.has(message.taskId)}` } });
    });
    const verdict = async (site: string, tool: string) =>
      (await callTool(agent, 'callSiteTool', { site, tool })).text.split('\n')[2];
    assert.equal(await verdict('https://shop.example', 'read'), 'ask=false', 'read-only runs');
    assert.equal(await verdict('https://shop.example', 'write'), 'ask=true', 'a write asks');
    assert.equal(await verdict('https://shop.example', 'write'), 'ask=false', '"always allow" sticks');
    assert.equal(await verdict('https://github.com', 'read'), 'ask=true', 'a sensitive site always asks');

    const store = new RelayStore(db);
    const id = store.listAgents().find((a) => a.name === 'verdicts')?.id ?? '';
    store.revokeAgent(id);
    store.close();
    await assert.rejects(connectAgent(relay.url, teamToken), /valid agent token is required/);
    await agent.close();
    socket.close();
  });

  test('a call while no browser is connected fails at once and says what to do', async () => {
    const agent = await connectAgent(relay.url, await agentToken(db, 'team'));
    const result = await callTool(agent, 'callSiteTool', { site: 'https://shop.example', tool: 'read' });
    assert.ok(result.isError);
    assert.match(result.text, /No browser of workspace "team" is connected.*share the site from its popup/);
    await agent.close();
  });
});

describe('a hostile page next to a shared shop', () => {
  let site: Fixture;
  let rig: Rig;

  before(async () => {
    site = await startWebmcpSite();
    rig = await startRig({ webmcp: true });
  });
  after(async () => {
    await rig?.close();
    await site?.close();
  });

  test('the popup says why pairing failed, and shares nothing before pairing', async () => {
    const page = await rig.context.newPage();
    await page.goto(site.url('127.0.0.1', '/other'));
    const popup = await openPopup(rig.context, site.url('127.0.0.1', '/other'));
    assert.equal(await popup.locator('#site').isVisible(), false, 'no Share button before pairing');
    await popup.fill('#relay-url', rig.relay.url);
    await popup.fill('#pair-code', 'WXYZ-2345');
    await popup.click('#pair');
    // Bounds, not timings: the popup answers in well under a second, but a worker that slept wakes first.
    await popup
      .locator('#error', { hasText: 'Unknown or expired pairing code' })
      .waitFor({ timeout: 15_000 });
    await popup.fill('#relay-url', 'http://127.0.0.1:9');
    await popup.click('#pair');
    await popup
      .locator('#error', { hasText: 'No relay answers at http://127.0.0.1:9' })
      .waitFor({ timeout: 15_000 });
    await popup.close();
    await page.close();
  });

  test('cannot read the nonce, cannot forge outcomes, never receives the shop calls', async () => {
    const shopUrl = site.url('127.0.0.1', '/shop');
    const evilUrl = site.url('localhost', '/evil');
    const { page: shop } = await openAndShare(rig, shopUrl, true);
    const { page: evil, popup: evilPopup } = await openAndShare(rig, evilUrl, false);
    // Open before sharing: only the native bridge went in, with no nonce to find. Reloaded, the observer runs
    // at document_start, before the hostile script patches what it could.
    assert.deepEqual(await evil.evaluate('window.leaks'), []);
    await evil.reload();
    await waitForTools(rig.agent, (text) => text.split('searchProducts').length === 3, 20_000);
    const shopOrigin = new URL(shopUrl).origin;
    const result = await callTool(rig.agent, 'callSiteTool', {
      site: shopOrigin,
      tool: 'searchProducts',
      arguments: { query: 'q' },
    });
    assert.match(result.text, /3 results for q/);
    const evilResult = await callTool(rig.agent, 'callSiteTool', {
      site: new URL(evilUrl).origin,
      tool: 'searchProducts',
      arguments: { query: 'e' },
    });
    assert.match(evilResult.text, /3 results for e/);
    assert.doesNotMatch(evilResult.text, /forged/);
    assert.deepEqual(await evil.evaluate('window.leaks'), [], 'no attribute, event type or message seen');
    assert.equal(await evil.evaluate('document.documentElement.hasAttribute("data-tabward")'), false);
    assert.equal(await evil.evaluate('window.runtime'), 'none', 'the page has no channel to the extension');
    const evilCalls = (await evil.evaluate('window.calls')) as [string, unknown][];
    assert.deepEqual(
      evilCalls.map(([, input]) => input),
      [{ query: 'e' }],
      'the shop call did not go to the evil page',
    );
    assert.equal(((await shop.evaluate('window.calls')) as unknown[]).length, 1);

    // A cross-site navigation: the shop's tab goes to the other site. Calls follow documents, not tabs: the
    // other site's call reaches its newest document, and the shop, with no document left, reopens in the background.
    await shop.goto(evilUrl);
    await shop.waitForFunction('window.ready');
    // The new document's tools reach the relay a moment after the page is ready (seen late once on a loaded
    // machine): until then the site's other document answers. Once they have, its calls go to the newest.
    await waitFor('the newest document to take the call', async () => {
      const followed = await callTool(rig.agent, 'callSiteTool', {
        site: new URL(evilUrl).origin,
        tool: 'searchProducts',
        arguments: { query: 'moved' },
      });
      assert.match(followed.text, /3 results for moved/);
      return ((await shop.evaluate('window.calls.length')) as number) > 0;
    });
    assert.deepEqual(
      await shop.evaluate('window.calls.map((c) => c[1].query)'),
      ['moved'],
      'the newest document',
    );
    const home = await callTool(rig.agent, 'callSiteTool', {
      site: shopOrigin,
      tool: 'searchProducts',
      arguments: { query: 'home' },
    });
    assert.match(home.text, /3 results for home/);
    // The call was answered by the reopened shop; Playwright's list of the context's tabs learns of the tab the
    // extension opened a moment later (once, under load in a full run, not yet when asked).
    await waitFor(
      'the shop reopened in a tab of its own',
      () => rig.context.pages().some((p) => p.url() === shopUrl),
      { timeoutMs: 10_000 },
    );

    // Stop sharing: the site leaves the agents' list and its tools are out of reach.
    await evilPopup.click('#unshare');
    await waitForTools(rig.agent, (text) => !text.includes('localhost'));
    const refused = await callTool(rig.agent, 'callSiteTool', {
      site: new URL(evilUrl).origin,
      tool: 'searchProducts',
      arguments: { query: 'after' },
    });
    assert.match(refused.text, /is not shared with workspace "team"/);
  });
});
