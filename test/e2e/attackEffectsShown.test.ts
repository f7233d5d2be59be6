// An approval opens what its question shows, and only an action that does it by itself opens a write. Found by an
// attack review (each variant on a real tabward over a real Chromium, a human who refuses any question naming a
// deletion or a request tabward "did not predict", and approves the rest):
// - a button inside a link, whose form is a delete-account form: the question named only the link (a GET of the
//   profile), the approval's pass covered the form too, and the POST went; on another site's page and on
//   github.com itself;
// - a drag from a profile link onto a delete form's button, whose drop the page turns into a submission;
// - a hover, and a letter typed into a form's field, whose listeners submit the form: the approval of a hover or
//   a keystroke opened the form's write;
// - a link whose GET writes by its query (`/settings/sessions?revoke=all`): the question hid the query;
// - (a third review) that link pushed out of the question by a long form action before it, or its `revoke=all`
//   by a long query before it: the line was cut for display, and the pass still covered what was cut;
// - (a fourth) a sensitive page that showed another address of the site (history.replaceState): the question's
//   "Page:" line and the audit named only the address the page chose.
// Assertions are on what github.com received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

describe('what an approved action may write is what the human was shown, done by the action itself', () => {
  let site: Fixture;
  let tw: InProcessBrowser;
  let mcp: InProcessMcp | undefined;
  const url = (host: string, path: string) => site.url(host, path);
  const posts = (path: string) =>
    site.seen.filter(
      (request) =>
        request.host.startsWith('github.com:') && request.method === 'POST' && request.path.startsWith(path),
    );
  /** A fresh client whose human refuses deletions and unpredicted requests, and approves the rest. */
  const agent = async (): Promise<InProcessMcp> => {
    await mcp?.close();
    mcp = await tw.connect();
    mcp.human.policy = (message) => ({
      decision: /delete|did not predict/i.test(message) ? 'reject' : 'approve',
    });
    return mcp;
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_500));
  const deleteForm = (action: string) =>
    `<form id="f" method="post" action="${action}"><input type="hidden" name="confirm" value="yes"></form>`;
  /** A form posting the attacker's address to the emails settings, which the page submits on `event`. */
  const emailsFormOn = (event: string, control: string) =>
    `<title>Emails</title><form id="f" method="post" action="${url('github.com', '/settings/emails')}">
    <input type="hidden" name="email" value="attacker@evil.example">${control}</form>
    <script>document.getElementById('c').addEventListener('${event}', () => document.getElementById('f').submit(), { once: true });</script>`;

  before(async () => {
    site = await startFixture(
      {
        '/settings/profile': (_req, _body, res) => html(res, '<title>Profile</title><p>profile</p>'),
        '/settings/delete-account': (_req, _body, res) => html(res, '<title>Deleted</title><p>deleted</p>'),
        '/settings/emails': (_req, _body, res) => html(res, '<title>Saved</title><p>saved</p>'),
        '/settings/sessions': (_req, _body, res) => html(res, '<title>Sessions</title><p>sessions</p>'),
        '/long-form': (_req, _body, res) =>
          html(
            res,
            `<title>Promo</title><form id="f" method="get" action="${url('evil.example', `/promo/${'a'.repeat(1_100)}`)}"></form>
            <a id="l" href="${url('github.com', '/settings/sessions?revoke=all&confirm=yes')}"><button form="f">Open the promo</button></a>
            <script>document.getElementById('f').addEventListener('submit', (e) => { e.preventDefault(); location.href = document.getElementById('l').href; });</script>`,
          ),
        '/long-query': (_req, _body, res) =>
          html(
            res,
            `<title>Security</title><a href="${url('github.com', `/settings/sessions?utm=${'x'.repeat(1_100)}&revoke=all`)}">Review your active sessions</a>`,
          ),
        '/review': (_req, _body, res) =>
          html(
            res,
            `<title>Security</title><a href="${url('github.com', '/settings/sessions?revoke=all&confirm=yes')}">Review your active sessions</a>`,
          ),
        '/nested': (_req, _body, res) =>
          html(
            res,
            `<title>Promo</title>${deleteForm(url('github.com', '/settings/delete-account'))}
            <a href="${url('github.com', '/settings/profile')}"><button form="f">Open my profile settings</button></a>`,
          ),
        '/settings/nested': (_req, _body, res) =>
          html(
            res,
            `<title>Settings</title>${deleteForm('/settings/delete-account')}
            <a href="/settings/profile"><button form="f">Open my profile</button></a>`,
          ),
        '/drag': (_req, _body, res) =>
          html(
            res,
            `<title>Board</title><a id="card" draggable="true" href="${url('github.com', '/settings/profile')}">My profile card</a>
            <form id="f" method="post" action="${url('github.com', '/settings/delete-account')}"><input type="hidden" name="confirm" value="yes">
            <button id="zone" style="width:200px;height:80px">Archive</button></form>
            <script>
              zone.addEventListener('dragover', (e) => e.preventDefault());
              zone.addEventListener('drop', (e) => { e.preventDefault(); f.requestSubmit(zone); });
            </script>`,
          ),
        // A sensitive page that shows another address of the site (history.replaceState) before asking.
        '/settings/tokens': (_req, _body, res) =>
          html(
            res,
            `<title>Repository</title><script>history.replaceState(null, '', '/octocat/hello-world')</script>
            <form method="post" action="/settings/tokens/add"><button>Star</button></form>`,
          ),
        // The same, its button in a frame of its own making (about:blank), which has no address of its own.
        '/settings/keys': (_req, _body, res) =>
          html(
            res,
            `<title>Repository</title><script>history.replaceState(null, '', '/octocat/hello-world')</script>
            <iframe id="inner"></iframe>
            <script>inner.contentDocument.body.innerHTML = '<form method="post" action="/settings/keys/add"><button>Watch</button></form>'</script>`,
          ),
        '/hover': (_req, _body, res) =>
          html(res, emailsFormOn('mouseover', '<button id="c">Link my GitHub email</button>')),
        '/keys': (_req, _body, res) =>
          html(res, emailsFormOn('keydown', '<input id="c" aria-label="Nickname">')),
      },
      { tls: true },
    );
    tw = await startInProcess();
  });
  after(async () => {
    await mcp?.close();
    await tw?.close();
    await site?.close();
  });

  for (const [host, path, label] of [
    ['evil.example', '/nested', 'Open my profile settings'],
    ['github.com', '/settings/nested', 'Open my profile'],
  ] as const)
    test(`a button inside a link: the question names its form, and the deletion is refused (${host})`, async () => {
      const client = await agent();
      const before = posts('/settings/delete-account').length;
      await client.call('new_page', { url: url(host, path) });
      const snapshot = await client.call('take_snapshot');
      const asked = client.human.questions.length;
      // The button, shown under its link: the element the page made both.
      const button = new RegExp(`button ${label} @(e\\d+)`).exec(snapshot.text)?.[1];
      assert.ok(button, snapshot.text);
      await client.call('click', { ref: button });
      await settle();
      assert.match(
        client.human.questions.slice(asked).join('\n'),
        /form submit to github\.com:\d+\/settings\/delete-account/,
      );
      assert.equal(posts('/settings/delete-account').length, before, 'the deletion went unseen');
    });

  for (const [path, label] of [
    ['/settings/tokens', 'Star'],
    ['/settings/keys', 'Watch'],
  ] as const)
    test(`a page showing another address: the question and the audit say where its document was loaded from (${label})`, async () => {
      const client = await agent();
      await client.call('new_page', { url: url('github.com', path) });
      const snapshot = await client.call('take_snapshot');
      const asked = client.human.questions.length;
      await client.call('click', { ref: refOf(snapshot.text, label) });
      const question = client.human.questions.slice(asked).join('\n');
      const loaded = `\\(its document was loaded from https://github\\.com:\\d+${path}\\)`;
      assert.match(
        question,
        new RegExp(`Page: https://github\\.com:\\d+/octocat/hello-world ${loaded}`),
        question,
      );
      const record = client.audit().findLast((entry) => entry.tool === 'click' && 'decision' in entry);
      assert.match(JSON.stringify(record), new RegExp(`"loadedFrom":"https://github\\.com:\\d+${path}"`));
    });

  test('a link whose GET writes by its query shows the query, and a human who reads it refuses', async () => {
    const client = await agent();
    client.human.policy = (message) => ({ decision: /revoke/.test(message) ? 'reject' : 'approve' });
    await client.call('new_page', { url: url('evil.example', '/review') });
    const snapshot = await client.call('take_snapshot');
    const asked = client.human.questions.length;
    const click = await client.call('click', { ref: refOf(snapshot.text, 'Review your active sessions') });
    assert.ok(click.isError, click.text);
    assert.match(
      client.human.questions.slice(asked).join('\n'),
      /Sends: GET github\.com:\d+\/settings\/sessions\?revoke=all&confirm=yes/,
    );
    const revoked = site.seen.filter((request) => request.path.includes('revoke'));
    assert.deepEqual(revoked, [], 'the sessions were revoked');
  });

  for (const [path, label] of [
    ['/long-form', 'Open the promo'],
    ['/long-query', 'Review your active sessions'],
  ] as const)
    test(`what the question cut for length is not approved by it (${path.slice(1)})`, async () => {
      const client = await agent();
      client.human.policy = (message) => ({
        decision: /revoke|did not predict/.test(message) ? 'reject' : 'approve',
      });
      await client.call('new_page', { url: url('evil.example', path) });
      const snapshot = await client.call('take_snapshot');
      const target = new RegExp(`(?:button|link) ${label}[^\\n]*@(e\\d+)`).exec(snapshot.text)?.[1];
      assert.ok(target, snapshot.text);
      await client.call('click', { ref: target });
      await settle();
      const revoked = site.seen.filter((request) => request.path.includes('revoke'));
      assert.deepEqual(revoked, [], 'the sessions were revoked');
    });

  test('a drag onto a delete form opens no write: the submission the page makes of it is asked', async () => {
    const client = await agent();
    const before = posts('/settings/delete-account').length;
    await client.call('new_page', { url: url('evil.example', '/drag') });
    const snapshot = await client.call('take_snapshot');
    await client.call('drag', {
      fromRef: refOf(snapshot.text, 'My profile card'),
      toRef: refOf(snapshot.text, 'Archive'),
    });
    await settle();
    assert.equal(posts('/settings/delete-account').length, before, 'the deletion went unseen');
  });

  for (const [path, what, act] of [
    [
      '/hover',
      'hover',
      (client: InProcessMcp, snapshot: string) =>
        client.call('hover', { ref: refOf(snapshot, 'Link my GitHub email') }),
    ],
    [
      '/keys',
      'letter typed into a field',
      (client: InProcessMcp, snapshot: string) =>
        client.call('press_key', { key: 'a', ref: refOf(snapshot, 'Nickname') }),
    ],
  ] as const)
    test(`a ${what} opens no write: the form the page submits on it is asked`, async () => {
      const client = await agent();
      const before = posts('/settings/emails').length;
      await client.call('new_page', { url: url('evil.example', path) });
      const snapshot = await client.call('take_snapshot');
      const asked = client.human.questions.length;
      await act(client, snapshot.text);
      await settle();
      assert.equal(posts('/settings/emails').length, before, 'the attacker’s email was posted');
      assert.match(client.human.questions.slice(asked).join('\n'), /did not predict/);
    });
});
