// The devtools tools (`--tools core,devtools`) through the real MCP SDK client: listed only with the flag; console
// messages and network requests of a tab listed and fetched, as untrusted page content with Cookie, Set-Cookie,
// Authorization, credential fields and a typed secret redacted; a request body read from a sensitive page taints
// like a read of it; emulate works in the agent's tab unasked (isolated) and asks in the user's own tab (shared),
// where capture starts as tabward attaches. In process (one isolated browser), plus "your Chrome" for the last
// part and a real `tabward mcp` for the flag itself.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { type CallOutcome, refOf, startMcp } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';
import { waitFor } from '../helpers/waitFor.ts';

const devtoolsNames = [
  'list_console_messages',
  'get_console_message',
  'list_network_requests',
  'get_network_request',
  'emulate',
];
const leaked = [
  'tok-123456',
  'cookie-secret-777',
  'hunter22',
  'resp-secret-888',
  'resp-token-999',
  'url-secret-555',
];
const typedSecret = 'typed-secret-4242';

const appPage = `<title>App</title><h1>App</h1>
<label>Note <input id="note" oninput="fetch('/api/note', {method: 'POST', body: 'note=' + this.value})"></label>
<script>
console.log('hello from app');
console.error('boom');
console.log('long:' + 'x'.repeat(300) + 'END');
setTimeout(() => { throw new Error('kaput'); }, 0);
fetch('/api/order?access_token=url-secret-555&page=2', {
  method: 'POST',
  headers: { authorization: 'Bearer tok-123456', 'content-type': 'application/json' },
  body: JSON.stringify({ item: 'book', password: 'hunter22' }),
}).then((response) => response.text()).then(() => console.log('order sent'));
</script>`;
const vaultPage = `<title>Vault</title><h1>Vault</h1>
<script>fetch('/vault/api', { method: 'POST', body: JSON.stringify({ balance: 'vault-balance-31337' }) });</script>`;

let site: Fixture;
let tw: InProcessBrowser;
const shop = (path: string) => site.url('shop.test', path);

async function succeeds(call: Promise<CallOutcome>): Promise<string> {
  const outcome = await call;
  assert.ok(!outcome.isError, outcome.text);
  return outcome.text;
}

/** The id a list line gives the first entry matching `pattern`, once the tab has it. */
async function idOf(mcp: InProcessMcp, tool: string, pattern: RegExp, args = {}): Promise<number> {
  return waitFor(`${pattern} in ${tool}`, async () => {
    const listed = await mcp.call(tool, args);
    const line = listed.text.split('\n').find((candidate) => pattern.test(candidate));
    const id = line ? /^(?:msgid|reqid)=(\d+)/.exec(line)?.[1] : undefined;
    return id === undefined ? undefined : Number(id);
  });
}

before(async () => {
  site = await startFixture({
    'GET /app': (_req, _body, res) =>
      html(res, appPage, 200, { 'set-cookie': 'sid=cookie-secret-777; Path=/' }),
    'GET /other': (_req, _body, res) =>
      html(res, '<title>Other</title><script>console.log("on other")</script>'),
    'POST /api/order': (_req, _body, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'set-cookie': 'session=resp-secret-888; Path=/',
      });
      res.end(JSON.stringify({ ok: true, token: 'resp-token-999' }));
    },
    'POST /api/note': (_req, _body, res) => void res.writeHead(204).end(),
    'GET /vault': (_req, _body, res) => html(res, vaultPage),
    'POST /vault/api': (_req, _body, res) => void res.writeHead(204).end(),
    'GET /tick': (_req, _body, res) =>
      html(
        res,
        '<title>Tick</title><script>let n = 0; setInterval(() => console.log("tick " + n++), 200);</script>',
      ),
  });
  tw = await startInProcess({
    rules: ['*://vault.test/*'],
    secrets: `SHOP_NOTE@${new URL(shop('/')).origin}=${typedSecret}\n`,
    tools: ['core', 'devtools'],
  });
});
after(async () => {
  await tw?.close();
  await site?.close();
});

describe('devtools tools', { timeout: 180_000 }, () => {
  test('listed only with --tools devtools; reads are read-only, emulate is a write', async () => {
    const plain = await startInProcess();
    const core = await plain.connect();
    const mcp = await tw.connect();
    try {
      const coreNames = (await core.client.listTools()).tools.map((tool) => tool.name);
      for (const name of devtoolsNames)
        assert.ok(!coreNames.includes(name), `${name} is not in the default list`);
      const { tools } = await mcp.client.listTools();
      const listed = new Map(tools.map((tool) => [tool.name, tool]));
      for (const name of devtoolsNames) assert.ok(listed.has(name), `${name} is listed with devtools`);
      assert.equal(tools.length, coreNames.length + devtoolsNames.length);
      assert.equal(listed.get('get_network_request')?.annotations?.readOnlyHint, true);
      assert.equal(listed.get('emulate')?.annotations?.destructiveHint, true);
      assert.match((await mcp.call('browser_status')).text, /tool categories: core, devtools/);
    } finally {
      await core.close();
      await mcp.close();
      await plain.close();
    }
  });

  test('console messages: listed for the current page, fetched in full, earlier pages on request', async () => {
    const mcp = await tw.connect();
    try {
      await succeeds(mcp.call('new_page', { url: shop('/app') }));
      const longId = await idOf(mcp, 'list_console_messages', /long:x+/);
      const list = await succeeds(mcp.call('list_console_messages'));
      assert.match(list, /<untrusted>/);
      assert.match(list, /\[log\] hello from app/);
      assert.match(list, /\[error\] boom/);
      assert.doesNotMatch(list, /END/, 'a long message is cut in the list');
      await idOf(mcp, 'list_console_messages', /\[error\] Uncaught Error: kaput/);
      const errors = await succeeds(mcp.call('list_console_messages', { types: ['error'] }));
      assert.doesNotMatch(errors, /hello from app/);
      const full = await succeeds(mcp.call('get_console_message', { msgid: longId }));
      assert.match(full, /long:x{300}END/);
      assert.match(full, /at http:\/\/shop\.test:\d+\/app:\d+:\d+/);

      await succeeds(mcp.call('navigate_page', { url: shop('/other') }));
      await idOf(mcp, 'list_console_messages', /on other/);
      assert.doesNotMatch((await mcp.call('list_console_messages')).text, /hello from app/);
      const kept = await succeeds(mcp.call('list_console_messages', { includePreserved: true }));
      assert.match(kept, /msgid=\d+ \(1 page ago\) \[log\] hello from app/);
    } finally {
      await mcp.close();
    }
  });

  test('network requests: headers, bodies and URLs shown with credentials and a typed secret redacted', async () => {
    // A tabward of its own: a typed secret taints its browser for good, and the next tests start untainted.
    const own = await startInProcess({
      rules: ['*://vault.test/*'],
      secrets: `SHOP_NOTE@${new URL(shop('/')).origin}=${typedSecret}\n`,
      tools: ['core', 'devtools'],
    });
    const mcp = await own.connect();
    try {
      await succeeds(mcp.call('new_page', { url: shop('/app') }));
      await idOf(mcp, 'list_console_messages', /order sent/);
      const list = await succeeds(mcp.call('list_network_requests'));
      assert.match(list, /reqid=\d+ GET http:\/\/shop\.test:\d+\/app \[200\] document/);
      assert.match(list, /POST \S+\/api\/order\?access_token=«redacted»&page=2 \[200\] fetch/);
      const orderId = await idOf(mcp, 'list_network_requests', /\/api\/order/);
      const order = await succeeds(mcp.call('get_network_request', { reqid: orderId }));
      assert.match(order, /<untrusted>/);
      assert.match(order, /authorization: «redacted»/);
      assert.match(order, /cookie: «redacted»/, 'the cookie the page was given goes back, redacted');
      assert.match(order, /content-type: application\/json/);
      assert.match(order, /"item":"book"/);
      assert.match(order, /"password":"«redacted»"/);
      assert.match(order, /set-cookie: «redacted»/);
      assert.match(order, /"ok":true/);
      assert.match(order, /"token":"«redacted»"/);
      for (const value of leaked) {
        assert.ok(!order.includes(value), `${value} is not shown by get_network_request`);
        assert.ok(!list.includes(value), `${value} is not shown by list_network_requests`);
      }

      const snapshot = await succeeds(mcp.call('take_snapshot'));
      await succeeds(mcp.call('fill', { ref: refOf(snapshot, 'Note'), secret: 'SHOP_NOTE' }));
      const noteId = await idOf(mcp, 'list_network_requests', /POST \S+\/api\/note/);
      const note = await succeeds(mcp.call('get_network_request', { reqid: noteId }));
      assert.match(note, /Request body \(\d+ bytes\):\nnote=«redacted»/);
      assert.ok(!note.includes(typedSecret), note);
    } finally {
      await mcp.close();
      await own.close();
    }
  });

  test('reading a request body of a sensitive page taints: a data-carrying action elsewhere then asks', async () => {
    const first = await tw.connect();
    let vaultRequest = 0;
    try {
      first.human.will({ decision: 'approve' });
      await succeeds(first.call('new_page', { url: site.url('vault.test', '/vault') }));
      // Settled (the backstop stops this POST: no action sent it) before this call path ends: a sensitive page's
      // request settling during the next call path's first action would count there too (the backstop fails
      // closed), and that call path must start untainted.
      vaultRequest = await idOf(first, 'list_network_requests', /POST \S+\/vault\/api \[(?!pending)/);
    } finally {
      await first.close();
    }
    // A fresh call path: nothing read yet.
    const mcp = await tw.connect();
    try {
      await succeeds(mcp.call('new_page', { url: shop('/other?before=1') }));
      assert.match((await mcp.call('browser_status')).text, /tainted by reading: nothing sensitive/);
      const read = await succeeds(mcp.call('get_network_request', { reqid: vaultRequest }));
      assert.match(read, /vault-balance-31337/, 'the body itself is no credential: shown');
      assert.match((await mcp.call('browser_status')).text, /tainted by reading: http:\/\/vault\.test:\d+/);
      mcp.human.will({ decision: 'reject', reason: 'not with my balance' });
      const carried = await mcp.call('navigate_page', { url: shop('/other?after=1') });
      assert.ok(carried.isError && /^rejected: .*not with my balance/.test(carried.text), carried.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /vault\.test/);
      assert.equal(mcp.human.questions.length, 1);
    } finally {
      await mcp.close();
    }
  });

  test('emulate in the agent tab of the isolated browser: applied unasked, and undone', async () => {
    const mcp = await tw.connect();
    try {
      await succeeds(mcp.call('new_page', { url: shop('/other') }));
      const done = await succeeds(
        mcp.call('emulate', {
          viewport: { width: 400, height: 700, hasTouch: true },
          userAgent: 'TabwardPhone/1.0',
          colorScheme: 'dark',
          networkConditions: 'Slow 4G',
          cpuThrottlingRate: 2,
        }),
      );
      assert.match(done, /viewport "400x700", touch "on", user agent "TabwardPhone\/1.0", network "Slow 4G"/);
      const probe =
        "() => [innerWidth, navigator.userAgent, navigator.maxTouchPoints, matchMedia('(prefers-color-scheme: dark)').matches]";
      assert.match(
        await succeeds(mcp.call('evaluate_script', { function: probe })),
        /400,\s*"TabwardPhone\/1.0",\s*5,\s*true/,
      );
      const undone = await succeeds(
        mcp.call('emulate', {
          userAgent: '',
          networkConditions: 'No emulation',
          cpuThrottlingRate: 1,
          colorScheme: 'auto',
        }),
      );
      assert.doesNotMatch(undone, /TabwardPhone|Slow 4G|dark/);
      assert.doesNotMatch(await succeeds(mcp.call('evaluate_script', { function: probe })), /TabwardPhone/);
      const wrong = await mcp.call('emulate', {
        viewport: { width: 400, height: 700, deviceScaleFactor: 2 },
      });
      assert.ok(wrong.isError && /deviceScaleFactor/.test(wrong.text), wrong.text);
      assert.equal(mcp.human.questions.length, 0, 'an isolated browser has no account to harm');
    } finally {
      await mcp.close();
    }
  });
});

// "Your Chrome": a second Chromium with a tab of its own that logs on a timer, reached over CDP.
describe("devtools tools in the user's Chrome", { timeout: 180_000 }, () => {
  let chrome: UserChrome;
  let yours: InProcessBrowser;
  before(async () => {
    chrome = await startUserChrome({ chromeArgs: testChromeArgs, openTab: shop('/tick') });
    yours = await startInProcess({
      mode: 'shared',
      wsEndpoint: chrome.wsEndpoint,
      tools: ['core', 'devtools'],
    });
  });
  after(async () => {
    await yours?.close();
    await chrome?.close();
  });

  test("the user's tab is recorded once attached; emulating it asks", async () => {
    const mcp = await yours.connect();
    try {
      const tabs = await succeeds(mcp.call('list_pages'));
      const userTab = /(p\d+) \[user\] \S+\/tick/.exec(tabs)?.[1];
      assert.ok(userTab, tabs);
      await idOf(mcp, 'list_console_messages', /\[log\] tick \d+/, { pageId: userTab });
      mcp.human.will({ decision: 'reject', reason: 'my tab' });
      const emulated = await mcp.call('emulate', { pageId: userTab, viewport: { width: 400, height: 700 } });
      assert.ok(emulated.isError && /^rejected: .*my tab/.test(emulated.text), emulated.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /user's own tab/);
    } finally {
      await mcp.close();
    }
  });
});

describe('the --tools flag of a real tabward mcp', { timeout: 120_000 }, () => {
  test('core,devtools lists the devtools tools; an unknown category is one line and exit code 2', async () => {
    const mcp = await startMcp({ args: ['--tools', 'core,devtools'] });
    try {
      const names = (await mcp.client.listTools()).tools.map((tool) => tool.name);
      for (const name of devtoolsNames) assert.ok(names.includes(name), `${name} listed`);
    } finally {
      await mcp.close();
    }
    const refused = await runCli(['mcp', '--tools', 'core,gadgets'], {});
    assert.equal(refused.code, 2, refused.stderr);
    const [first] = refused.stderr.trim().split('\n');
    assert.match(first ?? '', /--tools takes a comma list of core, devtools; unknown: gadgets\./);
    assert.ok(!/\n\s+at /.test(refused.stderr), refused.stderr);
  });
});
