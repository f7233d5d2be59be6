// The call path in-process (test/helpers/inProcessMcp.ts): the real MCP server and ToolRunner over the SDK's
// in-memory transport, one real Chromium for the file. Guard verdicts per kind, what one approval is bound to,
// the re-check after a human answered, skip and modify (approve-all and the user's Chrome: approveAllGrants.test.ts).
// The same story through a real `tabward mcp` process is told in sensitive.test.ts and shared.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { writeTargetOf } from '../../src/core/actionPasses.ts';
import { type Fixture, html, redirect, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { type CallOutcome, refOf } from '../helpers/mcpClient.ts';

const accountPage = `<title>Account</title><h1>Account</h1>
<form method="post" action="/account/close"><button>Close account</button></form>
<label>Memo <input name="memo"></label>`;
const notesPage = `<title>Notes</title><form method="post" action="/save"><label>Note <input name="note"></label>
<button>Save</button></form>`;
const bankRule = '*://ledger.test/*';
// A path rule: the rest of notes.test is ordinary.
const privateRule = '*://notes.test/private/*';

let site: Fixture;
let tw: InProcessBrowser;
const bank = (path: string) => site.url('ledger.test', path);
const notes = (path: string) => site.url('notes.test', path);
const posts = (path: string) => site.writes().filter((seen) => seen.path === path).length;
/** Fails with the call's own words when it did not succeed. */
async function succeeds(call: Promise<CallOutcome>): Promise<CallOutcome> {
  const outcome = await call;
  assert.ok(!outcome.isError, outcome.text);
  return outcome;
}
/**
 * tool → decision of each completed call, in order. The choke point's own events (the browser's sign-in ping to
 * accounts.google.com, stopped there at every start) are not calls.
 */
const decisions = (mcp: InProcessMcp) =>
  mcp
    .audit()
    .filter((record) => record.outcome !== 'started' && record.tool !== '(egress)')
    .map((record) => `${record.tool}:${'decision' in record ? record.decision : '?'}`);

before(async () => {
  site = await startFixture({
    'GET /account': (_req, _body, res) => html(res, accountPage),
    'GET /statements': (_req, _body, res) =>
      html(res, accountPage.replace('Account</h1>', 'Statements</h1>')),
    'POST /account/close': (_req, _body, res) => html(res, '<title>Closed</title>Closed'),
    'GET /form': (_req, _body, res) => html(res, notesPage),
    'POST /save': (_req, _body, res) => html(res, '<title>Saved</title>Saved'),
    '/private/a': (_req, _body, res) => html(res, '<title>Private A</title>A'),
    '/private/b': (_req, _body, res) => html(res, '<title>Private B</title>B'),
    '/hop': (_req, _body, res) => redirect(res, '/private/b'),
  });
  tw = await startInProcess({ rules: [bankRule, privateRule] });
});
after(async () => {
  await tw?.close();
  await site?.close();
});

/** A fresh client whose human approves the navigation to the bank's page, and its snapshot there. */
async function onAccount(mcp: InProcessMcp, path = '/account'): Promise<string> {
  mcp.human.will({ decision: 'approve' });
  const opened = await mcp.call('new_page', { url: bank(path) });
  assert.ok(!opened.isError, opened.text);
  return (await mcp.call('take_snapshot')).text;
}

describe('guard verdicts through the call path', { timeout: 120_000 }, () => {
  test('reads and ordinary writes run unasked; sensitive navigations, sensitive writes and a mode change ask', async () => {
    const mcp = await tw.connect();
    try {
      await succeeds(mcp.call('new_page', { url: notes('/form') }));
      const form = await mcp.call('take_snapshot');
      const filled = await mcp.call('fill', { ref: refOf(form.text, 'Note'), value: 'hello' });
      assert.ok(!filled.isError, filled.text);
      assert.equal(mcp.human.questions.length, 0, 'isolated browser, ordinary page: nobody asked');

      mcp.human.will({ decision: 'reject', reason: 'not the bank' });
      const refused = await mcp.call('navigate_page', { url: bank('/account') });
      assert.ok(refused.isError && /^rejected: .*not the bank/.test(refused.text), refused.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /navigate_page[\s\S]*rule \*:\/\/ledger\.test\/\*/);
      assert.equal(site.seen.filter((seen) => seen.path === '/account').length, 0, 'never requested');

      const account = await onAccount(mcp);
      assert.match(account, /Close account/);
      assert.equal(mcp.human.questions.length, 2, 'the read on the sensitive page asked nobody');
      const click = await mcp.call('click', { ref: refOf(account, 'Close account') });
      assert.ok(click.isError && click.text.startsWith('rejected:'), 'no answer scripted: declined');
      assert.match(mcp.human.questions.at(-1) ?? '', /click on button "Close account" — SENSITIVE PAGE/);
      assert.deepEqual(mcp.human.offered.at(-1), ['approve', 'reject', 'skip', 'modify']);
      assert.equal(posts('/account/close'), 0);

      // A Chrome that cannot be reached is an error before anyone is asked; one given by its endpoint is asked
      // about (the human says no, so it is never dialled).
      const unreachable = await mcp.call('browser_connect');
      assert.ok(unreachable.isError && unreachable.text.startsWith('attach_failed:'), unreachable.text);
      mcp.human.will({ decision: 'reject' });
      const connect = await mcp.call('browser_connect', {
        wsEndpoint: 'ws://127.0.0.1:9/devtools/browser/x',
      });
      assert.ok(connect.isError && connect.text.startsWith('rejected:'), connect.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /browser_connect/);
      assert.match((await mcp.call('browser_status')).text, /mode: isolated/);
      assert.deepEqual(decisions(mcp), [
        'new_page:allow',
        'take_snapshot:allow',
        'fill:allow',
        'navigate_page:ask',
        'new_page:ask',
        'take_snapshot:allow',
        'click:ask',
        'browser_connect:allow',
        'browser_connect:ask',
        'browser_status:allow',
      ]);
    } finally {
      await mcp.close();
    }
  });

  test('policy strict asks for an ordinary write too, and offers approve-all there', async () => {
    const mcp = await tw.connect({ policy: 'strict' });
    try {
      await mcp.call('new_page', { url: notes('/form') });
      const form = await mcp.call('take_snapshot');
      const fill = await mcp.call('fill', { ref: refOf(form.text, 'Note'), value: 'x' });
      assert.ok(fill.isError && fill.text.startsWith('rejected:'), fill.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /policy strict: every write asks/);
      assert.deepEqual(mcp.human.offered.at(-1), [
        'approve',
        'approve-all',
        'approve-all-server',
        'site-15m',
        'site-1h',
        'reject',
        'skip',
        'modify',
      ]);
    } finally {
      await mcp.close();
    }
  });
});

describe('one approval, one action as the human saw it', { timeout: 120_000 }, () => {
  test('approved, the write runs once; the same write again asks again', async () => {
    const mcp = await tw.connect();
    try {
      const account = await onAccount(mcp);
      const before = posts('/account/close');
      mcp.human.will({ decision: 'approve' });
      const done = await mcp.call('click', { ref: refOf(account, 'Close account') });
      assert.ok(!done.isError, done.text);
      assert.equal(posts('/account/close'), before + 1);
      const again = await onAccount(mcp);
      const asked = mcp.human.questions.length;
      const second = await mcp.call('click', { ref: refOf(again, 'Close account') });
      assert.ok(second.isError, 'declined: the first approval was spent');
      assert.equal(mcp.human.questions.length, asked + 1);
      assert.equal(posts('/account/close'), before + 1);
    } finally {
      await mcp.close();
    }
  });

  test('the button renamed while the human decided: asked again, showing the new name', async () => {
    const mcp = await tw.connect();
    try {
      const account = await onAccount(mcp);
      const tab = tw.browser.session.pages.selected;
      assert.ok(tab);
      const rename = async () => {
        await tab.page.evaluate("document.querySelector('button').textContent = 'Delete everything'");
      };
      const before = posts('/account/close');
      mcp.human.will({ decision: 'approve', meanwhile: rename }, { decision: 'reject', reason: 'not that' });
      const click = await mcp.call('click', { ref: refOf(account, 'Close account') });
      assert.ok(click.isError && click.text.includes('not that'), click.text);
      const [first, second] = mcp.human.questions.slice(-2);
      assert.match(first ?? '', /"Close account"/);
      assert.match(second ?? '', /"Delete everything"/);
      assert.equal(posts('/account/close'), before, 'the approval given for "Close account" did not run');
    } finally {
      await mcp.close();
    }
  });

  test('the page reloaded while the human decided: the approval for the old document does not run', async () => {
    const mcp = await tw.connect();
    try {
      const account = await onAccount(mcp);
      const tab = tw.browser.session.pages.selected;
      assert.ok(tab);
      const before = posts('/account/close');
      // The page reloads itself while the human decides. With no agent action running, the backstop would stop a
      // sensitive page's own reload: a pass lets this one through, as the page's doing.
      const reload = async () => {
        const origin = new URL(tab.page.url()).origin;
        const pass = tw.browser.network.open(
          {
            writeTargets: [],
            navigationTargets: [writeTargetOf(tab.page.url()) ?? ''],
            navigationOrigins: [origin],
            scope: tab.id,
          },
          5_000,
        );
        await tab.page.reload();
        pass.end(0);
      };
      mcp.human.will({ decision: 'approve', meanwhile: reload });
      const click = await mcp.call('click', { ref: refOf(account, 'Close account') });
      assert.ok(click.isError && click.text.startsWith('stale_ref:'), click.text);
      assert.equal(posts('/account/close'), before);
    } finally {
      await mcp.close();
    }
  });

  test('another tab selected while the human decided: the key goes nowhere until that tab is approved', async () => {
    const mcp = await tw.connect();
    try {
      await onAccount(mcp, '/statements');
      const statements = tw.browser.session.pages.selected;
      await onAccount(mcp);
      const { pages } = tw.browser.session;
      const select = async () => {
        pages.selected = statements;
      };
      mcp.human.will({ decision: 'approve', meanwhile: select }, { decision: 'reject' });
      const pressed = await mcp.call('press_key', { key: 'Enter' });
      assert.ok(pressed.isError && pressed.text.startsWith('rejected:'), pressed.text);
      const [first, second] = mcp.human.questions.slice(-2);
      assert.match(first ?? '', /Page: \S+\/account/);
      assert.match(second ?? '', /Page: \S+\/statements/, 'asked again, for the tab it would now go to');
    } finally {
      await mcp.close();
    }
  });
});

describe('network passes', { timeout: 120_000 }, () => {
  // Found while sharing one tabward across sensitive.test.ts: the pass an approved navigation opened stayed open
  // for its 2 s grace to any tab, so the next action's redirect into the same sensitive origin was not asked
  // about. A pass with no tab (new_page's) now ends with its action.
  test('an approved sensitive navigation lets no other action into the sensitive page, even right after it', async () => {
    const mcp = await tw.connect();
    try {
      mcp.human.will({ decision: 'approve' });
      assert.ok(!(await mcp.call('new_page', { url: notes('/private/a') })).isError);
      const reached = () => site.seen.filter((seen) => seen.path === '/private/b').length;
      const before = reached();
      // Same origin as the page read: taint does not ask here, only the pass decides.
      const hop = await mcp.call('new_page', { url: notes('/hop') });
      assert.ok(hop.isError, `stopped or asked (declined): ${hop.text}`);
      assert.equal(reached(), before, 'the sensitive page was not requested');
    } finally {
      await mcp.close();
    }
  });
});

describe('skip and modify', { timeout: 120_000 }, () => {
  test('skip does nothing and says so; modify runs the human arguments, not the agent ones', async () => {
    const mcp = await tw.connect();
    try {
      const account = await onAccount(mcp);
      const memo = refOf(account, 'Memo');
      mcp.human.will({ decision: 'skip' });
      const skipped = await mcp.call('fill', { ref: memo, value: 'from the agent' });
      assert.ok(!skipped.isError && /skipped fill; nothing was done/.test(skipped.text), skipped.text);
      assert.doesNotMatch((await mcp.call('take_snapshot')).text, /from the agent/);

      mcp.human.will({ decision: 'modify', args: JSON.stringify({ ref: memo, value: 'from the human' }) });
      const modified = await mcp.call('fill', { ref: memo, value: 'from the agent' });
      assert.ok(!modified.isError, modified.text);
      const shown = (await mcp.call('take_snapshot')).text;
      assert.match(shown, /textbox Memo ="from the human"/);
      assert.doesNotMatch(shown, /from the agent/);

      mcp.human.will({ decision: 'modify', args: 'not json' });
      const unusable = await mcp.call('fill', { ref: memo, value: 'again' });
      assert.ok(unusable.isError && /not a JSON object/.test(unusable.text), unusable.text);

      const fills = mcp.audit().filter((record) => record.tool === 'fill' && record.outcome !== 'started');
      assert.deepEqual(
        fills.map((record) => [
          'choice' in record ? record.choice : '',
          record.outcome,
          'args' in record ? record.args.value : '',
        ]),
        [
          ['skip', 'skipped', 'from the agent'],
          ['modify', 'ok', 'from the human'],
          ['reject', 'rejected', 'again'],
        ],
      );
    } finally {
      await mcp.close();
    }
  });
});
