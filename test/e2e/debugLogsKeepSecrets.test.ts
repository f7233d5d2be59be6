// Playwright's debug logs never carry what tabward types (bin/debugLogs.mjs). A user debugging a launch sets
// DEBUG=* or DEBUG=pw:*; Playwright would then print every call and CDP message on stderr or into DEBUG_FILE,
// `fill("<the password>")` and `Input.insertText` among them, outside the audit's redaction.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { runCli } from '../helpers/runCli.ts';

let site: Fixture;
const home = mkdtempSync(join(tmpdir(), 'tabward-debug-logs-'));
const secrets = join(home, 'secrets.env');
const password = 'hunter22-debug-logs';
const recipe = join(home, 'login.json');

before(async () => {
  site = await startFixture({
    '/login': (_req, _body, res) =>
      html(
        res,
        `<title>Sign in</title><input name="password" type="password" aria-label="Password"><p id="ok">ok</p>`,
      ),
  });
  writeFileSync(secrets, `LOGIN_PASSWORD=${password}\n`, { mode: 0o600 });
  writeFileSync(
    recipe,
    JSON.stringify({
      version: 1,
      name: 'Sign in',
      url: site.url('127.0.0.1', '/login'),
      steps: [{ action: 'type', selector: 'input[name=password]', secret: 'LOGIN_PASSWORD' }],
      extract: { fields: { ok: '#ok' } },
    }),
  );
});

after(async () => {
  await site?.close();
});

for (const debug of ['*', 'pw:*', 'pw:api,pw:channel,pw:protocol']) {
  test(`DEBUG=${debug}: the typed password is on no log, and the user is told why those logs stay off`, async () => {
    const file = join(home, `debug-${debug.replace(/[^a-z]/g, '_')}.log`);
    const result = await runCli(['run', recipe, '--secrets', secrets], {
      TABWARD_HOME: home,
      DEBUG: debug,
      DEBUG_FILE: file,
    });
    assert.equal(result.code, 0, `${result.stderr}\n${result.stdout}`);
    assert.equal(result.json?.data?.ok, 'ok', result.stdout);
    assert.ok(
      !result.stderr.includes(password),
      `the password reached stderr:\n${result.stderr.slice(0, 2000)}`,
    );
    const logged = existsSync(file) ? readFileSync(file, 'utf8') : '';
    assert.ok(!logged.includes(password), `the password reached DEBUG_FILE:\n${logged.slice(0, 2000)}`);
    assert.match(result.stderr, /Playwright's api, channel, protocol and server logs stay off/);
  });
}

test('DEBUG naming only other programs leaves tabward silent about it', async () => {
  const result = await runCli(['run', recipe, '--secrets', secrets], {
    TABWARD_HOME: home,
    DEBUG: 'express:*',
  });
  assert.equal(result.code, 0, `${result.stderr}\n${result.stdout}`);
  assert.doesNotMatch(result.stderr, /logs stay off/);
});
