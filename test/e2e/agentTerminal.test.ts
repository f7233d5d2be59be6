// The interactive agent in a real terminal: tmux runs `tabward agent` in a pseudo-terminal, send-keys types as a
// person would, capture-pane reads the screen. The approval prompt and the slash commands, end to end.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeModel, startFakeModel } from '../helpers/fakeModel.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { binPath } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const session = `tabward-test-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', session);

async function shows(pattern: RegExp, what: string): Promise<void> {
  await waitFor(`the screen to show ${what}`, () => pattern.test(screen()), { intervalMs: 100 }).catch(
    (error: unknown) => {
      throw new Error(`${String(error)}:\n${screen()}`);
    },
  );
}

function type(text: string): void {
  tmux('send-keys', '-t', session, '-l', text);
  tmux('send-keys', '-t', session, 'Enter');
}

describe('tabward agent in a terminal', { timeout: 120_000 }, () => {
  let model: FakeModel;
  let shop: Fixture;
  before(async () => {
    model = await startFakeModel();
    shop = await startFixture({
      '/settings': (_req, _body, res) =>
        html(res, '<title>Shop settings</title><form method="post"><button>Delete shop</button></form>'),
    });
    const home = mkdtempSync(join(tmpdir(), 'tabward-tty-'));
    writeFileSync(join(home, 'rules.txt'), '*://shop.test/settings/*\n');
    const chromeArgs = testChromeArgs.map((arg) => `--chrome-arg '${arg}'`).join(' ');
    const script = join(home, 'agent.sh');
    writeFileSync(
      script,
      [
        `export TABWARD_HOME='${home}' OPENAI_API_KEY=sk-test OPENAI_BASE_URL='${model.baseURL}' TABWARD_MODEL=openai:fake`,
        `'${process.execPath}' '${binPath}' agent --mode isolated --rules '${join(home, 'rules.txt')}' ${chromeArgs}`,
        'echo "agent exited $?"; sleep 60',
      ].join('\n'),
    );
    tmux('new-session', '-d', '-s', session, '-x', '160', '-y', '50', `sh ${script}`);
  });
  after(async () => {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      // already gone
    }
    await Promise.all([model?.close(), shop?.close()]);
  });

  test('the approval prompt and slash commands work as typed', async () => {
    await shows(/you> $/m, 'the prompt');
    model.reply(
      { tool: 'new_page', args: { url: shop.url('shop.test', '/settings') } },
      { tool: 'take_snapshot', args: {} },
      {
        tool: 'click',
        args: (conversation) => ({ ref: /Delete shop @(e\d+)/.exec(conversation)?.[1] ?? 'e0' }),
      },
      'I left the shop alone.',
    );
    type('delete my shop');
    await shows(/approval needed: new_page[\s\S]*\[y\] approve/, 'the navigation question');
    type('y');
    await shows(
      /approval needed: click on button "Delete shop" {2}⚠ SENSITIVE PAGE[\s\S]*\[n\] reject/,
      'the sensitive write question',
    );
    assert.doesNotMatch(screen().split('click on button')[1] ?? '', /\[a\] approve all/);
    type('maybe');
    await shows(/Unknown choice "maybe"/, 'the re-ask on unknown input');
    type('n');
    await shows(/Reason for the agent/, 'the reason question');
    type('not today');
    await shows(/I left the shop alone\./, 'the answer');
    assert.deepEqual(shop.writes(), []);
    type('/browser status');
    await shows(/mode: isolated[\s\S]*approver: /, 'the status');
    type('/help');
    await shows(/\/browser disconnect/, 'the help');
    type('/exit');
    await shows(/agent exited 0/, 'a clean exit');
  });
});
