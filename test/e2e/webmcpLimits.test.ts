// The relay's limits, measured as they are sent (issue 17): a page result capped by the bytes its JSON costs, not
// its characters; one site's oversized tool definitions left out of the site report (and shown in the popup)
// instead of taking the browser's link down; an MCP session id the relay does not know answered 404, so a
// client initializes again; and one 1 MiB body limit, before and inside a session, answered 413.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from 'playwright-core';
import { startWebmcpSite } from '../fixtures/webmcpSite.ts';
import type { Fixture } from '../helpers/fixtureServer.ts';
import { initializeBody, postMcp } from '../helpers/rawMcp.ts';
import { waitFor } from '../helpers/waitFor.ts';
import {
  callTool,
  connectAgent,
  openAndShare,
  type Rig,
  startRelayProcess,
  startRig,
  waitForTools,
} from '../helpers/webmcpRig.ts';

describe('WebMCP relay limits', () => {
  let site: Fixture;
  /** A second origin (WebMCP needs a secure context: 127.0.0.1 and localhost, on their own ports). */
  let other: Fixture;
  let rig: Rig;
  let shop: Page;
  let popup: Page;
  let origin: string;
  const call = (tool: string, args: Record<string, unknown> = {}) =>
    callTool(rig.agent, 'callSiteTool', { site: origin, tool, arguments: args });

  /** POSTs raw JSON-RPC to the relay's /mcp with the agent's token. */
  const post = (body: string, session?: string) => postMcp(`${rig.relay.url}/mcp`, rig.token, body, session);
  const initialize = initializeBody;
  const listCall = (padding: string) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'listSiteTools', arguments: { padding } },
    });

  before(async () => {
    site = await startWebmcpSite();
    other = await startWebmcpSite();
    rig = await startRig({ webmcp: true });
    origin = site.url('127.0.0.1', '').replace(/\/$/, '');
    ({ page: shop, popup } = await openAndShare(rig, site.url('127.0.0.1', '/shop'), true));
    await waitForTools(rig.agent, (text) => text.includes('exportControl'));
  });
  after(async () => {
    await rig?.close();
    await site?.close();
    await other?.close();
  });

  test('a result of 200,000 control characters is refused by its JSON bytes; a call in flight survives', async () => {
    const order = call('placeOrder');
    await popup.locator('#pending .approve').first().click({ timeout: 10_000 });
    await waitFor('the page to run placeOrder', async () =>
      ((await shop.evaluate('window.calls')) as [string][]).some(([name]) => name === 'placeOrder'),
    );
    const big = await call('exportControl');
    assert.ok(big.isError, big.text.slice(0, 200));
    assert.match(big.text, /too_large|bad_input/);
    assert.match(big.text, /The result is 1200002 bytes as JSON, over the 262144-byte cap/);
    await shop.evaluate('window.release()');
    const placed = await order;
    assert.equal(placed.isError, false, placed.text);
    assert.match(placed.text, /order placed/);
  });

  test("a site's oversized tools are left out and shown in the popup; the link and other sites carry on", async () => {
    const big = await openAndShare(rig, site.url('localhost', '/big'), false);
    // 1.2 MB of tools announced: the relay must still hear this browser (it used to close the link, for ever).
    await big.page.evaluate('window.ready');
    for (let i = 0; i < 5; i++)
      assert.match((await call('searchProducts', { query: `still ${i}` })).text, /3 results for still/);
    const many = await openAndShare(rig, other.url('127.0.0.1', '/many'), false);
    const bigOrigin = site.url('localhost', '').replace(/\/$/, '');
    const manyOrigin = other.url('127.0.0.1', '').replace(/\/$/, '');
    await big.popup
      .locator('#dropped li', { hasText: /50 tool\(s\) not offered to agents \(over 16 KiB each/ })
      .waitFor({ timeout: 15_000 });
    await many.popup
      .locator('#dropped li', {
        hasText: /tool\(s\) not offered to agents \(past the 256 KiB a site may report/,
      })
      .waitFor({ timeout: 15_000 });
    const list = await waitForTools(
      rig.agent,
      (text) => text.includes(manyOrigin) && text.includes(`${bigOrigin}\n`) && text.includes('tool00'),
    );
    assert.match(
      list,
      new RegExp(`^${bigOrigin.replace(/\./g, '\\.')}\\n {2}\\(no tools registered now\\)$`, 'm'),
    );
    const manyListed = list.split('\n').filter((line) => /^ {2}tool\d\d/.test(line)).length;
    assert.ok(manyListed > 10 && manyListed < 50, `${manyListed} of /many's tools listed`);
    // The link never dropped: the shop answers, and so does the site that reported what fits.
    assert.match((await call('searchProducts', { query: 'still here' })).text, /3 results for still here/);
    const fromMany = await callTool(rig.agent, 'callSiteTool', { site: manyOrigin, tool: 'tool00' });
    assert.match(fromMany.text, /ok 0/);
    assert.equal(await popup.locator('#link.connected').count(), 1);
    await big.page.close();
    await many.page.close();
  });

  test('413: one 1 MiB body limit, starting a session and inside one', async () => {
    const over = 'x'.repeat(1024 * 1024 + 10);
    const refused = await post(initialize(over));
    assert.equal(refused.status, 413);
    assert.match(await refused.text(), /over the relay's 1048576-byte \(1 MiB\) limit; nothing was run/);

    const opened = await post(initialize());
    assert.equal(opened.status, 200);
    const session = opened.headers.get('mcp-session-id') ?? '';
    await opened.text();
    const inside = await post(listCall(over), session);
    assert.equal(inside.status, 413);
    assert.match(await inside.text(), /1048576-byte \(1 MiB\) limit/);
    const under = await post(listCall('x'.repeat(900 * 1024)), session);
    assert.equal(under.status, 200);
    await under.text();
  });

  test('an unknown session id is 404, so a client whose relay restarted initializes again', async () => {
    const unknown = await post(listCall(''), 'no-such-session');
    assert.equal(unknown.status, 404);
    assert.match(await unknown.text(), /"code":-32000.*No such MCP session.*initialize again/);

    const agent = await connectAgent(rig.relay.url, rig.token);
    const port = rig.relay.port;
    await rig.relay.stop();
    rig.relay = await startRelayProcess(rig.db, [], port);
    const stale = await agent
      .callTool({ name: 'listSiteTools', arguments: {} })
      .catch((error: unknown) => error);
    assert.ok(stale instanceof StreamableHTTPError, String(stale));
    assert.equal(stale.code, 404);
    await agent.close();
    const fresh = await connectAgent(rig.relay.url, rig.token);
    assert.match((await callTool(fresh, 'listSiteTools')).text, /http:\/\/127\.0\.0\.1:\d+/);
    await fresh.close();
  });

  test('a page schema cannot stall the relay: its pattern is matched in linear time, a huge array is refused unchecked', async () => {
    // A pattern that backtracks exponentially in JavaScript's engine (each more letter doubles the time: 40 letters
    // and a '!' would hold the relay's only thread for days), and an array under uniqueItems.
    await shop.evaluate(`(() => {
      const mc = document.modelContext;
      mc.registerTool({ name: 'tagWords', description: 'Tag words', annotations: { readOnlyHint: true },
        inputSchema: { type: 'object', properties: { words: { type: 'string', pattern: '^(\\\\w+\\\\s?)*$' } }, required: ['words'] },
        async execute() { return 'tagged'; } });
      mc.registerTool({ name: 'pickMany', description: 'Pick items', annotations: { readOnlyHint: true },
        inputSchema: { type: 'object', properties: { items: { type: 'array', uniqueItems: true, items: { type: 'object' } } } },
        async execute() { return 'picked'; } });
    })()`);
    // A client of its own: the test before restarts the relay's sessions.
    const agent = await connectAgent(rig.relay.url, rig.token);
    const call = (tool: string, args: Record<string, unknown>) =>
      callTool(agent, 'callSiteTool', { site: origin, tool, arguments: args });
    await waitForTools(agent, (text) => text.includes('tagWords') && text.includes('pickMany'));
    const words = await call('tagWords', { words: `${'a'.repeat(40)}!` });
    assert.ok(words.isError, words.text);
    assert.match(words.text, /do not match the schema of "tagWords"/);
    assert.equal((await call('tagWords', { words: 'fine words' })).isError, false);
    const many = await call('pickMany', { items: Array.from({ length: 3_000 }, (_, i) => ({ i })) });
    assert.ok(many.isError, many.text);
    assert.match(many.text, /cannot be checked: an array in the arguments has 3000 items; at most 1000/);
    assert.match((await call('searchProducts', { query: 'still here' })).text, /3 results for still here/);
    await agent.close();
  });
});
