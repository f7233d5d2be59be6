// Site grants are no wider than the click they were given for, secrets are redacted in every spelling and place,
// and a saved recipe marks its writes. Attacks on the features of issue 15 (site grants, devtools reads, browsing
// saved as a recipe), through the real MCP SDK client in process, one Chromium for the file. Each test is a bypass
// that was found and fixed:
// - a site grant for an ordinary click must not cover a click that reads as destructive on the same origin (and a
//   covered click whose script posts to a sensitive path of that origin is still held by the network backstop);
// - a secret the browser itself form-encodes (`!` → %21) must be redacted in results, devtools reads and the log;
// - URLs inside headers (Referer, Location) keep their credential parameters redacted like request URLs;
// - console messages of a sensitive frame taint, and credential pairs in them (document.cookie) are redacted;
// - a saved recipe marks `write` on a click or key press that made the page post, even in the isolated browser.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { recipeFromAudit } from '../../src/recipes/recipeFromAudit.ts';
import { type Fixture, html, redirect, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { type CallOutcome, refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const cartPage = `<title>Cart</title>
<button onclick="fetch('/cart/add', {method: 'POST'})">Add to cart</button>
<button onclick="fetch('/account-close', {method: 'POST'})">Delete my account</button>
<form method="post" action="/cart/remove-all"><button>Tidy up</button></form>
<button onclick="fetch('/account/email', {method: 'POST', body: 'to=evil'})">Refresh totals</button>`;
/** A secret whose form encoding differs from encodeURIComponent's. */
const formSecret = 'Pa55!word(9)';
const formEncoded = 'Pa55%21word%289%29';
const searchPage = `<title>Search</title>
<form action="/search"><label>Query <input name="q"></label><button>Go</button></form>
<form method="post" action="/lookup"><label>Code <input name="code"></label><button>Look up</button></form>`;
const cookieSecret = 'COOKIE-SEKRIT-9';
/** Inserts a frame of the sensitive bank.test a while after load, which logs and is removed again. */
const embedPage = `<title>Embed</title><h1>Embed</h1><script>
addEventListener('message', () => document.querySelector('iframe')?.remove());
setTimeout(() => { const f = document.createElement('iframe'); f.src = BANK + '/statement'; document.body.append(f); }, 700);
console.log('cookies: ' + document.cookie);
</script>`;
const commentPage = `<title>Comments</title>
<form method="post" action="/comment"><label>Comment <input name="text"></label><button>Post comment</button></form>`;

let site: Fixture;
let tw: InProcessBrowser;
const shop = (path: string) => site.url('shop.test', path);
const bank = (path: string) => site.url('bank.test', path);

before(async () => {
  site = await startFixture({
    'GET /cart': (_req, _body, res) => html(res, cartPage),
    'POST /cart/add': (_req, _body, res) => void res.writeHead(204).end(),
    'POST /account-close': (_req, _body, res) => void res.writeHead(204).end(),
    'POST /account/email': (_req, _body, res) => void res.writeHead(204).end(),
    'POST /cart/remove-all': (_req, _body, res) => html(res, '<title>Emptied</title>'),
    'GET /search-form': (_req, _body, res) => html(res, searchPage),
    'GET /search': (_req, _body, res) => html(res, '<title>Results</title>'),
    'POST /lookup': (_req, _body, res) => html(res, '<title>Looked up</title>'),
    'GET /login-done': (_req, _body, res) => redirect(res, '/cb?access_token=SEKRIT-LOC-1&state=ok'),
    'GET /cb': (_req, _body, res) => html(res, '<title>Back</title><img src="/pixel.gif">'),
    'GET /pixel.gif': (_req, _body, res) => void res.writeHead(204).end(),
    'GET /embed': (_req, _body, res) =>
      html(res, embedPage.replace('BANK', JSON.stringify(bank(''))), 200, {
        'set-cookie': `session_id=${cookieSecret}; Path=/`,
      }),
    'GET /statement': (_req, _body, res) =>
      // Inline: after the statement is read, a script of another host (a CDN) would be held like any request there.
      html(
        res,
        "<title>Statement</title><script>console.log('balance 4242'); parent.postMessage('done', '*');</script>",
      ),
    'GET /comments': (_req, _body, res) => html(res, commentPage),
    'POST /comment': (_req, _body, res) => html(res, '<title>Posted</title>'),
  });
  tw = await startInProcess({
    rules: ['*://bank.test/*', '*://shop.test/account/*'],
    secrets: `FORM_CODE@${new URL(shop('/')).origin}=${formSecret}\n`,
    tools: ['core', 'devtools'],
  });
});
after(async () => {
  await tw?.close();
  await site?.close();
});

async function succeeds(call: Promise<CallOutcome>): Promise<string> {
  const outcome = await call;
  assert.ok(!outcome.isError, outcome.text);
  return outcome.text;
}

async function snapshotOf(mcp: InProcessMcp, url: string): Promise<string> {
  await succeeds(mcp.call('new_page', { url }));
  return succeeds(mcp.call('take_snapshot'));
}

/** The id a list line gives the first entry matching `pattern`, once the tab has it. */
async function idOf(mcp: InProcessMcp, tool: string, pattern: RegExp): Promise<number> {
  return waitFor(`${pattern} in ${tool}`, async () => {
    const line = (await mcp.call(tool)).text.split('\n').find((candidate) => pattern.test(candidate));
    const id = line ? /^(?:msgid|reqid)=(\d+)/.exec(line)?.[1] : undefined;
    return id === undefined ? undefined : Number(id);
  });
}

describe('attacks on site grants, devtools reads and saved recipes', { timeout: 180_000 }, () => {
  test('a click grant given for "Add to cart" does not cover a destructive-looking click there', async () => {
    const mcp = await tw.connect({ policy: 'strict' });
    try {
      const cart = await snapshotOf(mcp, shop('/cart'));
      mcp.human.will({ decision: 'site-15m' });
      await succeeds(mcp.call('click', { ref: refOf(cart, 'Add to cart') }));
      assert.ok(mcp.human.offered.at(-1)?.includes('site-15m'), 'an ordinary click may be granted');
      const asked = mcp.human.questions.length;
      await succeeds(mcp.call('click', { ref: refOf(cart, 'Add to cart') }));
      assert.equal(mcp.human.questions.length, asked, 'the grant covers the same kind of click');

      // By its label, and by where its form sends: asked (and declined), not run under the grant.
      const closed = await mcp.call('click', { ref: refOf(cart, 'Delete my account') });
      assert.ok(closed.isError, closed.text);
      assert.equal(mcp.human.questions.length, asked + 1, 'a destructive-looking click asks');
      assert.ok(!mcp.human.offered.at(-1)?.includes('site-15m'), 'and is never offered a grant');
      const tidy = await mcp.call('click', { ref: refOf(cart, 'Tidy up') });
      assert.ok(tidy.isError, tidy.text);
      assert.equal(mcp.human.questions.length, asked + 2);
      assert.match(mcp.human.questions.at(-1) ?? '', /remove-all/);
      // Covered by the grant (an ordinary label, same origin), but its script posts to a sensitive path: held for
      // the human at the network (declined here), never sent.
      const asked2 = mcp.human.questions.length;
      await mcp.call('click', { ref: refOf(cart, 'Refresh totals') });
      assert.equal(mcp.human.questions.length, asked2 + 1, 'the held request was asked about');
      assert.match(mcp.human.questions.at(-1) ?? '', /account\/email/);
      const posted = site.writes().map((request) => request.path);
      for (const never of ['/account-close', '/cart/remove-all', '/account/email'])
        assert.ok(!posted.includes(never), posted.join());
    } finally {
      await mcp.close();
    }
  });

  test('a secret the browser form-encodes is redacted in results, devtools reads and the audit log', async () => {
    const mcp = await tw.connect();
    try {
      const form = await snapshotOf(mcp, shop('/search-form'));
      await succeeds(mcp.call('fill', { ref: refOf(form, 'Query'), secret: 'FORM_CODE' }));
      const went = await succeeds(mcp.call('click', { ref: refOf(form, 'Go') }));
      assert.ok(
        site.seen.some((request) => request.path.includes(formEncoded)),
        'sent form-encoded',
      );
      const again = await snapshotOf(mcp, shop('/search-form'));
      await succeeds(mcp.call('fill', { ref: refOf(again, 'Code'), secret: 'FORM_CODE' }));
      await succeeds(mcp.call('click', { ref: refOf(again, 'Look up') }));
      const lookup = await idOf(mcp, 'list_network_requests', /POST \S+\/lookup/);
      const body = await succeeds(mcp.call('get_network_request', { reqid: lookup }));
      assert.match(body, /Request body \(\d+ bytes\):\ncode=«redacted»/);
      await succeeds(mcp.call('navigate_page', { url: shop('/search-form?again=1') }));
      const listed = await succeeds(
        mcp.call('list_network_requests', { includePreserved: true, pageSize: 500 }),
      );
      const log = JSON.stringify(mcp.audit());
      for (const [where, shown] of Object.entries({ went, body, listed, log }))
        assert.ok(!shown.includes(formEncoded) && !shown.includes(formSecret), `${where}: ${shown}`);
    } finally {
      await mcp.close();
    }
  });

  test('URLs in headers (Location, Referer) have their credential parameters redacted', async () => {
    const mcp = await tw.connect();
    try {
      await succeeds(mcp.call('new_page', { url: shop('/login-done') }));
      const hop = await idOf(mcp, 'list_network_requests', /GET \S+\/login-done \[302\]/);
      const pixel = await idOf(mcp, 'list_network_requests', /GET \S+\/pixel\.gif/);
      const shown = [
        await succeeds(mcp.call('get_network_request', { reqid: hop })),
        await succeeds(mcp.call('get_network_request', { reqid: pixel })),
      ].join('\n');
      assert.match(shown, /location: \/cb\?access_token=«redacted»&state=ok/);
      assert.match(shown, /referer: \S+\/cb\?access_token=«redacted»&state=ok/);
      assert.ok(!shown.includes('SEKRIT-LOC-1'), shown);
    } finally {
      await mcp.close();
    }
  });

  test('a saved recipe marks write on a click or key press that made the page post', async () => {
    const mcp = await tw.connect();
    try {
      const page = await snapshotOf(mcp, shop('/comments'));
      await succeeds(mcp.call('fill', { ref: refOf(page, 'Comment'), value: 'first' }));
      await succeeds(mcp.call('click', { ref: refOf(page, 'Post comment') }));
      const again = await snapshotOf(mcp, shop('/comments'));
      await succeeds(mcp.call('fill', { ref: refOf(again, 'Comment'), value: 'second' }));
      await succeeds(mcp.call('press_key', { ref: refOf(again, 'Comment'), key: 'Enter' }));
      const third = await snapshotOf(mcp, shop('/comments'));
      await succeeds(mcp.call('click', { ref: refOf(third, 'Comment') }));
      await succeeds(mcp.call('press_key', { key: 'Enter' }));
      assert.equal(site.writes().filter((request) => request.path === '/comment').length, 3);
      const { recipe } = recipeFromAudit(mcp.audit() as never);
      const posting = recipe.steps.filter((step) => step.action === 'click' || step.action === 'press');
      assert.deepEqual(
        posting.map((step) => [step.action, 'write' in step && step.write === true]),
        [
          ['click', true],
          ['press', true],
          ['click', false],
          ['press', true],
        ],
        JSON.stringify(recipe.steps),
      );
    } finally {
      await mcp.close();
    }
  });

  test("a sensitive frame's console message taints; credential pairs in console text are redacted", async () => {
    const mcp = await tw.connect();
    try {
      await succeeds(mcp.call('new_page', { url: shop('/embed') }));
      const cookies = await idOf(mcp, 'list_console_messages', /cookies: /);
      const message = await succeeds(mcp.call('get_console_message', { msgid: cookies }));
      assert.match(message, /session_id=«redacted»/);
      assert.ok(!message.includes(cookieSecret), message);
      // The bank's frame came and went between calls: only its console message shows what it held.
      await waitFor('the bank frame loaded', () => site.seen.some((seen) => seen.path === '/statement'));
      await idOf(mcp, 'list_console_messages', /balance 4242/);
      assert.match((await mcp.call('browser_status')).text, /tainted by reading: http:\/\/bank\.test:\d+/);
    } finally {
      await mcp.close();
    }
  });
});
