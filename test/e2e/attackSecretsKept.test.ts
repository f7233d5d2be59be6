// Attacks on where a secret or a password lands (an attack review of what tabward writes and shows): a page that
// makes a label, a field's type or a form's other fields out of what was typed or autofilled, so that the value
// reaches the audit log, a saved recipe, or the approval question (which `tabward approvals` shows to whoever runs
// it, the agent's own shell included). And the binding of a password's value: a page that swaps what a field shown
// as a password holds once the human said yes.
// The real CLI over stdio with a scripted human, real Chromium, every host name mapped to the fixture.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';

const literal = 'Lit3ralPw9911';
const declared = 'D3claredTok5522';
const flipped = 'FocusFlipPw4471';
const flippedInForm = 'FormFlipPw6693';
const autofilled = 'AutoFilledPw3321';

/** A page that writes what is typed into a button's label and a link's text and address. */
const echoing = (field: string) => `<title>Login</title>
${field}
<button id=b onclick="return false">Go</button>
<a id=l href="/next">Next</a>
<script>
const f = document.getElementById('f');
f.addEventListener('input', () => {
  document.getElementById('b').textContent = 'Delete ' + f.value;
  const l = document.getElementById('l'); l.href = '/remove?token=' + f.value; l.textContent = 'Remove ' + f.value;
});
</script>`;

describe('a secret or a password never lands where a page puts it', { timeout: 180_000 }, () => {
  let site: Fixture;
  let mcp: McpUnderTest;
  let dir = '';

  before(async () => {
    site = await startFixture({
      '/pw': (_req, _body, res) => html(res, echoing('<label>Password <input id=f type=password></label>')),
      '/key': (_req, _body, res) => html(res, echoing('<label>API key <input id=f></label>')),
      '/next': (_req, _body, res) => html(res, '<title>Next</title><p>next</p>'),
      '/remove': (_req, _body, res) => html(res, '<title>Removed</title><p>removed</p>'),
      // A text field that becomes a password field as it takes the focus (a guard some sites keep against
      // autofill), alone and in a form.
      '/flip': (_req, _body, res) =>
        html(
          res,
          `<title>Sign in</title><form action="/session" method=post><label>Password <input name=pw onfocus="this.type='password'"></label><button>Sign in</button></form>`,
        ),
      '/flip-form': (_req, _body, res) =>
        html(
          res,
          `<title>Sign in</title><form action="/session" method=post><label>User <input name=u></label><label>Password <input name=pw onfocus="this.type='password'"></label><button>Sign in</button></form>`,
        ),
      // A password put in as the browser's autofill would, copied by the page into a hidden field, a read-only text
      // field and a one-time-code field of the same form.
      '/bank-login': (_req, _body, res) =>
        html(
          res,
          `<title>Bank sign in</title><form id=f method=post action="/session">
<label>User <input name=user value=alice></label>
<label>Password <input id=p type=password name=password></label>
<input type=hidden name=pw_copy>
<label>Shown <input name=shown readonly></label>
<label>Code <input name=otp autocomplete="one-time-code"></label>
<button>Sign in</button></form>
<script>p.value = ${JSON.stringify(autofilled)}; f.pw_copy.value = p.value; f.shown.value = p.value; f.otp.value = p.value;</script>`,
        ),
      // A key that goes in a password field (shown as a password), swapped for the attacker's once the form submits.
      '/bank-keys': (_req, _body, res) =>
        html(
          res,
          `<title>Keys</title><form id=f method=post action="/keys/add">
<label>Title <input name=title value=laptop></label>
<label>Key <input type=password name=key value="ssh-ed25519 AAAA-the-users-own"></label>
<button>Add key</button></form>
<script>f.addEventListener('submit', () => { f.key.value = 'ssh-ed25519 AAAA-ATTACKER'; });</script>`,
        ),
      '/session': (_req, _body, res) => html(res, '<title>Welcome</title><p>signed in</p>'),
      '/keys/add': (_req, _body, res) => html(res, '<title>Added</title><p>key added</p>'),
    });
    dir = mkdtempSync(join(tmpdir(), 'tabward-secrets-kept-'));
    const secrets = join(dir, 'secrets.env');
    writeFileSync(secrets, `API_TOKEN=${declared}\n`, { mode: 0o600 });
    const rules = join(dir, 'rules.txt');
    writeFileSync(rules, '*://bank.example/*\n');
    mcp = await startMcp({
      args: ['--mode', 'isolated', '--secrets', secrets, '--rules', rules, '--policy', 'destructive-asks'],
    });
  });
  after(async () => {
    await mcp?.close();
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const audit = () => readFileSync(mcp.auditPath, 'utf8');

  test("a label the page makes of what was typed reaches no audit field (the element's name, the guard's reason)", async () => {
    mcp.human.policy = () => ({ decision: 'approve' });
    for (const [path, field, typed] of [
      ['/pw', 'Password', { value: literal }],
      ['/key', 'API key', { secret: 'API_TOKEN' }],
    ] as const) {
      await mcp.call('new_page', { url: site.url('intranet.example', path) });
      const snapshot = (await mcp.call('take_snapshot')).text;
      await mcp.call('fill', { ref: refOf(snapshot, field), ...typed });
      const clicked = await mcp.call('click', { ref: refOf(snapshot, 'Go') });
      assert.match(clicked.text, /Delete «redacted»/, clicked.text);
      await mcp.call('click', { ref: refOf(snapshot, 'Next') });
    }
    mcp.human.policy = undefined;
    const written = audit();
    assert.match(written, /"element":"button \\"Delete «redacted»\\""/, 'the element is recorded, redacted');
    assert.doesNotMatch(written, new RegExp(literal), 'the typed password');
    assert.doesNotMatch(written, new RegExp(declared), "the declared secret's value");
  });

  test('a field that becomes a password field as it takes the focus: the literal typed there is masked in the audit and the saved recipe', async () => {
    await mcp.call('new_page', { url: site.url('intranet.example', '/flip') });
    let snapshot = (await mcp.call('take_snapshot')).text;
    await mcp.call('fill', { ref: refOf(snapshot, 'Password'), value: flipped });
    await mcp.call('new_page', { url: site.url('intranet.example', '/flip-form') });
    snapshot = (await mcp.call('take_snapshot')).text;
    await mcp.call('fill_form', {
      fields: [
        { ref: refOf(snapshot, 'User'), value: 'alice' },
        { ref: refOf(snapshot, 'Password'), value: flippedInForm },
      ],
    });
    const saved = await mcp.call('save_recipe', { name: 'flipped' });
    assert.equal(saved.isError, false, saved.text);
    const recipe = readFileSync(join(mcp.home, 'recipes', 'flipped.json'), 'utf8');
    for (const [where, text] of [
      ['the audit', audit()],
      ['the saved recipe', recipe],
    ] as const) {
      assert.doesNotMatch(text, new RegExp(flipped), `${where}: the password typed alone`);
      assert.doesNotMatch(text, new RegExp(flippedInForm), `${where}: the password typed in a form`);
    }
    assert.match(recipe, /"selector": "input\[name=\\"pw\\"\]",\s*"secret": "PASSWORD"/, recipe);
  });

  test('(the session tainted by the secret typed above, the bank is asked about by a fresh tabward)', async () => {
    await mcp.close();
    mcp = await startMcp({ args: ['--mode', 'isolated'] });
  });

  test("a form's question shows no password: not a one-time-code field's, nor a copy the page made of one", async () => {
    // Yes to opening the sensitive page, no to the click.
    mcp.human.will({ decision: 'approve' }, { decision: 'reject' });
    await mcp.call('new_page', { url: site.url('bank.example', '/bank-login') });
    const snapshot = (await mcp.call('take_snapshot')).text;
    const asked = mcp.human.questions.length;
    await mcp.call('click', { ref: refOf(snapshot, 'Sign in') });
    const question = mcp.human.questions.slice(asked).join('\n');
    assert.match(question, /Form sends:/, question);
    assert.match(question, /pw_copy/, question);
    assert.doesNotMatch(question, new RegExp(autofilled), question);
  });

  test('a value shown as a password is bound to the yes: a page that swaps it as the form submits has its post held', async () => {
    // Yes to opening the page and to the click (its question shows the key as a password), no to anything after.
    mcp.human.will({ decision: 'approve' });
    await mcp.call('new_page', { url: site.url('bank.example', '/bank-keys') });
    const snapshot = (await mcp.call('take_snapshot')).text;
    const asked = mcp.human.questions.length;
    mcp.human.will({ decision: 'approve' });
    mcp.human.policy = () => ({ decision: 'reject' });
    await mcp.call('click', { ref: refOf(snapshot, 'Add key') });
    mcp.human.policy = undefined;
    const posted = site.writes().filter((request) => request.path.startsWith('/keys/add'));
    assert.deepEqual(
      posted.map((request) => request.body),
      [],
      'the swapped key never reached the site',
    );
    const questions = mcp.human.questions.slice(asked);
    assert.equal(questions.length, 2, `the click, then the post as it went: ${questions.join('\n----\n')}`);
    assert.match(questions[0] ?? '', /key.*\(a password, not shown\)/, questions[0]);
  });
});
