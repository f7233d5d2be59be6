// The `snapshot` option of navigate_page, new_page, click, press_key, fill_form and wait_for: the tab's snapshot
// comes with the result (one agent turn instead of two), read in a take_snapshot call of its own on the call path:
// audited, judged and redacted like any read, its refs usable, and an action that went through never turned into
// an error by a snapshot that could not be taken. In-process (test/helpers/inProcessMcp.ts), real Chromium.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

const secret = 'Hush-Value-5521';

let site: Fixture;
let tw: InProcessBrowser;
const url = (path: string) => site.url('shop.test', path);

before(async () => {
  site = await startFixture({
    'GET /list': (_req, _body, res) =>
      html(res, '<title>List</title><h1>Orders</h1><a href="/order/7">Order seven</a>'),
    'GET /order/7': (_req, _body, res) => html(res, '<title>Order 7</title><h1>Order seven detail</h1>'),
    'GET /alert': (_req, _body, res) =>
      html(res, '<title>Alert</title><button onclick="alert(\'are you sure\')">Warn me</button>'),
    // The page shows a declared secret: the snapshot that comes with a result must not.
    'GET /leak': (_req, _body, res) => html(res, `<title>Leak</title><p>code ${secret}</p>`),
    'GET /search': (_req, _body, res) =>
      html(res, `<title>Search</title><form action="/found"><label>Query <input name="q"></label></form>`),
    'GET /found': (req, _body, res) =>
      html(
        res,
        `<title>Found</title><p>Results for ${new URL(req.url ?? '/', 'http://x').searchParams.get('q')}</p>`,
      ),
  });
  tw = await startInProcess({ secrets: `SHOP_CODE=${secret}\n` });
});
after(async () => {
  await tw?.close();
  await site?.close();
});

const snapshotCalls = (mcp: InProcessMcp) =>
  mcp.audit().filter((record) => record.tool === 'take_snapshot' && record.outcome !== 'started');

describe('the snapshot option', { timeout: 120_000 }, () => {
  test('navigate_page and click with snapshot: the page comes with the result, its refs act, each read is audited', async () => {
    const mcp = await tw.connect();
    const opened = await mcp.call('new_page', { url: url('/list') });
    assert.doesNotMatch(opened.text, /<untrusted>/, 'no snapshot unless asked');
    const listed = await mcp.call('navigate_page', { url: url('/list'), snapshot: true });
    assert.ok(!listed.isError, listed.text);
    assert.match(listed.text, /^Tab p\d+: .*"List" \(HTTP 200\)$/m, 'the navigation line first');
    assert.match(listed.text, /Tab p\d+ \[agent\] .*\/list "List"\n<untrusted>/, listed.text);
    const link = refOf(listed.text, 'Order seven');
    const clicked = await mcp.call('click', { ref: link, snapshot: true });
    assert.ok(!clicked.isError, clicked.text);
    assert.match(clicked.text, /^Clicked link "Order seven"/m, clicked.text);
    assert.match(clicked.text, /Order seven detail/, 'the page the click led to');
    const reads = snapshotCalls(mcp);
    assert.equal(reads.length, 2, 'one take_snapshot call per option used');
    assert.ok(reads.every((record) => record.outcome === 'ok'));
    await mcp.close();
  });

  test('new_page and wait_for with snapshot; press_key with snapshot shows the page Enter led to', async () => {
    const mcp = await tw.connect();
    const form = await mcp.call('new_page', { url: url('/search'), snapshot: true });
    assert.match(form.text, /textbox "Query" @e\d+/, form.text);
    const field = refOf(form.text, 'Query');
    const filled = await mcp.call('fill_form', { fields: [{ ref: field, value: 'lamps' }], snapshot: true });
    assert.match(filled.text, /textbox "Query" ="lamps"/, filled.text);
    const pressed = await mcp.call('press_key', { key: 'Enter', ref: field, snapshot: true });
    assert.ok(!pressed.isError, pressed.text);
    assert.match(pressed.text, /Results for lamps/, pressed.text);
    const waited = await mcp.call('wait_for', { text: 'Results for', snapshot: true });
    assert.match(waited.text, /^Found "Results for"[\s\S]*<untrusted>[\s\S]*Results for lamps/, waited.text);
    await mcp.close();
  });

  test('pageId: the tab named is the tab read, not the selected one', async () => {
    const mcp = await tw.connect();
    await mcp.call('new_page', { url: url('/list') });
    const first = (await mcp.call('list_pages')).text.match(/\*(p\d+)/)?.[1];
    assert.ok(first, 'the selected tab');
    await mcp.call('new_page', { url: url('/search') });
    const again = await mcp.call('navigate_page', { url: url('/order/7'), pageId: first, snapshot: true });
    assert.match(again.text, new RegExp(`Tab ${first} \\[agent\\] .*/order/7 "Order 7"`), again.text);
    await mcp.close();
  });

  test('a click that opens a dialog went through: the snapshot says why it is missing, the call is no error', async () => {
    const mcp = await tw.connect();
    const page = await mcp.call('new_page', { url: url('/alert'), snapshot: true });
    const clicked = await mcp.call('click', { ref: refOf(page.text, 'Warn me'), snapshot: true });
    assert.ok(!clicked.isError, clicked.text);
    assert.match(clicked.text, /Clicked button "Warn me"/, clicked.text);
    assert.match(clicked.text, /No snapshot: .*are you sure/s, clicked.text);
    assert.doesNotMatch(clicked.text, /<untrusted>/);
    const answered = await mcp.call('handle_dialog', { action: 'dismiss' });
    assert.ok(!answered.isError, answered.text);
    await mcp.close();
  });

  test('a declared secret on the page is redacted from the snapshot that comes with a result', async () => {
    const mcp = await tw.connect();
    const leak = await mcp.call('new_page', { url: url('/leak'), snapshot: true });
    assert.match(leak.text, /<untrusted>[\s\S]*code /, leak.text);
    assert.ok(!leak.text.includes(secret), leak.text);
    await mcp.close();
  });
});
