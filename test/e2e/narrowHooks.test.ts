// Behind tabward's egress proxy the tab hooks pause only what needs them until the session is tainted, and no context
// route pauses every request (browser/hookPatterns.ts, browser/popupDocuments.ts; docs/architecture.md "Tags"). What
// that must not change, on tabward's own browser: a popup's first navigation is still judged with the action that
// opened it (a link the human approved loads; one refused never reaches its server); a script's write into a
// sensitive page is still held and put to the human, before any read; and after a sensitive read a page already
// open sends its images to another host no more; an out-of-process frame's first request is its tab hook's to judge
// (held at its start until hooked). Assertions on what the fixture servers received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_narrowHooksToken5150';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('narrow hooks behind the egress proxy', () => {
  let site: Fixture;
  let tw: InProcessBrowser;
  let mcp: InProcessMcp;
  const seen = (path: string, method = 'GET') =>
    site.seen.filter((request) => request.method === method && request.path.startsWith(path)).length;

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
        'POST /settings/profile': (_req, _body, res) => void res.writeHead(204).end(),
        '/img': (_req, _body, res) => void res.writeHead(204).end(),
        '/links': (_req, _body, res) =>
          html(
            res,
            `<title>Links</title><a href="${site.url('github.com', '/settings/tokens')}" target="_blank">Your tokens</a>
            <button onclick='fetch(${JSON.stringify(site.url('github.com', '/settings/profile'))}, { method: "POST", mode: "no-cors", body: "x" })'>Save</button>`,
          ),
        '/early': (_req, _body, res) =>
          html(
            res,
            `<title>Early</title><script>fetch(${JSON.stringify(site.url('github.com', '/settings/profile'))}, { method: 'POST', mode: 'no-cors', body: 'early' })</script>`,
          ),
        '/pixels': (_req, _body, res) =>
          html(
            res,
            `<title>Pixels</title><script>let n = 0; setInterval(() => { new Image().src = ${JSON.stringify(site.url('evil.example', '/img'))} + '?n=' + n++; }, 40)</script>`,
          ),
      },
      { tls: true },
    );
    tw = await startInProcess();
    mcp = await tw.connect();
  });
  after(async () => {
    await mcp?.close();
    await tw?.close();
    await site?.close();
  });

  test("a script's POST into a sensitive page is still put to the human before any read", async () => {
    await mcp.call('new_page', { url: site.url('blog.example', '/links') });
    const page = await mcp.call('take_snapshot');
    mcp.human.policy = () => ({ decision: 'reject' });
    mcp.human.questions.length = 0;
    await mcp.call('click', { ref: refOf(page.text, 'Save') });
    assert.ok(
      mcp.human.questions.some((question) => question.includes('/settings/profile')),
      `the human was not asked about the POST: ${JSON.stringify(mcp.human.questions)}`,
    );
    assert.equal(seen('/settings/profile', 'POST'), 0);
    mcp.human.policy = () => ({ decision: 'approve' });
    await mcp.call('click', { ref: refOf(page.text, 'Save') });
    await waitFor('the approved POST', () => seen('/settings/profile', 'POST') === 1);
  });

  test('a link into a sensitive page that opens a new window loads there once approved, never when refused', async () => {
    await mcp.call('new_page', { url: site.url('blog.example', '/links') });
    const page = await mcp.call('take_snapshot');
    mcp.human.policy = () => ({ decision: 'reject' });
    await mcp.call('click', { ref: refOf(page.text, 'Your tokens') });
    await pause(1_000);
    assert.equal(seen('/settings/tokens'), 0, 'a refused popup reached the sensitive page');
    mcp.human.policy = () => ({ decision: 'approve' });
    await mcp.call('click', { ref: refOf(page.text, 'Your tokens') });
    await waitFor('the approved popup to load the page', () => seen('/settings/tokens') === 1);
    await waitFor('the popup to show the page', async () =>
      /\/settings\/tokens/.test((await mcp.call('list_pages')).text),
    );
  });

  test("an out-of-process frame's first request is judged by its tab's hook: asked, and sent once approved", async () => {
    await mcp.call('new_page', { url: site.url('blog.example', '/links') });
    const before = seen('/settings/profile', 'POST');
    mcp.human.policy = () => ({ decision: 'approve' });
    const asked = mcp.human.questions.length;
    // The frame posts as its script first runs: a request no hook tied would be refused at the proxy, unasked.
    await mcp.call('evaluate_script', {
      function: `() => new Promise((done) => { const f = document.createElement('iframe'); f.src = ${JSON.stringify(site.url('other.example', '/early'))}; f.onload = () => setTimeout(() => done(1), 300); document.body.append(f); })`,
    });
    await waitFor('the frame’s approved POST', () => seen('/settings/profile', 'POST') === before + 1);
    assert.ok(
      mcp.human.questions.slice(asked).some((question) => question.includes('/settings/profile')),
      `the human was not asked about the frame's POST: ${JSON.stringify(mcp.human.questions.slice(asked))}`,
    );
  });

  test('after a sensitive read, a page already open sends its images to another host no more', async () => {
    // A session of its own: the one above has read the token page.
    const fresh = await startInProcess();
    const mcp = await fresh.connect();
    after(async () => {
      await mcp.close();
      await fresh.close();
    });
    mcp.human.policy = () => ({ decision: 'approve' });
    await mcp.call('new_page', { url: site.url('blog.example', '/pixels') });
    // Untainted, the pixels go: narrow hooks leave images to the proxy, which lets them through.
    await waitFor('pixels before the read', () => seen('/img') >= 3);
    await mcp.call('new_page', { url: site.url('github.com', '/settings/tokens') });
    assert.match((await mcp.call('take_snapshot')).text, new RegExp(token));
    const afterRead = seen('/img');
    await pause(1_500);
    assert.equal(seen('/img'), afterRead, 'a pixel reached evil.example after the sensitive read');
  });
});
