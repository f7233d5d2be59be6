// Approve-all on the call path in-process (test/helpers/inProcessMcp.ts), one real Chromium for the file: a grant
// for one tool or the whole server, never on a sensitive page, expiring, and cleared by the switch to the user's
// Chrome, where closing the user's tab is blocked before anyone is asked. Split from callPath.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { type CallOutcome, refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const accountPage = `<title>Account</title><h1>Account</h1>
<form method="post" action="/account/close"><button>Close account</button></form>
<label>Memo <input name="memo"></label>`;
const notesPage = `<title>Notes</title><form method="post" action="/save"><label>Note <input name="note"></label>
<button>Save</button></form>`;
const bankRule = '*://ledger.test/*';

let site: Fixture;
let tw: InProcessBrowser;
const bank = (path: string) => site.url('ledger.test', path);
const notes = (path: string) => site.url('notes.test', path);
/** Fails with the call's own words when it did not succeed. */
async function succeeds(call: Promise<CallOutcome>): Promise<CallOutcome> {
  const outcome = await call;
  assert.ok(!outcome.isError, outcome.text);
  return outcome;
}
/** tool → decision of each completed call, in order; the choke point's own events are not calls. */
const decisions = (mcp: InProcessMcp) =>
  mcp
    .audit()
    .filter((record) => record.outcome !== 'started' && record.tool !== '(egress)')
    .map((record) => `${record.tool}:${'decision' in record ? record.decision : '?'}`);

before(async () => {
  site = await startFixture({
    'GET /account': (_req, _body, res) => html(res, accountPage),
    'GET /form': (_req, _body, res) => html(res, notesPage),
    'POST /save': (_req, _body, res) => html(res, '<title>Saved</title>Saved'),
  });
  tw = await startInProcess({ rules: [bankRule] });
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

describe('approve-all', { timeout: 120_000 }, () => {
  test('granted for one tool, it covers that tool only; never on a sensitive page', async () => {
    const mcp = await tw.connect({ policy: 'strict' });
    try {
      await mcp.call('new_page', { url: notes('/form') });
      const form = await mcp.call('take_snapshot');
      const note = refOf(form.text, 'Note');
      mcp.human.will({ decision: 'approve-all' });
      await succeeds(mcp.call('fill', { ref: note, value: 'a' }));
      const asked = mcp.human.questions.length;
      await succeeds(mcp.call('fill', { ref: note, value: 'b' }));
      assert.equal(mcp.human.questions.length, asked, 'the grant covered the second fill');
      assert.match((await mcp.call('browser_status')).text, /approve-all grants: tool:fill/);
      const hover = await mcp.call('hover', { ref: note });
      assert.ok(hover.isError, 'another tool still asks (declined)');
      assert.equal(mcp.human.questions.length, asked + 1);

      // A sensitive page asks whatever is granted, and offers no approve-all.
      const account = await onAccount(mcp);
      mcp.human.will({ decision: 'approve' });
      await succeeds(mcp.call('fill', { ref: refOf(account, 'Memo'), value: 'one' }));
      assert.equal(mcp.human.questions.length, asked + 3, 'asked on the sensitive page');
      assert.deepEqual(mcp.human.offered.at(-1), ['approve', 'reject', 'skip', 'modify']);
      assert.match((await mcp.call('browser_status')).text, /approve-all grants: tool:fill\n/);
    } finally {
      await mcp.close();
    }
  });

  // The elicitation form's enum lacked approve-all-server (it was only in the description), so the SDK client
  // refused the answer: the server scope could not be granted through elicitation.
  test('granted for the whole server, it covers every tool', async () => {
    const mcp = await tw.connect({ policy: 'strict' });
    try {
      await mcp.call('new_page', { url: notes('/form') });
      const form = await mcp.call('take_snapshot');
      mcp.human.will({ decision: 'approve-all-server' });
      await succeeds(mcp.call('hover', { ref: refOf(form.text, 'Note') }));
      await succeeds(mcp.call('click', { ref: refOf(form.text, 'Save') }));
      assert.equal(mcp.human.questions.length, 1, 'the server grant covered the click');
      assert.match((await mcp.call('browser_status')).text, /approve-all grants: server/);
    } finally {
      await mcp.close();
    }
  });

  test('a grant expires (its lifetime shortened here): the next write asks again', async () => {
    const mcp = await tw.connect({ policy: 'strict', approveAllTtlMs: 300 });
    try {
      await mcp.call('new_page', { url: notes('/form') });
      const note = refOf((await mcp.call('take_snapshot')).text, 'Note');
      mcp.human.will({ decision: 'approve-all' });
      await succeeds(mcp.call('fill', { ref: note, value: 'a' }));
      await waitFor('the grant to expire', () => mcp.runner.state.approveAllGrants().length === 0, {
        timeoutMs: 10_000,
      });
      const asked = mcp.human.questions.length;
      assert.ok((await mcp.call('fill', { ref: note, value: 'b' })).isError, 'declined');
      assert.equal(mcp.human.questions.length, asked + 1);
    } finally {
      await mcp.close();
    }
  });
});

// "Your Chrome" here is a second Chromium with a tab of its own, reached over CDP by a second in-process tabward
// (the isolated browser is driven over a pipe and has no port to share).
describe("in the user's Chrome", { timeout: 180_000 }, () => {
  let yours: InProcessBrowser;
  let chrome: UserChrome;
  let userTab = '';
  before(async () => {
    // A URL only this tab has: the remote agent below opens /form too, in a context of its own.
    chrome = await startUserChrome({ chromeArgs: testChromeArgs, openTab: notes('/form?tab=user') });
    yours = await startInProcess({ mode: 'remote', wsEndpoint: chrome.wsEndpoint, rules: [bankRule] });
  });
  after(async () => {
    await yours?.close();
    await chrome?.close();
  });

  test('approve-all in a remote browser is cleared by the switch to your Chrome', async () => {
    const mcp = await yours.connect();
    try {
      await mcp.call('new_page', { url: notes('/form') });
      const note = refOf((await mcp.call('take_snapshot')).text, 'Note');
      mcp.human.will({ decision: 'approve-all' });
      await succeeds(mcp.call('fill', { ref: note, value: 'a' }));
      assert.match((await mcp.call('browser_status')).text, /approve-all grants: tool:fill/);
      mcp.human.will({ decision: 'approve' });
      const connected = await mcp.call('browser_connect');
      assert.ok(!connected.isError, connected.text);
      const status = (await mcp.call('browser_status')).text;
      assert.match(status, /mode: shared/);
      assert.match(status, /approve-all grants: none/);
      userTab = /(p\d+) \[user\] \S+\/form\?tab=user/.exec(status)?.[1] ?? '';
      assert.ok(userTab, status);
    } finally {
      await mcp.close();
    }
  });

  test("closing the user's tab is blocked before anyone is asked; writing in it asks", async () => {
    const mcp = await yours.connect();
    try {
      assert.ok(userTab, 'the switch above found a tab of the user');
      mcp.human.policy = () => ({ decision: 'approve' });
      const close = await mcp.call('close_page', { pageId: userTab });
      assert.ok(close.isError && close.text.startsWith('blocked:'), close.text);
      assert.equal(mcp.human.questions.length, 0, 'no approval can override it: nobody was asked');
      mcp.human.policy = undefined;
      const form = await mcp.call('take_snapshot', { pageId: userTab });
      if (form.isError) assert.fail(`${form.text}\n${(await mcp.call('browser_status')).text}`);
      const fill = await mcp.call('fill', { pageId: userTab, ref: refOf(form.text, 'Note'), value: 'x' });
      assert.ok(fill.isError && fill.text.startsWith('rejected:'), fill.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /user's own tab/);
      assert.deepEqual(decisions(mcp), ['close_page:block', 'take_snapshot:allow', 'fill:ask']);
    } finally {
      await mcp.close();
    }
  });
});
