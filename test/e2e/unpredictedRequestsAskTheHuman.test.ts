// The network backstop holds and asks: every way an agent action can make a page send a request tabward did
// not predict (a script button, a key, a hover, a selection, a dialog answer, a script) into a sensitive page
// is held and put to the human with what it really is (method, host and path); refused, nothing arrives;
// approved, it arrives once. A request sent after its action returned is refused, with nobody to ask; a path rule
// protects its pages from the rest of their origin; in the user's Chrome the agent's tab is held the same way.
// Assertions are on what the fixture servers received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_holdToken5150';

/** Ways a click handler starts its request later than synchronously, by the button's name. */
const deferred: Record<string, (send: string) => string> = {
  'a timer of 0': (send) => `setTimeout(() => ${send}, 0)`,
  'a microtask': (send) => `queueMicrotask(() => ${send})`,
  'an animation frame': (send) => `requestAnimationFrame(() => ${send})`,
  'an effect after rendering': (send) => `requestAnimationFrame(() => setTimeout(() => ${send}, 0))`,
  'a message to itself': (send) =>
    `(() => { const c = new MessageChannel(); c.port1.onmessage = () => ${send}; c.port2.postMessage(1); })()`,
};

describe('requests an action did not predict are held for its human', () => {
  let gh: Fixture;
  let blog: Fixture;
  let mcp: McpUnderTest;
  // A CORS preflight (OPTIONS, no cookies, no body) is not a write: behind the proxy it reaches the site, as in any
  // browser (Playwright's route, no longer set there, answered preflights itself with a blanket yes). The site lets
  // other origins delete, so the script's DELETE is really attempted.
  const deletes = () =>
    gh
      .writes()
      .filter((request) => request.method !== 'OPTIONS' && request.path.startsWith('/settings/delete'));
  let target = '';

  before(async () => {
    gh = await startFixture(
      {
        '/settings/delete': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted'),
        'OPTIONS /settings/delete': (_req, _body, res) =>
          void res
            .writeHead(204, {
              'access-control-allow-origin': '*',
              'access-control-allow-methods': 'DELETE, POST',
            })
            .end(),
      },
      { tls: true },
    );
    target = JSON.stringify(gh.url('github.com', '/settings/delete'));
    const post = `fetch(${target}, { method: 'POST', mode: 'no-cors', body: 'x' }).catch(() => {})`;
    blog = await startFixture({
      '/tricks': (_req, _body, res) =>
        html(
          res,
          `<title>Tricks</title>
          <button onclick="${post.replaceAll('"', '&quot;')}">Like</button>
          <input aria-label="Search" onkeydown="if (event.key === 'Enter') ${post.replaceAll('"', '&quot;')}">
          <a href="#" onmouseover="navigator.sendBeacon(${target.replaceAll('"', '&quot;')}, 'x')">Hover me</a>
          <form method="post" action=${target}><select aria-label="Plan" onchange="this.form.submit()"><option>a</option><option>b</option></select></form>
          <button onclick="if (confirm('Sure?')) ${post.replaceAll('"', '&quot;')}">Ask</button>
          ${Object.entries(deferred)
            .map(
              ([name, wrap]) => `<button onclick="${wrap(post).replaceAll('"', '&quot;')}">${name}</button>`,
            )
            .join('\n')}`,
        ),
    });
    mcp = await startMcp({ args: ['--mode', 'isolated'] });
    await mcp.call('new_page', { url: blog.url('blog.example', '/tricks') });
  });
  after(async () => {
    await mcp?.close();
    await gh?.close();
    await blog?.close();
  });

  const ref = async (name: string) => refOf((await mcp.call('take_snapshot')).text, name);

  test('refused: a script button posting to a sensitive page sends nothing, and the human saw the real request', async () => {
    const asked = mcp.human.questions.length;
    const result = await mcp.call('click', { ref: await ref('Like') });
    assert.equal(deletes().length, 0);
    // On a loaded machine the page's request can reach the backstop just after the click returned: its human is
    // still asked (the action's attendant lingers), and the refusal is told with the next result in the tab.
    const question = await waitFor('the human asked about the POST', () => {
      const asking = mcp.human.questions.slice(asked).join('\n');
      return /Sends: POST github\.com:\d+\/settings\/delete/.test(asking) && asking;
    });
    assert.match(question, /did not predict/);
    // What tabward says, outside the page's own text.
    const said = (text: string) => text.replace(/<untrusted[\s\S]*?<\/untrusted>/g, '');
    if (!/settings\/delete/.test(said(result.text)))
      await waitFor('the refusal told with the next result in the tab', async () =>
        /after the previous action in this tab returned: .*settings\/delete/.test(
          said((await mcp.call('take_snapshot')).text),
        ),
      );
    assert.equal(deletes().length, 0);
  });

  // An action that set nothing off returns after one frame and task of the page (settle, RendererAnnouncements);
  // a request its handler started later than synchronously must still be the action's doing, held and asked.
  for (const name of Object.keys(deferred)) {
    test(`refused and asked: a button posting through ${name}`, async () => {
      await mcp.call('navigate_page', { url: blog.url('blog.example', '/tricks') });
      const asked = mcp.human.questions.length;
      const result = await mcp.call('click', { ref: await ref(name) });
      assert.equal(deletes().length, 0);
      const question = mcp.human.questions.slice(asked).join('\n');
      assert.match(question, /Sends: POST github\.com:\d+\/settings\/delete/, `${name}: ${result.text}`);
    });
  }

  test('approved: the held request goes through, once', async () => {
    mcp.human.will({ decision: 'approve' });
    try {
      const result = await mcp.call('click', { ref: await ref('Like') });
      await waitFor('the approved POST to arrive', () => deletes().length === 1).catch((error: Error) => {
        throw new Error(`${error.message}; the click said: ${result.text}`);
      });
      assert.ok(!result.isError, result.text);
      const audit = (await import('node:fs')).readFileSync(mcp.auditPath, 'utf8');
      assert.match(audit, /"held":\["POST github\.com:\d+\/settings\/delete: held .*approved/);
    } finally {
      // Whatever happened here, the tests after it start with nothing received and no answer of this one's left.
      gh.seen.length = 0;
      mcp.human.forget();
    }
  });

  for (const [how, act] of [
    ['a key press', async () => mcp.call('press_key', { ref: await ref('Search'), key: 'Enter' })],
    ['a hover', async () => mcp.call('hover', { ref: await ref('Hover me') })],
    ['a selection', async () => mcp.call('fill', { ref: await ref('Plan'), value: 'b' })],
    [
      'a dialog answer',
      async () => {
        const click = await mcp.call('click', { ref: await ref('Ask') });
        assert.match(click.text, /dialog/i);
        return mcp.call('handle_dialog', { action: 'accept' });
      },
    ],
    [
      'a script',
      async () =>
        mcp.call('evaluate_script', {
          function: `async () => { try { await fetch(${target}, { method: 'DELETE' }) } catch {} return 1 }`,
        }),
    ],
  ] as const) {
    test(`refused: ${how} that makes the page write to a sensitive page sends nothing`, async () => {
      await mcp.call('navigate_page', { url: blog.url('blog.example', '/tricks') });
      const questionsBefore = mcp.human.questions.length;
      const acted = await act();
      // A late request would still be seen: the server is asked again after the page had time to send.
      const next = await mcp.call('take_snapshot');
      assert.equal(deletes().length, 0, `${how} reached the server: ${JSON.stringify(deletes())}`);
      // Held and asked while the action ran; or, sent after it returned (a loaded machine), refused with nobody
      // to ask, and told with the next result in the tab. Never silent.
      const asked = /Sends: (POST|DELETE) github\.com:\d+\/settings\/delete/.test(
        mcp.human.questions.slice(questionsBefore).join('\n'),
      );
      const told = /(POST|DELETE) https:\/\/github\.com:\d+\/settings\/delete: .*nobody left to ask/.test(
        `${acted.text}\n${next.text}`,
      );
      assert.ok(asked || told, `${how}: the request was neither put to the human nor reported`);
    });
  }
});

describe('a request sent after its action returned', () => {
  let gh: Fixture;
  let blog: Fixture;
  let mcp: McpUnderTest;
  before(async () => {
    gh = await startFixture(
      { '/settings/delete': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted') },
      { tls: true },
    );
    blog = await startFixture({ '/plain': (_req, _body, res) => html(res, '<title>Plain</title>plain') });
    mcp = await startMcp({ args: ['--mode', 'isolated'] });
  });
  after(async () => {
    await mcp?.close();
    await gh?.close();
    await blog?.close();
  });

  test('is refused with nobody to ask, and the next result in the tab says so', async () => {
    await mcp.call('new_page', { url: blog.url('blog.example', '/plain') });
    const target = JSON.stringify(gh.url('github.com', '/settings/delete'));
    await mcp.call('evaluate_script', {
      function: `() => { setTimeout(() => fetch(${target}, { method: 'POST', mode: 'no-cors', body: 'x' }).catch(() => {}), 300); return 1 }`,
    });
    const next = await waitFor('the late POST to be reported', async () => {
      const snapshot = await mcp.call('take_snapshot');
      // Told with whichever result comes next in the tab (a snapshot running when it came says it too).
      return /POST https:\/\/github\.com:\d+\/settings\/delete: .*nobody left to ask/.test(snapshot.text)
        ? snapshot
        : undefined;
    });
    assert.ok(!next.isError, next.text);
    assert.deepEqual(gh.writes(), []);
  });
});

describe('a path rule protects its pages from the rest of the origin', () => {
  let gh: Fixture;
  let mcp: McpUnderTest;
  before(async () => {
    gh = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
        '/acme': (_req, _body, res) => html(res, '<title>acme</title>acme'),
        '/ran': (_req, _body, res) => html(res, 'ran'),
      },
      { tls: true },
    );
    mcp = await startMcp({ args: ['--mode', 'isolated'] });
  });
  after(async () => {
    await mcp?.close();
    await gh?.close();
  });

  test('a script on a plain page of github.com is judged by github.com/settings/*: it asks before it runs', async () => {
    await mcp.call('new_page', { url: gh.url('github.com', '/acme') });
    const asked = mcp.human.questions.length;
    const read = await mcp.call('evaluate_script', {
      function: `async () => { await fetch('/ran'); return (await fetch('/settings/tokens')).text() }`,
    });
    assert.ok(read.isError && read.text.startsWith('rejected:'), read.text);
    assert.doesNotMatch(read.text, new RegExp(token));
    assert.ok(!gh.seen.some((request) => request.path === '/ran'), 'the script ran before anyone said yes');
    assert.match(
      mcp.human.questions.at(asked) ?? '',
      /can reach its sensitive pages \(rule \*:\/\/github\.com\/settings\/\*\)/,
    );
  });

  test('a script that first moves its page elsewhere with pushState is still judged before it runs', async () => {
    await mcp.call('navigate_page', { url: gh.url('github.com', '/acme') });
    const asked = mcp.human.questions.length;
    const moved = await mcp.call('evaluate_script', {
      function: `() => { history.pushState(null, '', '/elsewhere'); fetch('/ran?moved=1'); return 1 }`,
    });
    assert.ok(moved.isError, moved.text);
    assert.equal(mcp.human.questions.length, asked + 1);
    assert.ok(!gh.seen.some((request) => request.path.startsWith('/ran')));
  });
});

describe("in the user's Chrome, the agent's tab is held the same way", () => {
  let gh: Fixture;
  let blog: Fixture;
  let chrome: UserChrome;
  const deletes = () => gh.writes().filter((request) => request.path.startsWith('/settings/delete'));
  before(async () => {
    gh = await startFixture(
      { '/settings/delete': (_req, _body, res) => html(res, '<title>Deleted</title>Deleted') },
      { tls: true },
    );
    const target = JSON.stringify(gh.url('github.com', '/settings/delete')).replaceAll('"', '&quot;');
    blog = await startFixture({
      '/like': (_req, _body, res) =>
        html(
          res,
          `<title>Like</title><button onclick="fetch(${target}, { method: 'POST', mode: 'no-cors', credentials: 'include' })">Like</button>`,
        ),
    });
    chrome = await startUserChrome({ chromeArgs: testChromeArgs });
  });
  after(async () => {
    await chrome?.close();
    await gh?.close();
    await blog?.close();
  });

  test("refused, the POST never leaves with the user's cookies; approved, it goes once", async () => {
    const mcp = await startMcp({ args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint] });
    try {
      // In the user's Chrome every write asks: the human allows the click, not the request it hides.
      mcp.human.policy = (message) =>
        /Sends: POST/.test(message) ? { decision: 'reject' } : { decision: 'approve' };
      await mcp.call('new_page', { url: blog.url('blog.example', '/like') });
      const like = refOf((await mcp.call('take_snapshot')).text, 'Like');
      const refused = await mcp.call('click', { ref: like });
      // Asked while the click runs, or just after it returned on a loaded machine (its attendant lingers).
      await waitFor('the human asked about the POST', () =>
        mcp.human.questions.some((question) =>
          /Sends: POST github\.com:\d+\/settings\/delete/.test(question),
        ),
      );
      assert.equal(deletes().length, 0, refused.text);
      mcp.human.policy = () => ({ decision: 'approve' });
      await mcp.call('click', { ref: like });
      await waitFor('the approved POST', () => deletes().length === 1);
    } finally {
      await mcp.close();
    }
  });
});
