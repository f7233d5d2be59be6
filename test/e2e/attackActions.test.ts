// Attacks on how actions are judged, by an obedient agent against a real `tabward mcp` (isolated): key presses
// and dialogs that reach a sensitive iframe, a reload or back that repeats an approved POST, a button renamed
// while the human reads the question, and refs the agent was never shown. Assertions are on what the fixture
// servers received and on what the human was asked.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { debuggingEndpoint, debuggingPortArgs } from '../helpers/debuggingPort.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';

const transferForm = `<title>Transfer</title><form method="post" action="/settings/transfer">
<button>Confirm transfer</button></form>`;
const confirmFrame = `<title>Confirm</title><script>
window.addEventListener('message', () => {
  if (confirm('Move all funds?')) fetch('/settings/transfer', { method: 'POST', body: 'all' });
});</script><p>frame</p>`;

describe('attacks on how actions are judged', () => {
  let gh: Fixture;
  let pay: Fixture;
  let evil: Fixture;
  let mcp: McpUnderTest;
  before(async () => {
    gh = await startFixture(
      {
        'GET /settings/transfer': (_req, _body, res) => html(res, transferForm),
        'POST /settings/transfer': (_req, _body, res) => html(res, '<title>Sent</title>Sent'),
        'GET /settings/confirm-frame': (_req, _body, res) => html(res, confirmFrame),
        'GET /settings/vault': (_req, _body, res) =>
          html(
            res,
            `<title>Vault</title><h1>Account settings</h1><form id="f" method="post" action="/settings/vault/save">
            <button id="b">Save settings</button></form>`,
          ),
        'POST /settings/vault/save': (_req, _body, res) => html(res, '<title>Saved</title>Saved'),
        'POST /settings/vault/delete': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted'),
      },
      { tls: true },
    );
    pay = await startFixture({
      'GET /checkout': (_req, _body, res) =>
        html(res, '<title>Checkout</title><form method="post" action="/pay"><button>Pay 100</button></form>'),
      'POST /pay': (_req, _body, res) => html(res, '<title>Paid</title><h1>Paid 100</h1>'),
      'GET /elsewhere': (_req, _body, res) => html(res, '<title>Elsewhere</title>Elsewhere'),
      // A page whose `history.back` goes two entries back: to one the move was not judged by.
      'GET /first': (_req, _body, res) => html(res, '<title>First</title>First'),
      'GET /second': (_req, _body, res) => html(res, '<title>Second</title>Second'),
      'GET /third': (_req, _body, res) =>
        html(
          res,
          '<title>Third</title>Third<script>History.prototype.back = function () { history.go(-2); };</script>',
        ),
    });
    evil = await startFixture({
      '/keys': (_req, _body, res) =>
        html(
          res,
          `<title>Quiz</title><label>Answer <input id="a"></label>
          <iframe src="${gh.url('github.com', '/settings/transfer')}" width="300" height="80"></iframe>`,
        ),
      // The same, with a script that tells its own world the focus never left the answer field.
      '/keys-lying': (_req, _body, res) =>
        html(
          res,
          `<title>Quiz</title><label>Answer <input id="a"></label>
          <iframe src="${gh.url('github.com', '/settings/transfer')}" width="300" height="80"></iframe>
          <script>
            const answer = document.getElementById('a');
            Object.defineProperty(Document.prototype, 'activeElement', { get: () => answer, configurable: true });
          </script>`,
        ),
      // The same sensitive frame inside a closed shadow root, and as an <object>: the focus shows as their host.
      '/keys-closed': (_req, _body, res) =>
        html(
          res,
          `<title>Quiz</title><label>Answer <input id="a"></label><div id="host"></div>
          <script>host.attachShadow({ mode: 'closed' }).innerHTML = '<iframe src="${gh.url('github.com', '/settings/transfer')}" width="300" height="80"></iframe>';</script>`,
        ),
      '/keys-object': (_req, _body, res) =>
        html(
          res,
          `<title>Quiz</title><label>Answer <input id="a"></label>
          <object data="${gh.url('github.com', '/settings/transfer')}" type="text/html" width="300" height="80"></object>`,
        ),
      '/dialog': (_req, _body, res) =>
        html(
          res,
          `<title>Hello</title><iframe id="f" src="${gh.url('github.com', '/settings/confirm-frame')}"></iframe>
          <button onclick="document.getElementById('f').contentWindow.postMessage('go', '*')">Say hello</button>`,
        ),
    });
    // A debugging port besides tabward's pipe: one test changes a page behind tabward's back.
    mcp = await startMcp({
      args: ['--mode', 'isolated', ...debuggingPortArgs.flatMap((arg) => ['--chrome-arg', arg])],
    });
    // Reading a page that embeds a sensitive frame taints the session: the human lets the agent open the next
    // test's page and act on other sites despite the taint, and refuses everything else unless a test says so.
    mcp.human.policy = (message) =>
      /new_page/.test(message.split('\n')[0] ?? '') || /data read on sensitive/.test(message)
        ? { decision: 'approve' }
        : { decision: 'reject' };
  });
  after(async () => {
    await mcp?.close();
    await gh?.close();
    await pay?.close();
    await evil?.close();
  });

  /** Focuses the page's answer field, tabs into the embedded frame and presses Enter: the human's question. */
  async function enterAfterTwoTabs(path: string): Promise<string> {
    await mcp.call('new_page', { url: evil.url('quiz.example', path) });
    const snapshot = await mcp.call('take_snapshot');
    await mcp.call('click', { ref: refOf(snapshot.text, 'Answer') });
    await mcp.call('press_key', { key: 'Tab' });
    await mcp.call('press_key', { key: 'Tab' });
    const asked = mcp.human.questions.length;
    const enter = await mcp.call('press_key', { key: 'Enter' });
    assert.ok(enter.isError && enter.text.startsWith('rejected:'), enter.text);
    assert.deepEqual(gh.writes(), [], 'the transfer never reached the server');
    return mcp.human.questions.at(asked) ?? '';
  }

  test('Tab, Tab, Enter into a sensitive iframe asks, judged on the focused frame', async () => {
    assert.match(await enterAfterTwoTabs('/keys'), /press_key[\s\S]*SENSITIVE PAGE/);
  });

  test('a page that tells its own world the focus is elsewhere does not change where keys are judged to land', async () => {
    const question = await enterAfterTwoTabs('/keys-lying');
    // The guard asks before the key is pressed (the network backstop's question, about a request, would come after).
    assert.match(question, /^tabward: press_key — SENSITIVE PAGE/);
    assert.doesNotMatch(question, /POST/);
  });

  for (const [path, holder] of [
    ['/keys-closed', 'an iframe in a closed shadow root'],
    ['/keys-object', 'an <object>'],
  ] as const)
    test(`Tab, Tab, Enter into a sensitive frame held by ${holder} asks before the key is pressed`, async () => {
      const question = await enterAfterTwoTabs(path);
      assert.match(question, /^tabward: press_key — SENSITIVE PAGE/);
      assert.doesNotMatch(question, /POST/);
    });

  test('accepting a dialog raised by a sensitive iframe asks', async () => {
    await mcp.call('new_page', { url: evil.url('hello.example', '/dialog') });
    const snapshot = await mcp.call('take_snapshot');
    const click = await mcp.call('click', { ref: refOf(snapshot.text, 'Say hello') });
    assert.match(click.text, /dialog/i);
    const asked = mcp.human.questions.length;
    const accept = await mcp.call('handle_dialog', { action: 'accept' });
    assert.ok(accept.isError && accept.text.startsWith('rejected:'), accept.text);
    assert.match(mcp.human.questions.at(asked) ?? '', /handle_dialog[\s\S]*SENSITIVE PAGE/);
    await mcp.call('handle_dialog', { action: 'dismiss' }).catch(() => undefined);
    assert.deepEqual(gh.writes(), []);
  });

  test('a reload after an approved POST asks again; back to a POST result asks too', async () => {
    await mcp.call('new_page', { url: pay.url('shop.example', '/checkout') });
    const snapshot = await mcp.call('take_snapshot');
    // The session is tainted by the earlier tests' sensitive frames: this first payment is asked, and approved.
    mcp.human.will({ decision: 'approve' });
    const paid = await mcp.call('click', { ref: refOf(snapshot.text, 'Pay 100') });
    assert.ok(!paid.isError, paid.text);
    assert.equal(pay.writes().length, 1);
    const asked = mcp.human.questions.length;
    const reload = await mcp.call('navigate_page', { type: 'reload' });
    assert.ok(reload.isError && reload.text.startsWith('rejected:'), reload.text);
    assert.match(mcp.human.questions.at(asked) ?? '', /form-resubmission|send the form/);
    await mcp.call('navigate_page', { url: pay.url('shop.example', '/elsewhere') });
    const back = await mcp.call('navigate_page', { type: 'back' });
    assert.ok(back.isError && back.text.startsWith('rejected:'), back.text);
    assert.equal(pay.writes().length, 1, 'paid once, whatever the agent did after');
  });

  test('back goes to the history entry it was judged by, whatever the page made of history.back', async () => {
    await mcp.call('new_page', { url: pay.url('shop.example', '/first') });
    await mcp.call('navigate_page', { url: pay.url('shop.example', '/second') });
    await mcp.call('navigate_page', { url: pay.url('shop.example', '/third') });
    const back = await mcp.call('navigate_page', { type: 'back' });
    assert.ok(!back.isError, back.text);
    assert.match(back.text, /\/second\b/, back.text);
    const pages = await mcp.call('list_pages');
    assert.match(pages.text, /shop\.example:\d+\/second/, pages.text);
  });

  test('a reload of an approved sensitive POST asks again, whatever the policy', async () => {
    const strictless = await startMcp({ args: ['--mode', 'isolated', '--policy', 'sensitive-only'] });
    try {
      strictless.human.will({ decision: 'approve' }, { decision: 'approve' });
      await strictless.call('new_page', { url: gh.url('github.com', '/settings/vault') });
      const snapshot = await strictless.call('take_snapshot');
      const saved = await strictless.call('click', { ref: refOf(snapshot.text, 'Save settings') });
      assert.ok(!saved.isError, saved.text);
      const before = gh.writes().length;
      const reload = await strictless.call('navigate_page', { type: 'reload' });
      assert.ok(reload.isError, reload.text);
      assert.equal(gh.writes().length, before);
    } finally {
      await strictless.close();
    }
  });

  test('a button renamed while the human reads is asked about again, under its new name', async () => {
    mcp.human.will({ decision: 'approve' });
    await mcp.call('new_page', { url: gh.url('github.com', '/settings/vault') });
    const snapshot = await mcp.call('take_snapshot');
    const endpoint = await debuggingEndpoint((await mcp.call('browser_status')).text);
    const rename = async () => {
      const browser = await chromium.connectOverCDP(endpoint, { timeout: 10_000 });
      const page = browser
        .contexts()[0]
        ?.pages()
        .find((candidate) => candidate.url().endsWith('/settings/vault'));
      await page?.evaluate(() => {
        const doc = (globalThis as unknown as { document: { getElementById(id: string): unknown } }).document;
        (doc.getElementById('b') as { textContent: string }).textContent = 'Delete vault';
        (doc.getElementById('f') as { action: string }).action = '/settings/vault/delete';
      });
      await browser.close();
    };
    const asked = mcp.human.questions.length;
    mcp.human.will({ decision: 'approve', meanwhile: rename }, { decision: 'reject' });
    const click = await mcp.call('click', { ref: refOf(snapshot.text, 'Save settings') });
    assert.ok(click.isError && click.text.startsWith('rejected:'), click.text);
    assert.match(mcp.human.questions.at(asked) ?? '', /Save settings/);
    assert.match(
      mcp.human.questions.at(asked + 1) ?? '',
      /Delete vault/,
      'asked again, naming what it now is',
    );
    assert.ok(!gh.writes().some((request) => request.path.includes('delete')), 'the vault was not deleted');
  });

  test('refs the agent was never shown are refused before anyone is asked', async () => {
    mcp.human.will({ decision: 'approve' });
    await mcp.call('new_page', { url: gh.url('github.com', '/settings/vault') });
    const snapshot = await mcp.call('take_snapshot');
    const shown = new Set([...snapshot.text.matchAll(/@(e\d+)/g)].map((match) => match[1]));
    const asked = mcp.human.questions.length;
    for (let index = 1; index <= 25; index++) {
      const ref = `e${index}`;
      if (shown.has(ref)) continue;
      const fill = await mcp.call('fill', { ref, value: 'x' });
      assert.ok(fill.isError && fill.text.startsWith('stale_ref:'), `${ref}: ${fill.text}`);
    }
    assert.equal(mcp.human.questions.length, asked, 'nobody was asked about an element the agent never saw');
  });
});
