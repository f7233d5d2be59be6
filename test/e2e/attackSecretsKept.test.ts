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
import { after, afterEach, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';

const literal = 'Lit3ralPw9911';
const declared = 'D3claredTok5522';
const flipped = 'FocusFlipPw4471';
const flippedInForm = 'FormFlipPw6693';
const autofilled = 'AutoFilledPw3321';
const flippedAway = 'AwayFlipPw8812';
const recipeLiteral = 'RecipeLit4471';
const attackerIbanHeld = 'DE00HELDIBAN5511';

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
      // A text field the page makes a password field once typed into, moving the focus away.
      '/flip-away': (_req, _body, res) =>
        html(
          res,
          `<title>Sign in</title><label>Password <input id=pw name=pw></label><label>Other <input id=other></label>
<script>pw.addEventListener('input', () => { if (pw.type !== 'password') { pw.type = 'password'; other.focus(); } });</script>`,
        ),
      // A recipe's page that writes what is typed into a button's label.
      '/recipe-login': (_req, _body, res) =>
        html(
          res,
          `<title>Login</title><label>Password <input id=pw type=password></label><button id=b onclick="return false">Go</button>
<script>pw.addEventListener('input', () => { b.textContent = 'Delete ' + pw.value; });</script>`,
        ),
      '/session': (_req, _body, res) => html(res, '<title>Welcome</title><p>signed in</p>'),
    });
    dir = mkdtempSync(join(tmpdir(), 'tabward-secrets-kept-'));
    const secrets = join(dir, 'secrets.env');
    writeFileSync(secrets, `API_TOKEN=${declared}\n`, { mode: 0o600 });
    mcp = await startMcp({
      args: ['--mode', 'isolated', '--secrets', secrets, '--policy', 'destructive-asks'],
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
      ['/pw', 'Password', { value: literal, secret: undefined }],
      ['/key', 'API key', { value: undefined, secret: 'API_TOKEN' }],
    ] as const) {
      await mcp.call('new_page', { url: site.url('intranet.example', path) });
      const snapshot = (await mcp.call('take_snapshot')).text;
      await mcp.call('fill', {
        ref: refOf(snapshot, field),
        ...(typed.value ? { value: typed.value } : { secret: typed.secret }),
      });
      const asked = mcp.human.questions.length;
      const clicked = await mcp.call('click', { ref: refOf(snapshot, 'Go') });
      assert.match(clicked.text, /Delete «redacted»/, clicked.text);
      // The question masks a declared secret; a literal the agent typed it shows (the page may have chosen it).
      const question = mcp.human.questions.slice(asked).join('\n');
      assert.match(question, typed.value ? new RegExp(`Delete ${literal}`) : /Delete «redacted»/, question);
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

  test('a field made a password field as it is typed into, the focus then moved away: the literal is masked', async () => {
    await mcp.call('new_page', { url: site.url('intranet.example', '/flip-away') });
    const snapshot = (await mcp.call('take_snapshot')).text;
    await mcp.call('fill', { ref: refOf(snapshot, 'Password'), value: flippedAway });
    assert.doesNotMatch(audit(), new RegExp(flippedAway));
  });

  test("a recipe's literal typed into a password field reaches neither the audit nor the run's output", async () => {
    const recipe = join(dir, 'login.json');
    writeFileSync(
      recipe,
      JSON.stringify({
        url: site.url('intranet.example', '/recipe-login'),
        steps: [
          { action: 'type', selector: '#pw', text: recipeLiteral },
          { action: 'click', selector: '#b' },
        ],
      }),
    );
    const recipeAudit = join(dir, 'recipe-audit.jsonl');
    const ran = await runCli(
      ['run', recipe, '--audit-log', recipeAudit, ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg])],
      { TABWARD_HOME: join(dir, 'recipe-home') },
    );
    assert.match(ran.stdout, /"ok": true/, ran.stdout + ran.stderr);
    assert.match(readFileSync(recipeAudit, 'utf8'), /Delete «redacted»/, 'the label is recorded, redacted');
    for (const [where, text] of [
      ['the output', ran.stdout + ran.stderr],
      ['the audit', readFileSync(recipeAudit, 'utf8')],
    ] as const)
      assert.doesNotMatch(text, new RegExp(recipeLiteral), where);
  });
});

describe("a form's question shows no password, and a password's value is bound to the yes", {
  timeout: 180_000,
}, () => {
  let site: Fixture;
  let mcp: McpUnderTest;
  let dir = '';
  const legacyPassword = 'Pässwörd1234';

  before(async () => {
    site = await startFixture({
      // A password put in as the browser's autofill would, and a one-time-code field holding it too.
      '/bank-login': (_req, _body, res) =>
        html(
          res,
          `<title>Bank sign in</title><form id=f method=post action="/session">
<label>User <input name=user value=alice></label>
<label>Password <input id=p type=password name=password></label>
<label>Code <input name=otp autocomplete="one-time-code"></label>
<button>Sign in</button></form>
<script>p.value = ${JSON.stringify(autofilled)}; f.otp.value = p.value;</script>`,
        ),
      // Copies of it in fields of other kinds: in capitals, from a shadow root's password field, from a frame's.
      '/bank-copies': (_req, _body, res) =>
        html(
          res,
          `<title>Bank sign in</title><div id=host></div><iframe id=fr srcdoc="<input type=password id=ip>"></iframe>
<form id=f method=post action="/session">
<label>Password <input id=p type=password name=password></label>
<input type=hidden name=upper><input type=hidden name=shadowcopy><input type=hidden name=framecopy>
<button>Sign in</button></form>
<script>p.value = ${JSON.stringify(autofilled)}; f.upper.value = p.value.toUpperCase();
const root = host.attachShadow({ mode: 'open' }); root.innerHTML = '<input type=password id=sp>'; root.getElementById('sp').value = 'ShadowPw7788'; f.shadowcopy.value = 'ShadowPw7788';
fr.addEventListener('load', () => { fr.contentDocument.getElementById('ip').value = 'FramePw5566'; }); f.framecopy.value = 'FramePw5566';</script>`,
        ),
      // Copies of an autofilled password in forms of the page's own making: reversed, base64, hex, spaced out,
      // inside a longer value, percent-encoded.
      '/bank-encoded': (_req, _body, res) =>
        html(
          res,
          `<title>Bank sign in</title><form id=f method=post action="/session">
<label>Password <input id=p type=password name=password></label>
<input type=hidden name=rev><input type=hidden name=b64><input type=hidden name=hex><input type=hidden name=spaced><input type=hidden name=inside><input type=hidden name=pct>
<button>Sign in</button></form>
<script>p.value = ${JSON.stringify(`${autofilled}&`)}; const v = p.value;
f.rev.value = [...v].reverse().join(''); f.b64.value = btoa('x' + v); f.hex.value = [...new TextEncoder().encode(v)].map((b) => b.toString(16).padStart(2, '0')).join('');
f.spaced.value = [...v].join(' '); f.inside.value = 'ref-' + v + '-end'; f.pct.value = encodeURIComponent(v);</script>`,
        ),
      // A form the focus is in, with a copy of a frame's password field's value: submitted by Enter on the focus.
      '/bank-focus-copy': (_req, _body, res) =>
        html(
          res,
          `<title>Bank sign in</title><iframe id=fr srcdoc="<input type=password id=ip>"></iframe>
<form id=f method=post action="/session"><label>User <input name=user value=alice autofocus></label><input type=hidden name=framecopy><button>Sign in</button></form>
<script>fr.addEventListener('load', () => { fr.contentDocument.getElementById('ip').value = 'FramePw5566'; }); f.framecopy.value = 'x-FramePw5566';</script>`,
        ),
      // An attacker's page with a password field, for the agent to type a piece of the bank's password into.
      '/typer': (_req, _body, res) =>
        html(res, '<title>Typer</title><label>Code <input type=password name=code></label>'),
      // The autofilled password shown back in the page's text and a field, reversed, base64-encoded, spaced out.
      '/bank-snap': (_req, _body, res) =>
        html(
          res,
          `<title>Bank</title><label>Password <input id=p type=password></label><p id=t></p><label>Reference <input id=r></label>
<script>p.value = ${JSON.stringify(autofilled)}; const v = p.value; const rev = [...v].reverse().join('');
t.textContent = 'rev ' + rev + ' b64 ' + btoa(v) + ' spaced ' + [...v].join('-'); r.value = 'ref-' + rev;</script>`,
        ),
      // A recipient's field marked as a one-time code (a password by its autocomplete token).
      '/pay-otc': (_req, _body, res) =>
        html(
          res,
          '<title>Pay</title><form method=post action="/transfer"><label>Recipient <input name=to autocomplete="one-time-code"></label><input type=hidden name=amount value=1000><button>Send</button></form>',
        ),
      // A login with a "show password" box that makes the password field a text field.
      '/login-show': (_req, _body, res) =>
        html(
          res,
          `<title>Bank sign in</title><form method=post action="/session"><label>Password <input id=pw type=password name=pw></label>
<label><input type=checkbox onclick="pw.type = this.checked ? 'text' : 'password'"> Show password</label><button>Sign in</button></form>`,
        ),
      // A page that shows its autofilled password in every other read: its title (reversed), its console, a dialog.
      '/bank-echo': (_req, _body, res) =>
        html(
          res,
          `<title>Bank</title><label>Password <input id=p type=password></label><button onclick="alert('Saved: ' + p.value)">Save</button>
<script>p.value = ${JSON.stringify(autofilled)}; setTimeout(() => { console.log('debug ' + p.value); document.title = 'Bank ' + [...p.value].reverse().join(''); }, 300);</script>`,
        ),
      // Another site's page whose password field holds the attacker's account number, and a bank form sending to it.
      '/holds-iban': (_req, _body, res) =>
        html(res, `<title>Other</title><label>PIN <input type=password value="${attackerIbanHeld}"></label>`),
      '/pay-held-iban': (_req, _body, res) =>
        html(
          res,
          `<title>Pay</title><form method=post action="/transfer"><input type=hidden name=to value="${attackerIbanHeld}"><input type=hidden name=amount value=1000><button>Send</button></form>`,
        ),
      // A login by GET: the password goes in the address.
      '/bank-get-login': (_req, _body, res) =>
        html(
          res,
          `<title>Bank sign in</title><form method=get action="/session"><label>User <input name=user value=alice></label><label>Password <input id=p type=password name=pw></label><button>Sign in</button></form>
<script>p.value = ${JSON.stringify(autofilled)};</script>`,
        ),
      // A password field outside the form holding a field's value (it would hide that field), and one holding part
      // of another's.
      '/bank-hide': (_req, _body, res) =>
        html(
          res,
          `<title>Pay</title><input type=password hidden value="DE00ATTACKER"><input type=password hidden value="IBAN-DE">
<form method=post action="/transfer"><input type=hidden name=to value="DE00ATTACKER"><input type=hidden name=memo value="rent IBAN-DE 11"><button>Continue</button></form>`,
        ),
      // The form shows an honest recipient and swaps the attacker's in as it submits, which a password field out
      // of view holds: the held post's question may neither show it nor hide it.
      '/bank-hide-held': (_req, _body, res) =>
        html(
          res,
          `<title>Pay</title><input type=password style="position:absolute;left:-9999px" value="DE00ATTACKER">
<form id=f method=post action="/transfer"><input type=hidden name=to value="DE11HONEST"><input type=hidden name=amount value=1000><button>Continue</button></form>
<script>f.addEventListener('submit', () => { f.to.value = 'DE00ATTACKER'; });</script>`,
        ),
      // An honest login whose e-mail address holds the password typed.
      '/bank-email': (_req, _body, res) =>
        html(
          res,
          '<title>Bank sign in</title><form method=post action="/session"><label>Email <input name=email value="summer1@example.com"></label><label>Password <input type=password name=password></label><button>Sign in</button></form>',
        ),
      // The password copied into another field only as the form submits: the post is held, its body shown.
      '/bank-late': (_req, _body, res) =>
        html(
          res,
          `<title>Bank sign in</title><form id=f method=post action="/session">
<label>Password <input id=p type=password name=password></label><input type=hidden name=enc>
<button>Sign in</button></form>
<script>p.value = ${JSON.stringify(autofilled)}; f.addEventListener('submit', () => { f.enc.value = p.value.toUpperCase(); });</script>`,
        ),
      // A script posting the password alone, reversed and base64-encoded, as the form submits.
      '/bank-late-encoded': (_req, _body, res) =>
        html(
          res,
          `<title>Bank sign in</title><form id=f method=post action="/session">
<label>Password <input id=p type=password name=password></label>
<button>Sign in</button></form>
<script>p.value = ${JSON.stringify(autofilled)}; f.addEventListener('submit', (event) => { event.preventDefault();
fetch('/collect', { method: 'POST', body: 'enc=' + [...p.value].reverse().join('') + '+' + btoa(p.value) }); });</script>`,
        ),
      // A key in a password field (shown as a password), swapped for the attacker's as the form submits.
      '/bank-keys': (_req, _body, res) =>
        html(
          res,
          `<title>Keys</title><form id=f method=post action="/keys/add">
<label>Title <input name=title value=laptop></label>
<label>Key <input type=password name=key value="ssh-ed25519 AAAA-the-users-own"></label>
<button>Add key</button></form>
<script>f.addEventListener('submit', () => { f.key.value = 'ssh-ed25519 AAAA-ATTACKER'; });</script>`,
        ),
      // A file input marked as a password by its autocomplete token, swapped for a text field as it submits.
      '/bank-filekey': (_req, _body, res) =>
        html(
          res,
          `<title>Keys</title><form id=f method=post action="/keys/add">
<label>Title <input name=title value=laptop></label>
<label>Key <input type=file name=key autocomplete="current-password"></label>
<button>Add key</button></form>
<script>f.addEventListener('submit', () => { const t = document.createElement('input'); t.name = 'key'; t.value = 'ssh-ed25519 AAAA-ATTACKER'; f.key.replaceWith(t); });</script>`,
        ),
      // A login page in a legacy charset: the browser posts "ä" as %E4.
      '/bank-legacy': (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=windows-1252' });
        res.end(
          Buffer.from(
            '<title>Bank sign in</title><form method=post action="/session"><label>User <input name=user value=alice></label><label>Password <input type=password name=password></label><button>Sign in</button></form>',
            'latin1',
          ),
        );
      },
      // A recipient's field the page makes a password field while it is typed into (text again once left): the
      // agent, told what to type there, makes the recipient a literal the redactor hides.
      '/bank-flip-pay': (_req, _body, res) =>
        html(
          res,
          `<title>Pay</title><form method=post action="/transfer">
<label>Recipient <input name=to oninput="this.type='password'" onblur="this.type='text'"></label>
<label>Memo <input name=memo></label><input type=hidden name=amount value=1000><button>Send</button></form>`,
        ),
      // A confirmation code's password field whose value the submit handler swaps in for the recipient shown.
      '/bank-swap-typed': (_req, _body, res) =>
        html(
          res,
          `<title>Pay</title><label>Confirmation code <input type=password id=pw></label>
<form id=f method=post action="/transfer"><input type=hidden name=to value=DE11HONEST><input type=hidden name=amount value=1000><button>Send</button></form>
<script>f.addEventListener('submit', () => { f.to.value = pw.value; });</script>`,
        ),
      // A PIN's password field and a recipient's text field, filled in one call.
      '/bank-pin': (_req, _body, res) =>
        html(
          res,
          '<title>Pay</title><form method=post action="/transfer"><label>PIN <input type=password name=pin></label><label>Recipient <input name=to></label><button>Send</button></form>',
        ),
      '/session': (_req, _body, res) => html(res, '<title>Welcome</title><p>signed in</p>'),
      '/transfer': (_req, _body, res) => html(res, '<title>Sent</title><p>sent</p>'),
      '/keys/add': (_req, _body, res) => html(res, '<title>Added</title><p>key added</p>'),
    });
    dir = mkdtempSync(join(tmpdir(), 'tabward-form-passwords-'));
    const rules = join(dir, 'rules.txt');
    writeFileSync(rules, '*://bank.example/*\n');
    mcp = await startMcp({ args: ['--mode', 'isolated', '--rules', rules, '--tools', 'core,devtools'] });
  });
  after(async () => {
    await mcp?.close();
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    mcp.human.forget();
    mcp.human.policy = undefined;
  });

  /** Opens a page of the bank (asked: a sensitive page) and returns its snapshot. */
  const open = async (path: string) => {
    mcp.human.will({ decision: 'approve' });
    await mcp.call('new_page', { url: site.url('bank.example', path) });
    return (await mcp.call('take_snapshot')).text;
  };
  const posted = (path: string) => site.writes().filter((request) => request.path.startsWith(path));
  /** The questions asked while `work` ran. */
  const askedDuring = async (work: () => Promise<unknown>) => {
    const from = mcp.human.questions.length;
    await work();
    return mcp.human.questions.slice(from);
  };

  test("a password's value, and a one-time-code field's, show as passwords", async () => {
    const snapshot = await open('/bank-login');
    mcp.human.will({ decision: 'reject' });
    const [question = ''] = await askedDuring(() => mcp.call('click', { ref: refOf(snapshot, 'Sign in') }));
    assert.match(
      question,
      /Form sends: .*\["password","\(a password, not shown\)"\],\["otp","\(a password, not shown\)"\]/,
      question,
    );
    assert.doesNotMatch(question, new RegExp(autofilled), question);
  });

  test('a form sending a copy of a password in another field (any letter case, from a shadow root, from a frame) is not asked about', async () => {
    const snapshot = await open('/bank-copies');
    const before = posted('/session').length;
    const questions = await askedDuring(async () => {
      const clicked = await mcp.call('click', { ref: refOf(snapshot, 'Sign in') });
      assert.equal(clicked.isError, true, clicked.text);
      assert.match(
        clicked.text,
        /not_allowed: click was not asked about: .*"upper", "shadowcopy", "framecopy"/,
        clicked.text,
      );
    });
    assert.deepEqual(questions, []);
    assert.equal(posted('/session').length, before, 'nothing was posted');
  });

  test("a copy of the page's password in a form of its own making (reversed, base64, hex, spaced, inside a longer value, percent-encoded) is not asked about", async () => {
    const snapshot = await open('/bank-encoded');
    const questions = await askedDuring(async () => {
      const clicked = await mcp.call('click', { ref: refOf(snapshot, 'Sign in') });
      assert.match(clicked.text, /not_allowed: click was not asked about: /, clicked.text);
      for (const name of ['rev', 'b64', 'hex', 'spaced', 'inside', 'pct'])
        assert.match(clicked.text, new RegExp(`"${name}"`), clicked.text);
    });
    assert.deepEqual(questions, []);
    assert.deepEqual(posted('/session'), []);
  });

  test("Enter on the focus in a form holding a copy of a frame's password: not asked about", async () => {
    const snapshot = await open('/bank-focus-copy');
    assert.match(snapshot, /User/);
    const questions = await askedDuring(async () => {
      const pressed = await mcp.call('press_key', { key: 'Enter' });
      assert.match(pressed.text, /not_allowed: press_key was not asked about: .*"framecopy"/, pressed.text);
    });
    assert.deepEqual(questions, []);
    assert.deepEqual(posted('/session'), []);
  });

  test("a page's password field holding a field's value hides nothing: the form is not asked about", async () => {
    const snapshot = await open('/bank-hide');
    const clicked = await mcp.call('click', { ref: refOf(snapshot, 'Continue') });
    assert.match(
      clicked.text,
      /not_allowed: click was not asked about: .*: "to", "memo" \(to /,
      clicked.text,
    );
    assert.deepEqual(posted('/transfer'), []);
  });

  test('a held post carrying a password the page holds is refused unasked, neither shown nor masked', async () => {
    for (const [path, button] of [
      ['/bank-late', 'Sign in'],
      ['/bank-late-encoded', 'Sign in'],
      ['/bank-hide-held', 'Continue'],
    ] as const) {
      const snapshot = await open(path);
      mcp.human.will({ decision: 'approve' });
      mcp.human.policy = () => ({ decision: 'approve' });
      let told = '';
      const questions = await askedDuring(async () => {
        told = (await mcp.call('click', { ref: refOf(snapshot, button) })).text;
      });
      mcp.human.policy = undefined;
      assert.equal(questions.length, 1, `the click alone was asked: ${questions.join('\n----\n')}`);
      // The agent is told what happened: nobody was asked about the post, so no human refused it.
      assert.match(told, /refused without asking: it carries a password the page holds/, told);
      assert.doesNotMatch(told, /did not let it go/, told);
      assert.doesNotMatch(questions.join('\n'), new RegExp(`${autofilled}|DE00ATTACKER`, 'i'));
      const record = readFileSync(mcp.auditPath, 'utf8').trim().split('\n').at(-1) ?? '';
      assert.match(record, /refused without asking: it carries a password the page holds/, record);
    }
    assert.deepEqual(posted('/transfer'), [], 'the swapped recipient never reached the bank');
    assert.deepEqual(posted('/collect'), [], 'nor the encoded password');
  });

  test("once a snapshot read a page's password, no other read tells it (title, console, dialog, a search)", async () => {
    const snapshot = await open('/bank-echo');
    const reversed = [...autofilled].reverse().join('');
    await new Promise((done) => setTimeout(done, 600));
    const told: string[] = [];
    told.push((await mcp.call('list_pages')).text);
    told.push((await mcp.call('list_console_messages')).text);
    assert.match(told.join('\n'), /debug/, told.join('\n'));
    const probe = await mcp.call('wait_for', { text: autofilled.slice(0, 5), timeoutMs: 500 });
    assert.match(probe.text, /not_allowed/, probe.text);
    mcp.human.will({ decision: 'approve' });
    told.push((await mcp.call('click', { ref: refOf(snapshot, 'Save') })).text);
    told.push((await mcp.call('take_snapshot')).text);
    await mcp.call('handle_dialog', { accept: true });
    for (const text of told) {
      assert.doesNotMatch(text, new RegExp(autofilled, 'i'), text);
      assert.ok(!text.includes(reversed), text);
    }
    const audit = readFileSync(mcp.auditPath, 'utf8');
    assert.ok(!audit.includes(autofilled) && !audit.includes(reversed), 'the audit holds none of it');
  });

  test("another tab's password field holding a recipient masks nothing in a question", async () => {
    await mcp.call('new_page', { url: site.url('other.example', '/holds-iban') });
    const read = (await mcp.call('take_snapshot')).text;
    assert.ok(!read.includes(attackerIbanHeld), 'masked in that tab, as a password');
    const snapshot = await open('/pay-held-iban');
    mcp.human.will({ decision: 'reject' });
    const [question = ''] = await askedDuring(() => mcp.call('click', { ref: refOf(snapshot, 'Send') }));
    assert.match(question, new RegExp(`\\["to","${attackerIbanHeld}"\\]`), question);
    assert.deepEqual(posted('/transfer'), []);
  });

  test("a request stopped for carrying the page's password does not tell it (the result, the audit)", async () => {
    const snapshot = await open('/bank-get-login');
    mcp.human.will({ decision: 'approve' });
    mcp.human.policy = () => ({ decision: 'approve' });
    const clicked = await mcp.call('click', { ref: refOf(snapshot, 'Sign in') });
    mcp.human.policy = undefined;
    assert.match(clicked.text, /stopped/, clicked.text);
    assert.doesNotMatch(clicked.text, new RegExp(autofilled), clicked.text);
    assert.doesNotMatch(readFileSync(mcp.auditPath, 'utf8'), new RegExp(autofilled));
  });

  test('an honest login whose e-mail address holds the password is asked about as any other', async () => {
    const snapshot = await open('/bank-email');
    mcp.human.will({ decision: 'approve' });
    await mcp.call('fill', { ref: refOf(snapshot, 'Password'), value: 'summer1' });
    mcp.human.will({ decision: 'reject' });
    const [question = ''] = await askedDuring(() => mcp.call('click', { ref: refOf(snapshot, 'Sign in') }));
    // Asked, its fields shown: a password the agent typed is not its news (a copy inside a longer value is no bar),
    // and the question shows it, as it shows whatever the agent typed (a page may have chosen it).
    assert.match(
      question,
      /Form sends: \[\["email","summer1@example\.com"\],\["password","summer1"\]\]/,
      question,
    );
  });

  test('a value shown as a password is bound to the yes: a page that swaps it as the form submits has its post held', async () => {
    const snapshot = await open('/bank-keys');
    mcp.human.will({ decision: 'approve' });
    mcp.human.policy = () => ({ decision: 'reject' });
    const questions = await askedDuring(() => mcp.call('click', { ref: refOf(snapshot, 'Add key') }));
    assert.match(questions[0] ?? '', /\["key","\(a password, not shown\)"\]/, questions[0]);
    assert.equal(questions.length, 2, `the click, then the post as it went: ${questions.join('\n----\n')}`);
    assert.deepEqual(posted('/keys/add'), [], 'the swapped key never reached the site');
  });

  test('a file input marked as a password shows as a file, and a post swapping it for text is held', async () => {
    const snapshot = await open('/bank-filekey');
    mcp.human.will({ decision: 'approve' });
    mcp.human.policy = () => ({ decision: 'reject' });
    const questions = await askedDuring(() => mcp.call('click', { ref: refOf(snapshot, 'Add key') }));
    assert.match(questions[0] ?? '', /\["key","\(a file: /, questions[0]);
    assert.equal(questions.length, 2, questions.join('\n----\n'));
    assert.match(questions[1] ?? '', /ssh-ed25519\+AAAA-ATTACKER/, 'the held post shows what it carries');
    assert.deepEqual(posted('/keys/add'), []);
  });

  // What the agent typed into a password field is masked in results and records, not in questions: a page that
  // chose it (told the agent what to type) had the recipient masked in the question a yes sent it on.
  const attackerIban = 'DE00ATTACK7731';

  test('a recipient typed into a field the page made a password field shows in the form question', async () => {
    const snapshot = await open('/bank-flip-pay');
    mcp.human.policy = () => ({ decision: 'approve' });
    const filled = await mcp.call('fill', { ref: refOf(snapshot, 'Recipient'), value: attackerIban });
    assert.doesNotMatch(filled.text, new RegExp(attackerIban), 'masked in the result, as a password');
    await mcp.call('fill', { ref: refOf(snapshot, 'Memo'), value: 'rent' });
    mcp.human.policy = () => ({ decision: 'reject' });
    const [question = ''] = await askedDuring(() => mcp.call('click', { ref: refOf(snapshot, 'Send') }));
    assert.match(question, new RegExp(`\\["to","${attackerIban}"\\]`), question);
    assert.deepEqual(posted('/transfer'), []);
    assert.doesNotMatch(readFileSync(mcp.auditPath, 'utf8'), new RegExp(attackerIban), 'masked in the audit');
  });

  test('a held post carrying what the agent typed into a password field shows it', async () => {
    const snapshot = await open('/bank-swap-typed');
    mcp.human.policy = () => ({ decision: 'approve' });
    await mcp.call('fill', { ref: refOf(snapshot, 'Confirmation code'), value: attackerIban });
    mcp.human.will({ decision: 'approve' });
    mcp.human.policy = () => ({ decision: 'reject' });
    const questions = await askedDuring(() => mcp.call('click', { ref: refOf(snapshot, 'Send') }));
    assert.equal(questions.length, 2, `the click, then the post as it went: ${questions.join('\n----\n')}`);
    assert.match(questions[0] ?? '', /DE11HONEST/, 'the click showed the recipient the form holds');
    assert.match(questions[1] ?? '', new RegExp(`to=${attackerIban}`), questions[1]);
    assert.deepEqual(posted('/transfer'), [], 'the swapped recipient never reached the bank');
  });

  test("fill_form's question shows a recipient the same as the literal typed into a password field", async () => {
    const snapshot = await open('/bank-pin');
    mcp.human.policy = () => ({ decision: 'reject' });
    const [question = ''] = await askedDuring(() =>
      mcp.call('fill_form', {
        fields: [
          { ref: refOf(snapshot, 'PIN'), value: attackerIban },
          { ref: refOf(snapshot, 'Recipient'), value: attackerIban },
        ],
      }),
    );
    // The value the call types into the password field is masked where it stands, the other shown.
    assert.match(question, new RegExp(`«redacted».*${attackerIban}`, 's'), question);
  });

  test("the agent typing a piece of the page's password unmasks none of its copies (a form, a held post)", async () => {
    mcp.human.policy = () => ({ decision: 'approve' });
    await mcp.call('new_page', { url: site.url('typer.example', '/typer') });
    const typer = (await mcp.call('take_snapshot')).text;
    await mcp.call('fill', { ref: refOf(typer, 'Code'), value: autofilled.slice(4, 9) });
    mcp.human.policy = undefined;
    const snapshot = await open('/bank-encoded');
    const clicked = await mcp.call('click', { ref: refOf(snapshot, 'Sign in') });
    assert.match(clicked.text, /not_allowed: click was not asked about: .*"inside"/, clicked.text);
    const late = await open('/bank-late-encoded');
    mcp.human.will({ decision: 'approve' });
    mcp.human.policy = () => ({ decision: 'approve' });
    const questions = await askedDuring(() => mcp.call('click', { ref: refOf(late, 'Sign in') }));
    mcp.human.policy = undefined;
    assert.equal(questions.length, 1, `the click alone was asked: ${questions.join('\n----\n')}`);
    assert.deepEqual(posted('/collect'), []);
  });

  test("a snapshot masks the page's password in the forms the redactor knows (reversed, base64, spaced out)", async () => {
    const snapshot = await open('/bank-snap');
    const reversed = [...autofilled].reverse().join('');
    for (const form of [reversed, Buffer.from(autofilled).toString('base64'), [...autofilled].join('-')])
      assert.ok(!snapshot.includes(form), `${form} in:\n${snapshot}`);
    assert.match(snapshot, /rev •••• b64 ••••/, snapshot);
  });

  test('a recipient typed into a field marked as a one-time code shows in the form question', async () => {
    const snapshot = await open('/pay-otc');
    mcp.human.will({ decision: 'approve' });
    await mcp.call('fill', { ref: refOf(snapshot, 'Recipient'), value: attackerIban });
    mcp.human.will({ decision: 'reject' });
    const [question = ''] = await askedDuring(() => mcp.call('click', { ref: refOf(snapshot, 'Send') }));
    assert.match(question, new RegExp(`\\["to","${attackerIban}"\\]`), question);
    assert.deepEqual(posted('/transfer'), []);
  });

  test('a "show password" box ticked after a snapshot read the password: the login is asked as any other', async () => {
    const before = posted('/session').length;
    let snapshot = await open('/login-show');
    mcp.human.policy = () => ({ decision: 'approve' });
    await mcp.call('fill', { ref: refOf(snapshot, 'Password'), value: 'Correct-Horse-9' });
    snapshot = (await mcp.call('take_snapshot')).text;
    await mcp.call('click', { ref: refOf(snapshot, 'Show password') });
    const clicked = await mcp.call('click', { ref: refOf(snapshot, 'Sign in') });
    mcp.human.policy = undefined;
    assert.doesNotMatch(clicked.text, /not_allowed/, clicked.text);
    assert.equal(posted('/session').length, before + 1, clicked.text);
  });

  test('a login in a legacy charset goes with one yes, and its password is in no record', async () => {
    const sessions = posted('/session').length;
    const snapshot = await open('/bank-legacy');
    mcp.human.will({ decision: 'approve' });
    await mcp.call('fill', { ref: refOf(snapshot, 'Password'), value: legacyPassword });
    mcp.human.will({ decision: 'approve' });
    mcp.human.policy = () => ({ decision: 'reject' });
    const questions = await askedDuring(() => mcp.call('click', { ref: refOf(snapshot, 'Sign in') }));
    assert.equal(questions.length, 1, questions.join('\n----\n'));
    assert.deepEqual(
      posted('/session')
        .slice(sessions)
        .map((request) => request.body),
      ['user=alice&password=P%E4ssw%F6rd1234'],
    );
    assert.doesNotMatch(readFileSync(mcp.auditPath, 'utf8'), /P%E4ssw%F6rd1234|Pässwörd1234/);
  });
});

describe("upload_file never hands a page tabward's own files", { timeout: 120_000 }, () => {
  let site: Fixture;
  let mcp: McpUnderTest;
  let dir = '';

  before(async () => {
    site = await startFixture({
      '/upload': (_req, _body, res) =>
        html(
          res,
          '<title>Upload</title><form method="post" action="/u" enctype="multipart/form-data"><label>File <input type="file" name="f"></label><button>Send</button></form>',
        ),
    });
    dir = mkdtempSync(join(tmpdir(), 'tabward-own-files-'));
    const secrets = join(dir, 'secrets.env');
    writeFileSync(secrets, `API_TOKEN=${declared}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'cv.txt'), 'a file of the user\n');
    // Downloads kept in a folder that holds tabward's home (the home is made in the system's temporary folder).
    mcp = await startMcp({ args: ['--mode', 'isolated', '--secrets', secrets, '--output-dir', tmpdir()] });
  });
  after(async () => {
    await mcp?.close();
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('not the audit log or the secrets file, even with downloads kept in a folder that holds them', async () => {
    mcp.human.policy = () => ({ decision: 'approve' });
    await mcp.call('new_page', { url: site.url('upload.example', '/upload') });
    const form = (await mcp.call('take_snapshot')).text;
    for (const path of [mcp.auditPath, join(dir, 'secrets.env')]) {
      const uploaded = await mcp.call('upload_file', { ref: refOf(form, 'File'), paths: [path] });
      assert.match(
        uploaded.text,
        /not_allowed: upload_file refused: .* is one of tabward's own files/,
        uploaded.text,
      );
    }
    const own = await mcp.call('upload_file', { ref: refOf(form, 'File'), paths: [join(dir, 'cv.txt')] });
    assert.match(own.text, /Set 1 file\(s\) on .*cv\.txt/, own.text);
    mcp.human.policy = undefined;
  });
});
