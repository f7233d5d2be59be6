// `tabward agent` against a local fake model server speaking OpenAI's streaming protocol with tool calls, and
// approvals answered on the agent's standard input: the login-wall switch to "your Chrome", a sensitive write
// rejected with a reason, slash commands, and no model at all.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type FakeModel, startFakeModel } from '../helpers/fakeModel.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { loginHost, startLoginSite } from '../helpers/loginSite.ts';
import { runAgent } from '../helpers/runAgent.ts';

describe('tabward agent', () => {
  let model: FakeModel;
  let site: Fixture;
  let shop: Fixture;
  let chrome: UserChrome;
  const home = mkdtempSync(join(tmpdir(), 'tabward-agent-'));
  before(async () => {
    model = await startFakeModel();
    site = await startLoginSite();
    shop = await startFixture({
      '/settings': (_req, _body, res) =>
        html(res, '<title>Shop settings</title><form method="post"><button>Delete shop</button></form>'),
    });
    chrome = await startUserChrome({
      chromeArgs: testChromeArgs,
      login: { url: site.url(loginHost, '/login'), username: 'alice', password: 'pw-alice' },
    });
  });
  after(async () => {
    await chrome?.close();
    await Promise.all([model?.close(), site?.close(), shop?.close()]);
  });

  const modelEnv = () => ({
    TABWARD_HOME: home,
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: model.baseURL,
    TABWARD_MODEL: 'openai:fake',
  });
  const chromeArgs = testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]);
  const agent = (args: string[], stdin: string, env: Record<string, string> = {}) =>
    runAgent([...chromeArgs, ...args], stdin, { ...modelEnv(), ...env });

  test('without a model key it says how to set one', async () => {
    const run = await agent(['hello'], '', { OPENAI_API_KEY: '', TABWARD_MODEL: '' });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /needs a model\. Set ANTHROPIC_API_KEY, or OPENAI_API_KEY/);
  });

  test("one shot: a login wall, one confirmation, and the answer comes from the user's logged-in Chrome", async () => {
    model.reply(
      { tool: 'new_page', args: { url: site.url(loginHost, '/private') } },
      { tool: 'take_snapshot', args: {} },
      'The plan is to launch in May.',
    );
    const run = await agent(
      ['--mode', 'auto', '--user-data-dir', chrome.userDataDir, 'what is the secret plan?'],
      '\ny\n',
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /The plan is to launch in May\./);
    assert.match(run.stderr, /approval needed: browser_connect/);
    // What a yes hands over is said whole, and a stray Enter does not give it (any page can look like a login wall).
    assert.match(
      run.stderr,
      /for this page and every page the agent opens after it \(until you disconnect\)/,
    );
    assert.match(run.stderr, /hands the agent your own Chrome and its logins: Enter alone does not approve/);
    assert.match(run.stderr, /\[tokens: \d+ in, \d+ out/);
    const lastRequest = JSON.stringify(model.requests.at(-1)?.body);
    assert.match(
      lastRequest,
      /Secret plan: launch in May/,
      "the model read the private page through the user's login",
    );
    assert.match(lastRequest, /Switched to your Chrome/);
  });

  test('a sensitive write is asked in the terminal, rejected with a reason, and the agent carries on', async () => {
    const rules = join(home, 'rules.txt');
    writeFileSync(rules, '*://shop.test/settings/*\n');
    model.reply(
      { tool: 'new_page', args: { url: shop.url('shop.test', '/settings') } },
      { tool: 'take_snapshot', args: {} },
      {
        tool: 'click',
        args: (conversation) => ({ ref: /Delete shop @(e\d+)/.exec(conversation)?.[1] ?? 'e0' }),
      },
      'I did not delete the shop: you said no.',
    );
    const run = await agent(['--mode', 'isolated', '--rules', rules, 'delete my shop'], 'y\nn\nnot today\n');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /approval needed: click on button "Delete shop" {2}⚠ SENSITIVE PAGE/);
    assert.doesNotMatch(
      run.stderr.split('click on button')[1] ?? '',
      /\[a\] approve all/,
      'no approve-all on sensitive pages',
    );
    assert.match(JSON.stringify(model.requests.at(-1)?.body), /rejected: The user rejected click: not today/);
    assert.deepEqual(shop.writes(), []);
  });

  test("a model's text and its tool calls' arguments cannot repaint the terminal the human answers in", async () => {
    // A prompt-injected model clears the screen, draws a harmless question of its own and sets a scroll region so
    // that the real question scrolls out of sight (an attack review did so and a "y" deleted a shop); a tool call's
    // arguments carry what JSON leaves as it is (C1 CSI, a line separator).
    const paint =
      '\u001b[H\u001b[2J\u001b]0;all clear\u0007── approval needed: click on "Save draft"\r\u001b[9;10r\u001b[9;1H';
    model.reply(
      { tool: 'list_pages', args: { note: '\u009b2J\u2028forged line' } },
      `${paint}Saved as a draft.`,
    );
    const run = await agent(['--mode', 'isolated', 'save my settings as a draft'], '');
    assert.equal(run.code, 0, run.stderr);
    for (const [stream, printed] of [
      ['stdout', run.stdout],
      ['stderr', run.stderr],
    ] as const) {
      const raw = [...printed].find(
        (char) => /[\p{Cc}\p{Zl}\p{Zp}]/u.test(char) && char !== '\n' && char !== '\t',
      );
      assert.equal(raw, undefined, `${stream} carries a raw control character: ${JSON.stringify(raw)}`);
    }
    assert.match(run.stdout, /<U\+001B>\[H<U\+001B>\[2J.*Saved as a draft\./, 'shown, as marks');
    assert.match(run.stderr, /→ list_pages .*<U\+009B>2J<U\+2028>forged line/);
  });

  test('/browser connect and disconnect go through the guard and the audit log', async () => {
    const port = new URL(chrome.wsEndpoint).port;
    const run = await agent(
      ['--mode', 'isolated'],
      `/browser connect ${port}\n/browser tabs\n/browser disconnect\n/audit\n/exit\n`,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Connected to your Chrome/);
    assert.match(run.stdout, /\[user\]/, "the user's tabs are listed as theirs");
    assert.match(
      run.stdout,
      /Detached; your Chrome and your own tabs are untouched, the agent's tabs there were closed/,
    );
    assert.match(run.stdout, /browser_connect .*terminal \(typed by the user\): approve ok/);
  });

  test('slash commands in a conversation; end of input ends it', async () => {
    const run = await agent(['--mode', 'isolated'], '/help\n/browser status\n/browser tabs\n/audit\n/exit\n');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\/browser connect \[port\|url\]/);
    assert.match(run.stdout, /mode: isolated/);
    assert.match(run.stdout, /approve-all grants: none/);
  });
});
