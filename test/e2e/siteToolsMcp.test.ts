// The page's own WebMCP tools from `tabward mcp` (list_site_tools, call_site_tool), with no extension and no
// relay: the demo seller center registers listOrders and refundOrder on Chromium's own document.modelContext.
// Real `tabward mcp` subprocess, real MCP SDK client, --policy strict (every write asks, reads do not) and a rules
// file that marks the seller center under one of its names sensitive. What the server saw is the assertion.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type DemoSite, startDemoSite } from '../../src/demo/demoSite.ts';
import { startWebmcpSite } from '../fixtures/webmcpSite.ts';
import type { Fixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('WebMCP tools of the agent tab, through tabward mcp', () => {
  let site: DemoSite;
  let mcp: McpUnderTest;
  let dir = '';
  /**
   * The same seller center under two names, both secure contexts (WebMCP needs one): 127.0.0.1 is ordinary,
   * localhost matches the sensitive rule.
   */
  const at = (host: string, path: string) => `http://${host}:${site.port}${path}`;

  const login = async (host: string) => {
    await mcp.call('navigate_page', { url: at(host, '/login?next=/portal/orders') });
    const snap = (await mcp.call('take_snapshot')).text;
    await mcp.call('fill', { ref: refOf(snap, 'User name'), value: 'alice' });
    await mcp.call('fill', { ref: refOf(snap, 'Password'), value: 'demo-password' });
    const clicked = await mcp.call('click', { ref: refOf(snap, 'Sign in') });
    assert.match(clicked.text, /portal\/orders/, clicked.text);
  };
  /** Registers a tool in the tab the way a page would (evaluate_script is a write: the human approves it). */
  const register = async (source: string) => {
    mcp.human.will({ decision: 'approve' });
    const done = await mcp.call('evaluate_script', {
      function: `async () => { window.own ??= {}; const tool = ${source}; const c = new AbortController(); window.own[tool.name] = c; await document.modelContext.registerTool(tool, { signal: c.signal }); return 'ok'; }`,
    });
    assert.match(done.text, /ok/, done.text);
  };

  before(async () => {
    site = await startDemoSite();
    dir = mkdtempSync(join(tmpdir(), 'tabward-site-tools-'));
    const rules = join(dir, 'rules.txt');
    writeFileSync(rules, '*://localhost/portal/*\n');
    mcp = await startMcp({
      args: [
        '--chrome-arg',
        '--enable-features=WebMCP',
        '--policy',
        'strict',
        '--timeout',
        '8000',
        '--rules',
        rules,
      ],
    });
    // Strict: typing and signing in are writes that ask too.
    mcp.human.policy = () => ({ decision: 'approve' });
    await mcp.call('new_page', { url: at('127.0.0.1', '/') });
    await login('127.0.0.1');
    mcp.human.policy = undefined;
  });
  after(async () => {
    await mcp?.close();
    await site?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('lists the tab’s tools with hints and schemas, as untrusted page content', async () => {
    const list = await mcp.call('list_site_tools');
    assert.equal(list.isError, false, list.text);
    assert.match(list.text, /^<untrusted origin="http:\/\/127\.0\.0\.1:\d+">/);
    assert.match(list.text, /listOrders \(read-only\): "Orders of the Acme seller center/);
    assert.match(
      list.text,
      /refundOrder: "Refund one order in full\."\n {2}\{.*"pattern":"\^A-\[0-9\]\{4\}\$"/,
    );
  });

  test('a trusted read-only tool runs without asking; its result is wrapped as untrusted', async () => {
    const asked = mcp.human.questions.length;
    const shipped = await mcp.call('call_site_tool', {
      name: 'listOrders',
      arguments: { status: 'shipped' },
    });
    assert.equal(shipped.isError, false, shipped.text);
    assert.match(shipped.text, /^<untrusted origin="[^"]+">\n\[\{"id":"A-1001".*"status":"shipped"/);
    assert.doesNotMatch(shipped.text, /"paid"/);
    assert.equal(mcp.human.questions.length, asked, 'no question for a read');
  });

  test('arguments are checked against the page schema before anyone is asked; unknown tools are named', async () => {
    const asked = mcp.human.questions.length;
    const bad = await mcp.call('call_site_tool', { name: 'refundOrder', arguments: { order: 'x' } });
    assert.ok(bad.isError);
    assert.match(bad.text, /^bad_input: .*\/order must match pattern.*Nothing was run/);
    const extra = await mcp.call('call_site_tool', { name: 'listOrders', arguments: { all: true } });
    assert.match(extra.text, /must NOT have additional properties/);
    const missing = await mcp.call('call_site_tool', { name: 'nope' });
    assert.match(missing.text, /^not_found: .*"nope".*Its tools: "listOrders", "refundOrder"/s);
    assert.equal(mcp.human.questions.length, asked);
    assert.deepEqual(site.writes, []);
  });

  test('a write asks like a click: reject does nothing, approve refunds', async () => {
    mcp.human.will({ decision: 'reject', reason: 'not that one' });
    const rejected = await mcp.call('call_site_tool', {
      name: 'refundOrder',
      arguments: { order: 'A-1002' },
    });
    assert.match(rejected.text, /^rejected: .*not that one/);
    assert.match(mcp.human.questions.at(-1) ?? '', /refundOrder/);
    assert.ok(mcp.human.offered.at(-1)?.includes('approve-all'), 'an ordinary page offers approve-all');
    assert.deepEqual(site.writes, []);

    mcp.human.will({ decision: 'approve' });
    const done = await mcp.call('call_site_tool', { name: 'refundOrder', arguments: { order: 'A-1002' } });
    assert.equal(done.isError, false, done.text);
    assert.match(done.text, /Order A-1002 refunded\./);
    assert.deepEqual(site.writes, ['refund A-1002']);
    const audit = readFileSync(mcp.auditPath, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const entry = audit.findLast((e) => e.tool === 'call_site_tool' && e.outcome === 'ok');
    assert.equal(entry?.element, 'WebMCP tool "refundOrder"');
    assert.equal(entry?.choice, 'approve');
  });

  test('a read-only hint is not believed when the name or description reads destructive', async () => {
    await register(
      `{ name: 'tidyOrders', description: 'Delete old orders', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: {} }, async execute() { window.tidied = true; return 'tidied'; } }`,
    );
    const list = await mcp.call('list_site_tools');
    assert.match(list.text, /tidyOrders \(claims read-only; treated as a write\): "Delete old orders/);
    const asked = mcp.human.questions.length;
    const refused = await mcp.call('call_site_tool', { name: 'tidyOrders' });
    assert.match(refused.text, /^rejected:/, 'asked, and no answer is a no');
    assert.equal(mcp.human.questions.length, asked + 1);
    mcp.human.will({ decision: 'approve' });
    const state = await mcp.call('evaluate_script', { function: '() => String(window.tidied)' });
    assert.match(state.text, /undefined/);
  });

  test('a tool withdrawn during the call fails it at once, saying the outcome is unknown', async () => {
    await register(
      `{ name: 'slowExport', description: 'Export (withdraws itself mid-call)', inputSchema: { type: 'object', properties: {} }, execute() { setTimeout(() => window.own.slowExport.abort(), 300); return new Promise(() => {}); } }`,
    );
    mcp.human.will({ decision: 'approve' });
    const started = Date.now();
    const result = await mcp.call('call_site_tool', { name: 'slowExport' });
    assert.ok(result.isError);
    assert.match(result.text, /withdrew "slowExport" during the call\. The outcome is unknown/);
    assert.ok(Date.now() - started < 8000, 'before the deadline');
  });

  test('results over 256 KiB of encoded bytes fail', async () => {
    await register(
      `{ name: 'exportControl', description: 'Control characters', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: {} }, async execute() { return '\\u0001'.repeat(60000); } }`,
    );
    const big = await mcp.call('call_site_tool', { name: 'exportControl' });
    assert.ok(big.isError);
    assert.match(big.text, /^bad_input: The result is 360002 bytes as JSON, over the 262144-byte cap/);
  });

  test('on a sensitive page every call asks, read-only ones too, with no approve-all', async () => {
    mcp.human.policy = () => ({ decision: 'approve' });
    await login('localhost');
    mcp.human.policy = undefined;
    const asked = mcp.human.questions.length;
    mcp.human.will({ decision: 'approve' });
    const read = await mcp.call('call_site_tool', { name: 'listOrders' });
    assert.equal(read.isError, false, read.text);
    assert.equal(mcp.human.questions.length, asked + 1, 'a read-only tool asks on a sensitive page');
    assert.match(mcp.human.questions.at(-1) ?? '', /localhost/);
    assert.ok(!mcp.human.offered.at(-1)?.includes('approve-all'));
    mcp.human.will({ decision: 'reject' });
    const write = await mcp.call('call_site_tool', { name: 'refundOrder', arguments: { order: 'A-1003' } });
    assert.match(write.text, /^rejected:/);
    assert.deepEqual(site.writes, ['refund A-1002']);
  });
});

describe('WebMCP tools of the agent tab, through the @mcp-b/global polyfill', () => {
  let shop: Fixture;
  let mcp: McpUnderTest;
  before(async () => {
    shop = await startWebmcpSite();
    // No WebMCP flag: the page's own polyfill provides document.modelContext.
    mcp = await startMcp({ args: ['--timeout', '8000'] });
    await mcp.call('new_page', { url: shop.url('127.0.0.1', '/poly') });
  });
  after(async () => {
    await mcp?.close();
    await shop?.close();
  });

  test('lists and calls the polyfill’s tools; a withdrawn tool fails the call made on it', async () => {
    const list = await waitFor('the polyfill registers its tools', async () => {
      const listed = await mcp.call('list_site_tools');
      return listed.text.includes('placeOrder') ? listed : undefined;
    });
    assert.match(list.text, /searchProducts \(read-only\): "Search the catalogue/);
    const found = await mcp.call('call_site_tool', { name: 'searchProducts', arguments: { query: 'socks' } });
    assert.match(found.text, /^<untrusted origin="[^"]+">\n3 results for socks\n<\/untrusted>$/);
    const bad = await mcp.call('call_site_tool', { name: 'addToCart', arguments: { sku: 'A1' } });
    assert.match(bad.text, /must have required property 'qty'/);
    // Isolated browser, default policy: a write runs like a click would, unasked.
    const added = await mcp.call('call_site_tool', { name: 'addToCart', arguments: { sku: 'A1', qty: 2 } });
    assert.match(added.text, /added 2 x A1/);
    const order = mcp.call('call_site_tool', { name: 'placeOrder' });
    await waitFor('the order call reached the page', async () =>
      /placeOrder/.test(
        (await mcp.call('evaluate_script', { function: '() => JSON.stringify(window.calls)' })).text,
      ),
    );
    await mcp.call('evaluate_script', { function: '() => window.withdraw("placeOrder")' });
    const result = await order;
    assert.ok(result.isError);
    assert.match(result.text, /withdrew "placeOrder" during the call\. The outcome is unknown/);
  });
});
