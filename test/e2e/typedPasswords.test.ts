// A password the agent types as a literal (not a declared secret) is a secret all the same (issue 32, defect 1):
// fill and fill_form into a password field, an autocomplete password field and a one-time-code field leave the
// value out of the audit log, `tabward audit --recipe` (a PASSWORD / ONE_TIME_CODE placeholder instead), the
// approval question and every later result; a plain text field's value is recorded as before.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';

const passwords = {
  typed: 'typed-Pw-8101',
  autocomplete: 'autocomplete-Pw-8102',
  code: '830417',
  formPassword: 'form-Pw-8103',
  capitals: 'capitals-Pw-8104',
  sensitive: 'sensitive-Pw-8105',
};
const plain = 'plain-login-8106';

const form = `<title>Sign in</title><form method="post" action="/session">
  <label>User <input name="user"></label>
  <label>Password <input name="password" type="password"></label>
  <label>Passphrase <input name="phrase" autocomplete="current-password"></label>
  <label>Code <input name="otp" inputmode="numeric" autocomplete="one-time-code"></label>
  <label>Secret word <input name="word" type="PASSWORD"></label>
  <label>Memorable word <input name="memorable" onfocus="this.type = 'password'"></label>
  <button>Sign in</button></form>`;

let site: Fixture;
let mcp: McpUnderTest;
before(async () => {
  site = await startFixture(
    {
      'GET /login': (_req, _body, res) => html(res, form),
      'GET /settings/password': (_req, _body, res) =>
        html(
          res,
          '<title>Change</title><label>New password <input type="password" autocomplete="new-password"></label>',
        ),
    },
    { tls: true },
  );
  mcp = await startMcp({ args: ['--mode', 'isolated'] });
});
after(async () => {
  await mcp?.close();
  await site?.close();
});

/** A tool call that must succeed: its text. */
async function call(tool: string, args: object): Promise<string> {
  const result = await mcp.call(tool, args as Record<string, unknown>);
  assert.ok(!result.isError, result.text);
  return result.text;
}

test('a literal typed into a password-like field never reaches the audit log, the recipe or a result', async () => {
  await call('new_page', { url: site.url('intranet.example', '/login') });
  const page = await call('take_snapshot', {});
  const outputs = [
    await call('fill', { ref: refOf(page, 'Password'), value: passwords.typed }),
    await call('fill', { ref: refOf(page, 'Passphrase'), value: passwords.autocomplete }),
    await call('fill_form', {
      fields: [
        { ref: refOf(page, 'User'), value: plain },
        { ref: refOf(page, 'Code'), value: passwords.code },
        { ref: refOf(page, 'Secret word'), value: passwords.capitals },
      ],
    }),
    await call('take_snapshot', {}),
    await call('browser_status', {}),
  ];
  // A password field on a sensitive page: the human is asked, and the question shows it masked too.
  mcp.human.policy = () => ({ decision: 'approve' });
  await call('new_page', { url: site.url('github.com', '/settings/password') });
  const change = await call('take_snapshot', {});
  outputs.push(await call('fill', { ref: refOf(change, 'New password'), value: passwords.sensitive }));
  const questions = mcp.human.questions.join('\n');
  assert.match(questions, /Arguments: /, 'the human was asked about the fill');

  const audit = readFileSync(mcp.auditPath, 'utf8');
  const recipe = await runCli(['audit', '--recipe'], { TABWARD_HOME: mcp.home });
  assert.equal(recipe.code, 0, recipe.stderr);
  for (const [name, value] of Object.entries(passwords)) {
    assert.ok(!audit.includes(value), `${name}: in the audit log`);
    assert.ok(!recipe.stdout.includes(value), `${name}: in the recipe`);
    assert.ok(!questions.includes(value), `${name}: in the question`);
    for (const output of outputs) assert.ok(!output.includes(value), `${name}: in a result: ${output}`);
  }
  // What the recipe types instead: a placeholder to declare, never the value; the plain field keeps its text.
  const steps = (recipe.json as { steps: { action: string; text?: string; secret?: string }[] }).steps;
  assert.deepEqual(
    steps.filter((step) => step.action === 'type').map((step) => step.secret ?? step.text),
    ['PASSWORD', 'PASSWORD', plain, 'ONE_TIME_CODE', 'PASSWORD', 'PASSWORD'],
  );
  assert.ok(audit.includes(plain), 'a plain field is recorded as typed');
});

test('a password typed key by key (press_key) is masked in the audit log and left out of the recipe', async () => {
  await call('new_page', { url: site.url('intranet.example', '/login') });
  const page = await call('take_snapshot', {});
  // By ref into the password field, then on the focus into the autocomplete one; a plain field keeps its keys.
  // Keys by Playwright's names type characters too (KeyS, Digit1, Space).
  for (const key of ['K', 'Shift+Z', 'KeyS', 'Digit1', 'Space'])
    await call('press_key', { ref: refOf(page, 'Password'), key });
  await call('press_key', { ref: refOf(page, 'Passphrase'), key: 'q' });
  for (const key of ['7', 'x']) await call('press_key', { key });
  // A field the page makes a password field only as it takes the focus: judged where the key landed.
  await call('press_key', { ref: refOf(page, 'Memorable word'), key: 'm' });
  await call('press_key', { ref: refOf(page, 'User'), key: 'u' });
  await call('press_key', { key: 'Tab' });

  const pressed = readFileSync(mcp.auditPath, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"tool":"press_key"') && line.includes('"args"'))
    .map((line) => (JSON.parse(line) as { args: { key: string } }).args.key);
  assert.deepEqual(
    pressed,
    [...Array.from({ length: 9 }, () => '«redacted»'), 'u', 'Tab'],
    'the keys the audit kept',
  );
  const recipe = await runCli(['audit', '--recipe'], { TABWARD_HOME: mcp.home });
  assert.equal(recipe.code, 0, recipe.stderr);
  const steps = (recipe.json as { steps: { action: string; key?: string }[] }).steps;
  assert.deepEqual(
    steps.filter((step) => step.action === 'press').map((step) => step.key),
    ['u', 'Tab'],
    'the keys the recipe presses',
  );
});
