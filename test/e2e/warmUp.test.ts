// The isolated headless browser starts while the model thinks (BrowserSession.warmUp, `tabward mcp` once the
// client has its tool list): the first call finds it and its first tab ready, new_page takes that blank tab rather
// than leaving it beside, a browser nobody used closes again without a word to the agent, and nothing else warms up
// (a window on the user's screen, the user's Chrome, a shutdown while it starts leaves nothing behind).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { BrowserSession } from '../../src/browser/session.ts';
import { startUserChrome } from '../../src/demo/yourChrome.ts';
import { type FakeModel, startFakeModel } from '../helpers/fakeModel.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import {
  assertNothingLeft,
  isAlive,
  makePlace,
  processesMentioning,
  removePlace,
  startIn,
} from '../helpers/lifecycle.ts';
import { startMcp } from '../helpers/mcpClient.ts';
import { runAgent } from '../helpers/runAgent.ts';
import { waitFor } from '../helpers/waitFor.ts';

/** Waits until the warm-up's blank tab is open in a session. */
const warmTabOf = (session: BrowserSession) =>
  waitFor('the warm tab', () => session.status().tabs.length === 1, { timeoutMs: 30_000 });

/** Waits until browser_status shows the warm-up's blank tab, selected. */
const warmTabShown = (tabward: { call: (name: string) => Promise<{ text: string }> }) =>
  waitFor(
    'the warm tab in browser_status',
    async () => /\*p1 \[agent\] about:blank/.test((await tabward.call('browser_status')).text),
    { timeoutMs: 30_000, intervalMs: 200 },
  );

const sessionWith = (overrides: { headless?: boolean; mode?: 'isolated' | 'shared' } = {}) =>
  new BrowserSession({
    mode: overrides.mode ?? 'isolated',
    headless: overrides.headless ?? true,
    chromeArgs: testChromeArgs,
    attach: {},
    attachTimeoutMs: 5_000,
    notify: () => undefined,
  });

describe('warming up the browser', () => {
  let site: Fixture;
  before(async () => {
    site = await startFixture({ '/': (_req, _body, res) => html(res, '<title>Home</title><h1>Home</h1>') });
  });
  after(() => site?.close());

  test('the first call finds the browser and its tab started; new_page takes the blank tab, once', async () => {
    const session = sessionWith();
    try {
      assert.equal(session.warmUp(60_000), true);
      assert.equal(session.warmUp(60_000), false, 'one warm-up');
      await warmTabOf(session);
      const [warm] = session.status().tabs;
      const first = await session.newPage();
      assert.equal(first.id, warm?.id, 'the warm tab, not a second one');
      assert.equal(session.pages.selected, first);
      const second = await session.newPage();
      assert.notEqual(second.id, first.id);
      assert.equal(session.status().tabs.length, 2);
    } finally {
      await session.close();
    }
  });

  test('a warm tab that crashed while it waited is not handed out: the first call gets a live tab', async () => {
    for (const firstCall of ['newPage', 'target'] as const) {
      const session = sessionWith();
      try {
        session.warmUp(60_000);
        await warmTabOf(session);
        const [warm] = session.pages.list();
        assert.ok(warm);
        // Its renderer gone (killed for memory, say): the tab still shows about:blank and is not closed.
        const cdp = await warm.page.context().newCDPSession(warm.page);
        void cdp.send('Page.crash').catch(() => undefined);
        await waitFor('the warm tab crashed', () => warm.crashed);
        const tab = await session[firstCall]();
        assert.notEqual(tab.id, warm.id, firstCall);
        assert.ok(warm.closed, 'the crashed warm tab closed, not left listed');
        await tab.page.goto(site.url('site.test', '/'), { timeout: 15_000 });
        assert.equal(await tab.page.title(), 'Home');
      } finally {
        await session.close();
      }
    }
  });

  test('a call during the warm start shares it: one browser, one tab', async () => {
    const session = sessionWith();
    try {
      session.warmUp(60_000);
      const tab = await session.target();
      await tab.page.goto(site.url('site.test', '/'), { timeout: 15_000 });
      assert.deepEqual(
        session.status().tabs.map((t) => t.url),
        [site.url('site.test', '/')],
      );
      // A warm tab the agent already navigated is not handed out again as new.
      const other = await session.newPage();
      assert.notEqual(other.id, tab.id);
    } finally {
      await session.close();
    }
  });

  test('a warm browser nobody used closes again, profile and all, and the agent is told nothing', async () => {
    const session = sessionWith();
    try {
      session.warmUp(300);
      await warmTabOf(session);
      const { pid, profile } = session.status();
      assert.ok(pid && profile);
      await waitFor('the unused browser closed', () => !session.status().started && !isAlive(pid), {
        timeoutMs: 20_000,
      });
      await waitFor('its profile removed', () => !existsSync(profile));
      // The next call starts a browser as before; nothing changed that the agent knew of.
      const tab = await session.target();
      assert.ok(session.status().started && !tab.closed);
      assert.deepEqual(session.takeNotices(), []);
    } finally {
      await session.close();
    }
  });

  test('shut down just as the unused warm browser closes: the shutdown waits for that close, profile and all', async () => {
    const session = sessionWith();
    let closed = false;
    try {
      session.warmUp(300);
      await warmTabOf(session);
      const { pid, profile } = session.status();
      assert.ok(pid && profile);
      await waitFor('the idle close begun', () => !session.status().started, {
        timeoutMs: 20_000,
        intervalMs: 5,
      });
      // tabward mcp exits once this resolves: a close still going on behind it would leave the browser or its
      // profile behind.
      await session.close();
      closed = true;
      assert.equal(isAlive(pid), false, 'the warm browser is gone');
      assert.equal(existsSync(profile), false, 'its profile is removed');
    } finally {
      if (!closed) await session.close();
    }
  });

  test('a warm browser that crashed before any call: the next call starts another, the agent is told nothing', async () => {
    const session = sessionWith();
    try {
      session.warmUp(60_000);
      await warmTabOf(session);
      const { pid } = session.status();
      assert.ok(pid);
      process.kill(pid, 'SIGKILL');
      await waitFor('the browser seen gone', () => !isAlive(pid) && !session.status().started, {
        timeoutMs: 20_000,
      });
      const tab = await session.target();
      assert.notEqual(session.status().pid, pid);
      assert.ok(!tab.closed);
      assert.deepEqual(session.takeNotices(), []);
    } finally {
      await session.close();
    }
  });

  test('a browser used before the idle time is never closed under the agent', async () => {
    const session = sessionWith();
    try {
      session.warmUp(300);
      const tab = await session.target();
      const { pid } = session.status();
      await new Promise((resolve) => setTimeout(resolve, 800));
      assert.ok(pid && isAlive(pid) && !tab.closed && session.status().started);
    } finally {
      await session.close();
    }
  });

  test('the user’s Chrome attached while the warm browser starts: it stays attached, the warm browser goes', async () => {
    const chrome = await startUserChrome({ chromeArgs: testChromeArgs });
    const session = sessionWith();
    const modes: string[] = [];
    session.onModeChange((mode) => modes.push(mode));
    try {
      assert.equal(session.warmUp(60_000), true);
      // Attaching to a Chrome already running is quicker than launching one: the warm start is still in flight.
      await session.attachShared({ wsEndpoint: chrome.wsEndpoint });
      // Installed after the attach, the warm browser took the agent back to isolated mode (where the guard lets it
      // close and script the user's tabs) while the user's Chrome stayed attached and its new tabs were tracked.
      await waitFor('the warm start landed', () => modes.includes('isolated'), { timeoutMs: 30_000 });
      assert.deepEqual(modes, ['isolated', 'shared']);
      assert.equal(session.mode, 'shared');
      const status = session.status();
      assert.equal(status.pid, undefined, 'the warm browser closed');
      assert.ok(
        status.tabs.length > 0 && status.tabs.every((tab) => tab.owner === 'user'),
        `no warm tab opened in the user's Chrome: ${JSON.stringify(status.tabs)}`,
      );
    } finally {
      await session.close();
      await chrome.close();
    }
  });

  test('no warm-up with a window (--headed) or in the user’s Chrome', async () => {
    for (const session of [sessionWith({ headless: false }), sessionWith({ mode: 'shared' })]) {
      try {
        assert.equal(session.warmUp(60_000), false);
        const status = session.status();
        assert.equal(status.started, false);
        assert.equal(status.pid, undefined, 'no browser launching either');
        assert.deepEqual(session.takeNotices(), [], 'no attach was tried');
      } finally {
        await session.close();
      }
    }
  });
});

describe('tabward mcp warms up once the tools are listed', () => {
  let site: Fixture;
  before(async () => {
    // TLS: github.com is on Chromium's HSTS preload list.
    site = await startFixture(
      {
        '/': (_req, _body, res) => html(res, '<title>Home</title><h1>Home</h1>'),
        '/settings/emails': (_req, _body, res) =>
          html(res, '<title>Emails</title><button>Add email</button>'),
      },
      { tls: true },
    );
  });
  after(() => site?.close());

  test('started after tools/list, its tab ready before the first call; the first navigate uses that tab', async () => {
    const place = makePlace();
    try {
      const tabward = await startIn(place);
      await tabward.client.listTools();
      await warmTabShown(tabward);
      const opened = await tabward.call('navigate_page', { url: site.url('site.test', '/') });
      assert.match(opened.text, /"Home"/);
      const pages = await tabward.call('list_pages');
      assert.equal(pages.text.split('\n').length, 1, pages.text);
      assert.match(pages.text, /^\*p1 \[agent\] https:\/\/site\.test:\d+\/ "Home"$/);
      await tabward.close();
      await assertNothingLeft(place);
    } finally {
      removePlace(place);
    }
  });

  test('new_page takes the warm tab: an approved sensitive page loads in it as in a tab opened by the call', async () => {
    const mcp = await startMcp();
    try {
      await mcp.client.listTools();
      await warmTabShown(mcp);
      mcp.human.will({ decision: 'approve' });
      const opened = await mcp.call('new_page', { url: site.url('github.com', '/settings/emails') });
      assert.equal(opened.isError, false, opened.text);
      // Loaded, not blocked by the backstop: the approval's pass covers the tab handed out during the call.
      assert.match(opened.text, /^Tab p1: \S+github\.com\S+\/settings\/emails "Emails"/m);
      assert.equal((await mcp.call('list_pages')).text.split('\n').length, 1);
    } finally {
      await mcp.close();
    }
  });

  test('a client gone while the warm browser starts leaves nothing behind', async () => {
    const place = makePlace();
    try {
      const tabward = await startIn(place);
      await tabward.client.listTools();
      await waitFor('a Chromium of this tabward', () => processesMentioning(place.tmp).length > 0, {
        timeoutMs: 30_000,
        intervalMs: 10,
      });
      await tabward.close();
      await waitFor('tabward exits', () => !isAlive(tabward.pid), { timeoutMs: 20_000 });
      await assertNothingLeft(place);
    } finally {
      removePlace(place);
    }
  });

  test('--no-warm-up: nothing starts until a call needs it', async () => {
    const place = makePlace();
    try {
      const tabward = await startIn(place, ['--no-warm-up']);
      await tabward.client.listTools();
      // The warm-up also runs a second after start for clients that never list the tools: wait past that.
      await new Promise((resolve) => setTimeout(resolve, 1_800));
      const status = await tabward.call('browser_status');
      assert.match(status.text, /mode: isolated \(not started\)/);
      assert.deepEqual(processesMentioning(place.tmp), []);
      await tabward.close();
      await assertNothingLeft(place);
    } finally {
      removePlace(place);
    }
  });
});

describe('tabward agent warms up while the model thinks', () => {
  let model: FakeModel;
  before(async () => {
    model = await startFakeModel();
  });
  after(() => model?.close());

  test('its browser starts before the model has answered the first question', async () => {
    const place = makePlace();
    try {
      let browserWhileThinking = false;
      model.thinking = async () => {
        browserWhileThinking = await waitFor(
          'a Chromium of this agent',
          () => processesMentioning(place.tmp).length > 0,
          { timeoutMs: 30_000 },
        ).then(
          () => true,
          () => false,
        );
      };
      model.answer('Nothing to browse.');
      const run = await runAgent(
        [...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]), '--mode', 'isolated', 'hello'],
        '',
        {
          ...place.env,
          OPENAI_API_KEY: 'sk-test',
          OPENAI_BASE_URL: model.baseURL,
          TABWARD_MODEL: 'openai:fake',
        },
      );
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Nothing to browse\./);
      assert.ok(browserWhileThinking, 'no browser started while the model thought');
      await assertNothingLeft(place);
    } finally {
      model.thinking = undefined;
      removePlace(place);
    }
  });
});
