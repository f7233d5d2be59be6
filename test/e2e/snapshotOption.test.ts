// The `snapshot` option of navigate_page, new_page, click, hover, press_key, fill_form, wait_for and handle_dialog:
// the tab's snapshot comes with the result (one agent turn instead of two), read as take_snapshot reads it inside
// the same call on the call path (docs/architecture.md "One call, one response"): named in the call's audit record
// (`followUps`), judged and redacted like any read, its refs usable, and an action that went through never turned
// into an error by a snapshot that could not be taken. In-process (test/helpers/inProcessMcp.ts), real Chromium.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Approver } from '../../src/core/approvals.ts';
import { ToolRunner } from '../../src/tools/runner.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const secret = 'Hush-Value-5521';
/** The /gate page shows "Gate open" once the test opens it (its script asks /gate-state). */
let gateOpen = false;

let site: Fixture;
let tw: InProcessBrowser;
const url = (path: string) => site.url('shop.test', path);

before(async () => {
  site = await startFixture({
    'GET /list': (_req, _body, res) =>
      html(res, '<title>List</title><h1>Orders</h1><a href="/order/7">Order seven</a>'),
    'GET /order/7': (_req, _body, res) => html(res, '<title>Order 7</title><h1>Order seven detail</h1>'),
    'GET /alert': (_req, _body, res) =>
      html(
        res,
        `<title>Alert</title><button onclick="document.body.insertAdjacentHTML('beforeend', confirm('are you sure') ? '<p>Went ahead</p>' : '<p>Kept it</p>')">Warn me</button>
        <button onmouseenter="document.getElementById('menu').hidden = false">Account menu</button><ul id="menu" hidden><li><a href="/order/7">Sign out</a></li></ul>`,
      ),
    // The page shows a declared secret: the snapshot that comes with a result must not.
    'GET /leak': (_req, _body, res) => html(res, `<title>Leak</title><p>code ${secret}</p>`),
    'GET /search': (_req, _body, res) =>
      html(res, `<title>Search</title><form action="/found"><label>Query <input name="q"></label></form>`),
    // A login wall: with auto-switch on and the switch not made, the call still worked in the tab it named.
    'GET /signin': (_req, _body, res) =>
      html(
        res,
        '<title>Sign in</title><form method="post"><label>Email <input type="email" name="e"></label><label>Password <input type="password" name="p"></label><button>Continue</button></form>',
      ),
    'GET /gate': (_req, _body, res) =>
      html(
        res,
        '<title>Gate</title><script>const poll = async () => { if ((await (await fetch("/gate-state")).text()) === "open") document.body.append("Gate open"); else setTimeout(poll, 50); }; poll();</script>',
      ),
    'GET /gate-state': (_req, _body, res) => {
      res.end(gateOpen ? 'open' : 'shut');
    },
    'GET /to-vault': (_req, _body, res) =>
      html(res, `<title>Hub</title><a href="${site.url('vault.test', '/safe')}">Open the vault</a>`),
    'GET /safe': (_req, _body, res) => html(res, '<title>Vault</title><p>Vault contents</p>'),
    'GET /found': (req, _body, res) =>
      html(
        res,
        `<title>Found</title><p>Results for ${new URL(req.url ?? '/', 'http://x').searchParams.get('q')}</p>`,
      ),
  });
  tw = await startInProcess({ secrets: `SHOP_CODE=${secret}\n`, rules: ['*://vault.test/*'] });
});
after(async () => {
  await tw?.close();
  await site?.close();
});

const tabIdOf = (result: { text: string }) => /^Tab (p\d+):/m.exec(result.text)?.[1];

/** The follow-up reads the calls' records name: "take_snapshot of p2: ok", or why it could not be read. */
const snapshotCalls = (mcp: InProcessMcp) =>
  mcp
    .audit()
    .flatMap((record) => ('followUps' in record ? (record.followUps ?? []) : []))
    .filter((read) => read.startsWith('take_snapshot'));

describe('the snapshot option', { timeout: 120_000 }, () => {
  test('navigate_page and click with snapshot: the page comes with the result, its refs act, each read is audited', async () => {
    const mcp = await tw.connect();
    const opened = await mcp.call('new_page', { url: url('/list') });
    assert.doesNotMatch(opened.text, /<untrusted>/, 'no snapshot unless asked');
    const listed = await mcp.call('navigate_page', { url: url('/list'), snapshot: true });
    assert.ok(!listed.isError, listed.text);
    assert.match(listed.text, /^Tab p\d+: .*"List" \(HTTP 200\)$/m, 'the navigation line first');
    assert.match(listed.text, /Tab p\d+ \S+\/list "List"\n<untrusted>/, listed.text);
    const link = refOf(listed.text, 'Order seven');
    const clicked = await mcp.call('click', { ref: link, snapshot: true });
    assert.ok(!clicked.isError, clicked.text);
    assert.match(clicked.text, /^Clicked link "Order seven"/m, clicked.text);
    assert.match(clicked.text, /Order seven detail/, 'the page the click led to');
    const reads = snapshotCalls(mcp);
    assert.equal(reads.length, 2, 'one follow-up read per option used, in the call that used it');
    assert.ok(
      reads.every((read) => / of p\d+: ok$/.test(read)),
      reads.join('\n'),
    );
    assert.equal(
      mcp.audit().filter((record) => record.tool === 'take_snapshot').length,
      0,
      'no take_snapshot call of its own',
    );
    await mcp.close();
  });

  test('new_page and wait_for with snapshot; press_key with snapshot shows the page Enter led to', async () => {
    const mcp = await tw.connect();
    const form = await mcp.call('new_page', { url: url('/search'), snapshot: true });
    assert.match(form.text, /textbox Query @e\d+/, form.text);
    const field = refOf(form.text, 'Query');
    const filled = await mcp.call('fill_form', { fields: [{ ref: field, value: 'lamps' }], snapshot: true });
    assert.match(filled.text, /textbox Query ="lamps"/, filled.text);
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
    assert.match(again.text, new RegExp(`Tab ${first} \\S+/order/7 "Order 7"`), again.text);
    await mcp.close();
  });

  test('a click that opens a dialog went through: the snapshot says why it is missing, the call is no error; handle_dialog and hover with snapshot', async () => {
    const mcp = await tw.connect();
    const page = await mcp.call('new_page', { url: url('/alert'), snapshot: true });
    const clicked = await mcp.call('click', { ref: refOf(page.text, 'Warn me'), snapshot: true });
    assert.ok(!clicked.isError, clicked.text);
    assert.match(clicked.text, /Clicked button "Warn me"/, clicked.text);
    assert.match(clicked.text, /No snapshot: .*are you sure/s, clicked.text);
    assert.doesNotMatch(clicked.text, /<untrusted>/);
    const answered = await mcp.call('handle_dialog', { action: 'dismiss', snapshot: true });
    assert.ok(!answered.isError, answered.text);
    assert.match(answered.text, /<untrusted>[\s\S]*Kept it/, 'the page as the answer left it');
    const hovered = await mcp.call('hover', { ref: refOf(page.text, 'Account menu'), snapshot: true });
    assert.match(hovered.text, /link Sign out .*@e\d+/, 'the menu the hover opened, with its refs');
    await mcp.close();
  });

  test('a declared secret on the page is redacted from the snapshot that comes with a result', async () => {
    const mcp = await tw.connect();
    const leak = await mcp.call('new_page', { url: url('/leak'), snapshot: true });
    assert.match(leak.text, /<untrusted>[\s\S]*code /, leak.text);
    assert.ok(!leak.text.includes(secret), leak.text);
    await mcp.close();
  });

  test('a login wall the switch was not made for: the snapshot is of the tab the call named, not the selected one', async () => {
    const mcp = await tw.connect();
    const named = tabIdOf(await mcp.call('new_page', { url: url('/list') }));
    const selected = tabIdOf(await mcp.call('new_page', { url: url('/search') }));
    assert.ok(named && selected && named !== selected);
    // auto mode (the login-wall switch on), the human saying no if asked (this machine's Chrome may answer).
    const saysNo: Approver = { name: 'test', ask: async () => ({ choice: 'reject' }) };
    const auto = new ToolRunner({ ...mcp.runner.options, autoSwitch: true });
    const walled = await auto.call(
      'navigate_page',
      { url: url('/signin'), pageId: named, snapshot: true },
      { frontEnd: 'mcp', approver: saysNo },
    );
    const shown = walled.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
    assert.match(shown, /Login wall/, shown);
    assert.match(shown, new RegExp(`Tab ${named} \\S+/signin "Sign in"\n<untrusted>`), shown);
    // Its call path ends with the test: what later tests read must not count as this one's taint.
    auto.path.close();
    await mcp.close();
  });

  test('a skipped call comes with no snapshot; a modified one with the snapshot of the tab it acted in', async () => {
    const mcp = await tw.connect({ policy: 'strict' });
    const first = tabIdOf(await mcp.call('new_page', { url: url('/list') }));
    const second = tabIdOf(await mcp.call('new_page', { url: url('/search') }));
    assert.ok(first && second);
    mcp.human.will({ decision: 'skip' });
    const skipped = await mcp.call('press_key', { key: 'End', pageId: first, snapshot: true });
    assert.match(skipped.text, /The user skipped press_key; nothing was done/, skipped.text);
    assert.doesNotMatch(skipped.text, /<untrusted>/, 'nothing was done: nothing to show');
    mcp.human.will({
      decision: 'modify',
      args: JSON.stringify({ key: 'End', pageId: second, snapshot: true }),
    });
    const pressed = await mcp.call('press_key', { key: 'End', pageId: first, snapshot: true });
    assert.ok(!pressed.isError, pressed.text);
    assert.match(pressed.text, new RegExp(`Tab ${second} \\S+/search "Search"\n<untrusted>`), pressed.text);
    assert.equal(snapshotCalls(mcp).length, 1);
    await mcp.close();
  });

  test('a sensitive page a click led to, shown by the snapshot: no note that no result showed it', async () => {
    const mcp = await tw.connect();
    const hub = await mcp.call('new_page', { url: url('/to-vault'), snapshot: true });
    mcp.human.will({ decision: 'approve' });
    const clicked = await mcp.call('click', { ref: refOf(hub.text, 'Open the vault'), snapshot: true });
    assert.ok(!clicked.isError, clicked.text);
    assert.match(clicked.text, /Vault contents/, clicked.text);
    assert.doesNotMatch(clicked.text, /not a page a tool result showed/, clicked.text);
    assert.match((await mcp.call('browser_status')).text, /tainted by reading: http:\/\/vault\.test:\d+\n/);
    await mcp.close();
  });

  test('a call the client cancelled reads no snapshot once its action is done', async () => {
    const mcp = await tw.connect();
    await mcp.call('new_page', { url: url('/gate') });
    const cancel = new AbortController();
    const waiting = mcp.client
      .callTool({ name: 'wait_for', arguments: { text: 'Gate open', snapshot: true } }, undefined, {
        signal: cancel.signal,
      })
      .catch((error: unknown) => error);
    await waitFor('wait_for to start', () => mcp.audit().some((record) => record.tool === 'wait_for'));
    cancel.abort();
    await waiting;
    gateOpen = true;
    await waitFor('wait_for to end', () =>
      mcp.audit().some((record) => record.tool === 'wait_for' && record.outcome === 'ok'),
    );
    await mcp.call('list_pages');
    assert.deepEqual(snapshotCalls(mcp), [], 'no read started for nobody');
    await mcp.close();
  });
});
