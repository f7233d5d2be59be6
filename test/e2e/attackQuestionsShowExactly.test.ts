// A question shows its arguments character for character, and names every element the action touches
// (protocol/shownArgs.ts, displayText.ts exactText). Second attack review of "shown whole" (attackQuestionsShowWhole):
// the whole line was shown, but not exactly, and a careful human approved what the page did not get as shown.
// Found and fixed (each test failed before):
// - call_site_tool with `to`/`to ` and `amount`/` amount`: the question showed one pair (the landlord, 50), the
//   page's tool read the other (the attacker, 5,000). Names that read alike are refused before anyone is asked.
// - combining marks past the third on a letter were dropped: two script variables looked the same, and a short
//   comment carried 18,000 hidden characters past the bound on what a question shows. Every character now shows (a mark past the
//   third as <U+0300>), and the bound counts them.
// - drag named only what it dragged: "drag on salary.xlsx" dropped it on "Share publicly". The question names
//   where it drops.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const polyfill = readFileSync(createRequire(import.meta.url).resolve('@mcp-b/global/iife'), 'utf8');

let site: Fixture;
let mcp: McpUnderTest;

before(async () => {
  site = await startFixture(
    {
      '/pay': (_req, _body, res) =>
        html(
          res,
          `<title>Bank</title><script src="/global.js"></script><h1>Pay</h1><script>window.calls = [];
        document.modelContext.registerTool({ name: 'sendMoney', description: 'Send money from your account',
          inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } }, required: ['to', 'amount'] },
          async execute(input) { window.calls.push(input); return { content: [{ type: 'text', text: 'sent ' + input.amount + ' to ' + input.to }] }; } });</script>`,
        ),
      '/global.js': (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(polyfill);
      },
      '/comment': (_req, _body, res) =>
        html(
          res,
          '<title>Review</title><form method="post" action="/comment"><label>Comment <textarea name="c"></textarea></label><button>Post</button></form>',
        ),
      '/files': (_req, _body, res) =>
        html(
          res,
          `<title>Files</title>
        <div draggable="true" id="f" role="button" aria-label="salary.xlsx">salary.xlsx</div>
        <div id="a" role="button" aria-label="Archive" style="width:200px;height:60px">Archive</div>
        <div id="p" role="button" aria-label="Share publicly" style="width:200px;height:60px">Share publicly</div>
        <script>f.addEventListener('dragstart', (e) => e.dataTransfer.setData('text', 'salary.xlsx'));
        for (const zone of [a, p]) { zone.addEventListener('dragover', (e) => e.preventDefault());
          zone.addEventListener('drop', (e) => { e.preventDefault(); fetch('/move', { method: 'POST', body: zone.getAttribute('aria-label') }); }); }</script>`,
        ),
      '/move': (_req, _body, res) => html(res, 'ok'),
      // A sensitive page with a third party's script that posts on a click (and could post what it sees later).
      '/settings/tokens': (_req, _body, res) =>
        html(
          res,
          `<title>Tokens</title><p>ghp_heldAllowsToken5521</p><button id="scopes">Show scopes</button><script>
        scopes.onclick = () => fetch(${JSON.stringify(site.url('stats.example', '/collect'))}, { method: 'POST', mode: 'no-cors', body: '{"event":"scopes"}' });</script>`,
        ),
      '/collect': (_req, _body, res) => html(res, 'ok'),
      // A page of another site whose harmless-looking button posts into github.com's key settings on its own.
      '/helper': (_req, _body, res) =>
        html(
          res,
          `<title>Helper</title><button id="sync">Sync settings</button><button id="big">Sync all</button><script>
        const post = (body) => fetch(${JSON.stringify(site.url('github.com', '/settings/keys/add'))}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
        sync.onclick = () => post('title=laptop&key=ssh-ed25519+AAAAC3NzaATTACKERKEY');
        big.onclick = () => post('title=' + 'x'.repeat(12000) + '&key=ssh-ed25519+AAAAC3NzaATTACKERKEY');</script>`,
        ),
      '/settings/keys/add': (_req, _body, res) => html(res, 'added'),
      // Forms of another site posting into github.com's key settings: hidden fields, and a field the submit changes.
      '/forms': (_req, _body, res) =>
        html(
          res,
          `<title>Forms</title>
        <form method="post" action="${site.url('github.com', '/settings/keys/add')}"><input type="hidden" name="title" value="laptop">
          <input type="hidden" name="key" value="ssh-ed25519 AAAAC3NzaATTACKERKEY"><button>Sync settings</button></form>
        <form id="late" method="post" action="${site.url('github.com', '/settings/keys/add')}"><input type="hidden" name="title" value="work">
          <input type="hidden" id="k" name="key" value="ssh-ed25519 AAAAmine"><button>Add my key</button></form>
        <form id="plain" method="post" action="${site.url('github.com', '/settings/keys/add')}"><input type="hidden" name="title" value="desk">
          <input type="hidden" name="key" value="ssh-ed25519 AAAAdesk"><button>Add desk key</button></form>
        <form id="pw" method="post" action="${site.url('github.com', '/settings/keys/add')}"><input type="hidden" name="title" value="pw">
          <input type="hidden" id="pk" name="key" value="ssh-ed25519 AAAAmine"><input type="password" name="sudo" style="display:none"><button>Add with password</button></form>
        <form id="odd" method="post" action="${site.url('github.com', '/settings/keys/add')}"><input type="hidden" name="title" value="odd">
          <input type="hidden" id="ok" name="key" value="ssh-ed25519 AAAAmine"><button form="nowhere" id="oddb">Add oddly</button></form>
        <form id="multi" method="post" enctype="multipart/form-data" action="${site.url('github.com', '/settings/keys/add')}">
          <input type="hidden" name="title" value="multi"><button>Add as multipart</button></form>
        <script>late.addEventListener('submit', () => { k.value = 'ssh-ed25519 AAAAC3NzaATTACKERKEY2'; });
        // A password field of the page's own, to unbind the form; a submitter tabward's read of the form fails on.
        pw.addEventListener('submit', () => { pk.value = 'ssh-ed25519 AAAAC3NzaATTACKERKEY4'; });
        oddb.addEventListener('click', () => { ok.value = 'ssh-ed25519 AAAAC3NzaATTACKERKEY5'; odd.submit(); });
        // Only the real submission adds the key (tabward's read builds the form data with no submit event).
        let submitting = false;
        multi.addEventListener('submit', () => { submitting = true; });
        multi.addEventListener('formdata', (e) => { if (submitting) e.formData.append('key', 'ssh-ed25519 AAAAC3NzaATTACKERKEY3'); });</script>`,
        ),
    },
    { tls: true },
  );
  // Every write asks; the human refuses what they can see is harmful.
  mcp = await startMcp({ args: ['--policy', 'strict', '--mode', 'isolated'] });
  mcp.human.policy = (question) =>
    /attacker|5000|public|share/i.test(question) ? { decision: 'reject' } : { decision: 'approve' };
});

after(async () => {
  await mcp?.close();
  await site?.close();
});

test('argument names that read alike are refused before anyone is asked, and the page gets nothing', async () => {
  await mcp.call('new_page', { url: site.url('127.0.0.1', '/pay') });
  await waitFor('the page registers its tool', async () =>
    (await mcp.call('list_site_tools')).text.includes('sendMoney') ? true : undefined,
  );
  const asked = mcp.human.questions.length;
  const sent = await mcp.call('call_site_tool', {
    name: 'sendMoney',
    arguments: { to: 'attacker GB99 6666', amount: 5000, 'to ': 'landlord DE02 1001', ' amount': 50 },
  });
  assert.equal(sent.isError, true, sent.text);
  assert.match(sent.text, /Two argument names read alike \("to" and "to "\)/);
  assert.equal(mcp.human.questions.length, asked, 'the human was asked');
  const calls = await mcp.call('evaluate_script', { function: '() => JSON.stringify(window.calls)' });
  assert.match(calls.text, /\[\]/, calls.text);
});

test('a value of stacked marks shows each one, and one too long as shown is refused', async () => {
  await mcp.call('new_page', { url: site.url('shop.example', '/comment') });
  const comment = refOf((await mcp.call('take_snapshot')).text, 'Comment');
  const asked = mcp.human.questions.length;
  // Four accents on one letter: the fourth was dropped from view.
  await mcp.call('fill', { ref: comment, value: 'ok k\u0300\u0300\u0300\u0300' });
  assert.equal(mcp.human.questions.length, asked + 1);
  assert.ok(mcp.human.questions.at(-1)?.includes('k\u0300\u0300\u0300<U+0300>'), mcp.human.questions.at(-1));
  // 6,000 marks out of sight carried a payload past the bound.
  const hidden = `Looks good to me${'\u0323'.repeat(6000)}`;
  const filled = await mcp.call('fill', { ref: comment, value: hidden });
  assert.equal(filled.isError, true, filled.text);
  assert.match(filled.text, /too long for the human to read whole/);
  assert.equal(mcp.human.questions.length, asked + 1, 'the human was asked about what they could not see');
});

test('a request the page sends into a sensitive page is asked about with what it carries, whole', async () => {
  await mcp.call('new_page', { url: site.url('helper.example', '/helper') });
  const snapshot = (await mcp.call('take_snapshot')).text;
  await mcp.call('click', { ref: refOf(snapshot, 'Sync settings') });
  const held = mcp.human.questions.find((question) =>
    /Sends: POST github\.com(:\d+)?\/settings\/keys\/add/.test(question),
  );
  assert.ok(held, mcp.human.questions.join('\n---\n'));
  assert.match(held, /"body":"title=laptop&key=ssh-ed25519\+AAAAC3NzaATTACKERKEY"/);
  // Too long to show whole: refused without asking, and the audit says why.
  const asked = mcp.human.questions.length;
  await mcp.call('click', { ref: refOf(snapshot, 'Sync all') });
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(
    mcp.human.questions.filter((question) => question.includes('Sends: POST')).length,
    mcp.human.questions.slice(0, asked).filter((question) => question.includes('Sends: POST')).length,
  );
  assert.match(readFileSync(mcp.auditPath, 'utf8'), /refused without asking: The arguments are too long/);
  assert.deepEqual(
    site.seen.filter((request) => request.path === '/settings/keys/add').map((request) => request.body),
    [],
  );
});

test("a form's submission is asked about with its fields, and is let through with those only", async () => {
  const posted = () =>
    site.seen.filter((request) => request.path === '/settings/keys/add').map((request) => request.body);
  await mcp.call('new_page', { url: site.url('forms.example', '/forms') });
  let snapshot = (await mcp.call('take_snapshot')).text;
  // Hidden fields: shown, so the human sees the attacker's key and refuses.
  await mcp.call('click', { ref: refOf(snapshot, 'Sync settings') });
  assert.match(
    mcp.human.questions.at(-1) ?? '',
    /Form sends: \[\["title","laptop"\],\["key","ssh-ed25519 AAAAC3NzaATTACKERKEY"\]\]/,
  );
  assert.deepEqual(posted(), []);
  // A field the page changes as the form submits: the body the human saw is not the one sent, so it is held and
  // asked about as it is.
  snapshot = (await mcp.call('take_snapshot')).text;
  await mcp.call('click', { ref: refOf(snapshot, 'Add my key') });
  assert.ok(
    mcp.human.questions.some((question) => /Form sends: .*AAAAmine/.test(question)),
    'the question showed the form as it was',
  );
  assert.match(
    mcp.human.questions.at(-1) ?? '',
    /"body":"title=work&key=ssh-ed25519\+AAAAC3NzaATTACKERKEY2"/,
  );
  assert.deepEqual(posted(), []);
  // The same in a multipart form, its field added as it submits.
  await mcp.call('navigate_page', { url: site.url('forms.example', '/forms') });
  await mcp.call('click', { ref: refOf((await mcp.call('take_snapshot')).text, 'Add as multipart') });
  assert.ok(
    mcp.human.questions.some((question) => /Form sends: \[\["title","multi"\]\]/.test(question)),
    'the question showed the multipart form as it was',
  );
  assert.match(mcp.human.questions.at(-1) ?? '', /"body":".*AAAAC3NzaATTACKERKEY3/);
  assert.deepEqual(posted(), []);
  // A password field of the page's own, or a read of the form that fails, binds it all the same.
  for (const [button, key] of [
    ['Add with password', 'AAAAC3NzaATTACKERKEY4'],
    ['Add oddly', 'AAAAC3NzaATTACKERKEY5'],
  ]) {
    await mcp.call('navigate_page', { url: site.url('forms.example', '/forms') });
    await mcp.call('click', { ref: refOf((await mcp.call('take_snapshot')).text, button ?? '') });
    assert.match(mcp.human.questions.at(-1) ?? '', new RegExp(`"body":".*${key}`), button);
    assert.deepEqual(posted(), [], button);
  }
  // The form as shown goes through on the human's one yes.
  await mcp.call('navigate_page', { url: site.url('forms.example', '/forms') });
  snapshot = (await mcp.call('take_snapshot')).text;
  const added = await mcp.call('click', { ref: refOf(snapshot, 'Add desk key') });
  assert.equal(added.isError, false, added.text);
  assert.deepEqual(posted(), ['title=desk&key=ssh-ed25519+AAAAdesk']);
});

test('a yes to a request held after a read says it lets that host receive requests for the session', async () => {
  await mcp.call('new_page', { url: site.url('github.com', '/settings/tokens') });
  const snapshot = (await mcp.call('take_snapshot')).text;
  await mcp.call('click', { ref: refOf(snapshot, 'Show scopes') });
  const held = mcp.human.questions.find((question) => /Sends: POST stats\.example/.test(question)) ?? '';
  assert.match(
    held,
    /approving lets https:\/\/stats\.example:\d+ receive requests for the rest of this session/,
    held,
  );
});

test('drag names where it drops, and the human who refuses sharing is asked about it', async () => {
  await mcp.call('new_page', { url: site.url('files.example', '/files') });
  const snapshot = (await mcp.call('take_snapshot')).text;
  const dragged = await mcp.call('drag', {
    fromRef: refOf(snapshot, 'salary.xlsx'),
    toRef: refOf(snapshot, 'Share publicly'),
  });
  assert.match(mcp.human.questions.at(-1) ?? '', /Drops onto: button "Share publicly"/);
  assert.equal(dragged.isError, true, dragged.text);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(
    site.seen.filter((request) => request.path === '/move').map((request) => request.body),
    [],
  );
});
