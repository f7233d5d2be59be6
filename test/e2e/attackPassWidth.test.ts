// Passes no wider than the question (core/actionPasses.ts, core/approvedPass.ts): what the human approved opens
// the requests they saw, and a page that reacts to the approved action cannot spend that approval on something
// else. Found by an attack review after issue 37's eighth pass, each variant on a real tabward (in process) over a
// real Chromium, with a human who approves what the guard asks and refuses every request it "did not predict":
// - a link the human saw as a GET, which the page turns into a POST to the same address;
// - a link or a navigate_page the human approved, whose page sends the tab to another sensitive address of the site,
//   directly or through a redirector of its own on another site (a hop that lands in the approved site);
// - a form inside a cross-site frame the human approved, whose host page submits a form of its own to the same
//   address, into throwaway frames or into the approved frame itself by its name;
// - a POST form the human approved, whose page then sends the tab (a GET) to the form's address with a query of its
//   own (?delete_account=yes): from the answer to the post, a second later, or instead of the submission (a later
//   attack review; a form's address was a navigation of the pass, any query).
// And what the pass still lets through: the approved form, and the redirect that answers it.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

describe('an approval covers what the human saw, not what the page does with it', () => {
  let site: Fixture;
  let tw: InProcessBrowser;
  let mcp: InProcessMcp | undefined;
  const url = (host: string, path: string) => site.url(host, path);
  const received = (path: string, method?: string) =>
    site.seen.filter(
      (request) =>
        request.host.startsWith('github.com:') &&
        request.path.startsWith(path) &&
        (method === undefined || request.method === method),
    );
  /** A fresh client whose human approves the guard's questions and refuses whatever it did not predict. */
  const agent = async (): Promise<InProcessMcp> => {
    await mcp?.close();
    mcp = await tw.connect();
    mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    return mcp;
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_500));

  before(async () => {
    const emailsForm = `<title>Emails</title><form action="/settings/emails" method="post"><input name="email" value="me@example.com" aria-label="Email"><button>Save email</button></form>`;
    // A page of links into the site's settings, each turned into something else by a listener the agent never sees.
    const promo = (turn: string) =>
      `<title>Promo</title><p>Check your email settings</p>
      <a id="l" href="${url('github.com', '/settings/emails')}">Manage emails</a>
      <form id="f" method="post" action="${url('github.com', '/settings/emails')}"><input type="hidden" name="email" value="attacker@evil.example"></form>
      <script>document.addEventListener('click', (e) => { if (e.target.id === 'l') { e.preventDefault(); ${turn} } }, true)</script>`;
    // A host page framing the approved form, which submits its own form to the same address once the agent's click
    // moves the focus into the frame.
    const host = (target: string) =>
      `<title>Dashboard</title><p>Your GitHub email settings below</p>
      <iframe name="gh" src="${url('github.com', '/settings/emails')}" width="600" height="200"></iframe>
      <div id="sinks"></div>
      <form id="f" method="post" target="${target}" action="${url('github.com', '/settings/emails')}"><input type="hidden" name="email" value="attacker@evil.example"></form>
      <script>
        for (let i = 0; i < 20; i++) { const f = document.createElement('iframe'); f.name = 'sink' + i; f.style.cssText = 'width:1px;height:1px'; sinks.append(f); }
        let n = 0;
        const fire = () => { const f = document.getElementById('f'); if (f.target.startsWith('sink')) f.target = 'sink' + (n++ % 20); f.submit(); };
        addEventListener('blur', () => { fire(); const t = setInterval(fire, 60); setTimeout(() => clearInterval(t), 1200); });
      </script>`;
    site = await startFixture(
      {
        '/settings/emails': (req, _body, res) => {
          if (req.method === 'POST') return html(res, '<title>Saved</title><p>saved</p>');
          return html(res, emailsForm);
        },
        '/settings/delete-account': (_req, _body, res) => html(res, '<title>Deleted</title><p>deleted</p>'),
        '/settings/profile': (req, _body, res) => {
          if (req.method === 'POST') {
            res.writeHead(303, { location: '/settings/profile-saved' }).end();
            return;
          }
          return html(
            res,
            `<title>Profile</title><form method="post" action="/settings/profile"><input name="n" value="me" aria-label="Name"><button>Save profile</button></form>`,
          );
        },
        '/settings/profile-saved': (_req, _body, res) => html(res, '<title>Profile saved</title><p>done</p>'),
        '/settings/reauthed': (_req, _body, res) => html(res, '<title>Access confirmed</title><p>done</p>'),
        // An approved POST form whose page then sends the tab to the form's own address with a query of its own:
        // from the answer to the post, from a timer a second later, or instead of the submission it cancels.
        '/settings/account': (req, _body, res) => {
          const query = new URL(req.url ?? '/', 'https://x').search;
          const go = `location.href = '/settings/account?delete_account=yes';`;
          if (req.method === 'POST')
            return html(
              res,
              `<title>Saved</title><p>saved</p><script>${query.includes('later') ? `setTimeout(() => { ${go} }, 1000)` : go}</script>`,
            );
          if (query.includes('delete_account'))
            return html(res, '<title>Deleted</title><p>account deleted</p>');
          const action = query.includes('later') ? '/settings/account?later' : '/settings/account';
          const cancel = query.includes('cancel')
            ? `<script>document.forms[0].addEventListener('submit', (e) => { e.preventDefault(); ${go} })</script>`
            : '';
          return html(
            res,
            `<title>Account</title><form method="post" action="${action}"><input name="n" value="me" aria-label="Name"><button>Save account</button></form>${cancel}`,
          );
        },
        // A form of the site posting to a sign-in address of another site, whose answer redirects back into settings.
        '/settings/reauth': (_req, _body, res) =>
          html(
            res,
            `<title>Confirm</title><form method="post" action="${url('sso.example', '/login')}"><input name="u" value="me" aria-label="User"><button>Confirm access</button></form>`,
          ),
        '/login': (_req, _body, res) => {
          res.writeHead(303, { location: url('github.com', '/settings/reauthed?via=sso') }).end();
        },
        // A GET form into the site: its fields travel in the query, which the click's question did not show.
        '/settings/search': (req, _body, res) => {
          if (new URL(req.url ?? '/', 'https://x').search)
            return html(res, '<title>Results</title><p>results</p>');
          return html(
            res,
            `<title>Search</title><form action="/settings/search"><input name="q" value="keys" aria-label="Query"><button>Search settings</button></form>`,
          );
        },
        '/settings/notifications': (_req, _body, res) =>
          html(
            res,
            `<title>Notifications</title><script>location.replace(${JSON.stringify(url('github.com', '/settings/delete-account?confirm=yes'))})</script>`,
          ),
        '/promo-post': (_req, _body, res) => html(res, promo(`document.getElementById('f').submit();`)),
        '/promo-elsewhere': (_req, _body, res) =>
          html(
            res,
            promo(
              `location.href = ${JSON.stringify(url('github.com', '/settings/delete-account?confirm=yes'))};`,
            ),
          ),
        // A redirector of the attacker's own site, matching no rule: its answer is a hop into the approved site.
        '/r': (req, _body, res) => {
          res
            .writeHead(302, { location: new URL(req.url ?? '/', 'https://x').searchParams.get('to') ?? '/' })
            .end();
        },
        '/promo-laundered': (req, _body, res) => {
          const go = `location.href = ${JSON.stringify(`${url('evil.example', '/r')}?to=${encodeURIComponent(url('github.com', '/settings/delete-account?confirm=yes'))}`)};`;
          html(res, promo(req.url?.includes('later') ? `setTimeout(() => { ${go} }, 1000);` : go));
        },
        '/host-sinks': (_req, _body, res) => html(res, host('sink0')),
        '/host-named': (_req, _body, res) => html(res, host('gh')),
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

  test('a link seen as a GET is not a pass for a POST to its address', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('shop.example', '/promo-post') });
    const snapshot = await agentMcp.call('take_snapshot');
    await agentMcp.call('click', { ref: refOf(snapshot.text, 'Manage emails') });
    await settle();
    assert.match(agentMcp.human.questions.join('\n'), /GET github\.com[^\n]*\/settings\/emails/);
    assert.deepEqual(
      received('/settings/emails', 'POST').map((request) => request.body),
      [],
      'the page posted to the address of the link the human approved',
    );
  });

  test('an approved link does not open another sensitive address of the site to a script', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('shop.example', '/promo-elsewhere') });
    const snapshot = await agentMcp.call('take_snapshot');
    await agentMcp.call('click', { ref: refOf(snapshot.text, 'Manage emails') });
    await settle();
    assert.equal(received('/settings/delete-account').length, 0, 'the script sent the tab to delete-account');
  });

  for (const when of ['during the click', 'a second after it returned'] as const)
    test(`an approved link does not cover a redirect into the site that begins on another site (${when})`, async () => {
      const agentMcp = await agent();
      const page = when === 'during the click' ? '/promo-laundered' : '/promo-laundered?later';
      await agentMcp.call('new_page', { url: url('shop.example', page) });
      const snapshot = await agentMcp.call('take_snapshot');
      await agentMcp.call('click', { ref: refOf(snapshot.text, 'Manage emails') });
      await settle();
      assert.equal(received('/settings/delete-account').length, 0, 'the redirect landed on delete-account');
    });

  test('an approved navigate_page does not open another sensitive address to the page it loads', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('shop.example', '/promo-post') });
    await agentMcp.call('navigate_page', { url: url('github.com', '/settings/notifications') });
    await settle();
    assert.equal(received('/settings/notifications').length, 1, 'the approved navigation did not happen');
    assert.equal(received('/settings/delete-account').length, 0, 'the page sent the tab to delete-account');
  });

  for (const [how, path] of [
    ['into throwaway frames of its own', '/host-sinks'],
    ['into the approved frame, by its name', '/host-named'],
  ] as const)
    test(`an approved form in a frame: the host page's own form to the same address, ${how}, does not spend it`, async () => {
      const agentMcp = await agent();
      const posted = () => received('/settings/emails', 'POST').map((request) => request.body);
      const before = posted().length;
      await agentMcp.call('new_page', { url: url('shop.example', path) });
      await settle();
      const snapshot = await agentMcp.call('take_snapshot');
      await agentMcp.call('click', { ref: refOf(snapshot.text, 'Save email') });
      await settle();
      const bodies = posted().slice(before);
      assert.ok(
        bodies.every((body) => !body.includes('attacker')),
        `the host page's form went: ${JSON.stringify(bodies)}`,
      );
      if (path === '/host-sinks')
        assert.deepEqual(bodies, ['email=me%40example.com'], 'the form the human approved did not go');
    });

  for (const [how, page] of [
    ['from the answer to the post', '/settings/account'],
    ['from a timer a second after the post', '/settings/account?later'],
    ['instead of the submission it cancels', '/settings/account?cancel'],
  ] as const)
    test(`an approved POST form opens no GET to its address with the page's own query (${how})`, async () => {
      const agentMcp = await agent();
      await agentMcp.call('new_page', { url: url('github.com', page) });
      const snapshot = await agentMcp.call('take_snapshot');
      await agentMcp.call('click', { ref: refOf(snapshot.text, 'Save account') });
      await settle();
      assert.equal(
        site.seen.filter((request) => request.path.includes('delete_account')).length,
        0,
        'the page sent the tab to the form address with its own query',
      );
      if (!page.includes('cancel'))
        assert.equal(received('/settings/account', 'POST').length > 0, true, 'the approved form did not go');
    });

  test('a GET form into the site is asked on its own, showing the query its fields make', async () => {
    const agentMcp = await agent();
    agentMcp.human.policy = () => ({ decision: 'approve' });
    await agentMcp.call('new_page', { url: url('github.com', '/settings/search') });
    const snapshot = await agentMcp.call('take_snapshot');
    const asked = agentMcp.human.questions.length;
    const click = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Search settings') });
    assert.ok(!click.isError, click.text);
    const questions = agentMcp.human.questions.slice(asked).join('\n---\n');
    assert.match(questions, /\/settings\/search\?q=keys/, 'no question showed the query the form sent');
    assert.equal(received('/settings/search?q=keys').length, 1, 'the approved search did not go');
  });

  test('the approved form posting to another site is followed by the redirect back into the site', async () => {
    const agentMcp = await agent();
    // What was read on github.com may go to the sign-in site (a question of its own); the hop back is the pass's.
    agentMcp.human.policy = (message) => ({ decision: /reauthed/.test(message) ? 'reject' : 'approve' });
    await agentMcp.call('new_page', { url: url('github.com', '/settings/reauth') });
    const snapshot = await agentMcp.call('take_snapshot');
    const click = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Confirm access') });
    assert.ok(!click.isError, click.text);
    assert.equal(
      received('/settings/reauthed?via=sso').length,
      1,
      'the redirect answering it was not followed',
    );
  });

  test('the approved form still goes, and the redirect that answers it is followed', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/settings/profile') });
    const snapshot = await agentMcp.call('take_snapshot');
    const click = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Save profile') });
    assert.ok(!click.isError, click.text);
    assert.equal(received('/settings/profile', 'POST').length, 1, 'the approved form did not go');
    assert.equal(received('/settings/profile-saved').length, 1, 'the redirect answering it was not followed');
  });
});
