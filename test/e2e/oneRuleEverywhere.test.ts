// One guard for every front end: a single user rule (`--rules`) marks a fixture's /vault/* sensitive, and the same
// decision reaches `tabward mcp`, `tabward agent` and `tabward run` (and relay site calls: webmcpRelayGuard runs
// with a --rules file too). Without the rule each of these would go through; with it, none reaches /vault.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeModel, startFakeModel } from '../helpers/fakeModel.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { startMcp } from '../helpers/mcpClient.ts';
import { runAgent } from '../helpers/runAgent.ts';
import { runCli } from '../helpers/runCli.ts';

describe('one rule, every front end', () => {
  const home = mkdtempSync(join(tmpdir(), 'tabward-one-rule-'));
  const rules = join(home, 'rules.txt');
  let site: Fixture;
  let model: FakeModel;
  const vaultHits = () => site.seen.filter((request) => request.path.startsWith('/vault')).length;
  before(async () => {
    site = await startFixture({
      '/': (_req, _body, res) => html(res, '<title>Home</title>home'),
      '/vault/open': (_req, _body, res) => html(res, '<title>Vault</title>vault'),
    });
    model = await startFakeModel();
    writeFileSync(rules, `*://vault-owner.example/vault/*   # the one rule this test adds\n`);
  });
  after(async () => {
    await Promise.all([site?.close(), model?.close()]);
  });

  test('mcp: opening the ruled page asks', async () => {
    const mcp = await startMcp({ args: ['--mode', 'isolated', '--rules', rules] });
    try {
      const opened = await mcp.call('new_page', { url: site.url('vault-owner.example', '/vault/open') });
      assert.ok(opened.isError && opened.text.startsWith('rejected:'), opened.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /vault-owner\.example\/vault/);
      assert.equal(vaultHits(), 0);
    } finally {
      await mcp.close();
    }
  });

  test('agent: the same navigation asks in the terminal', async () => {
    model.reply(
      { tool: 'new_page', args: { url: site.url('vault-owner.example', '/vault/open') } },
      'Refused.',
    );
    const run = await runAgent(
      [
        '--mode',
        'isolated',
        '--rules',
        rules,
        ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]),
        'open the vault',
      ],
      'n\n\n',
      {
        TABWARD_HOME: home,
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: model.baseURL,
        TABWARD_MODEL: 'openai:fake',
      },
      home,
    );
    assert.match(run.stdout + run.stderr, /vault-owner\.example\/vault/);
    assert.match(JSON.stringify(model.requests.at(-1)?.body), /rejected/);
    assert.equal(vaultHits(), 0);
  });

  test('run: a recipe goto to the ruled page is refused', async () => {
    const recipe = join(home, 'vault.json');
    writeFileSync(
      recipe,
      JSON.stringify({
        url: site.url('127.0.0.1', '/'),
        steps: [{ action: 'goto', url: site.url('vault-owner.example', '/vault/open') }],
      }),
    );
    const result = await runCli(
      ['run', recipe, '--rules', rules, ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg])],
      { TABWARD_HOME: home },
    );
    assert.equal(result.json.error?.code, 'not_allowed', JSON.stringify(result.json));
    assert.match(result.json.error.message, /sensitive/);
    assert.equal(vaultHits(), 0);
    assert.match(
      readFileSync(join(home, 'audit.jsonl'), 'utf8'),
      /"frontEnd":"run".*"rule":"\*:\/\/vault-owner\.example\/vault\/\*"/,
    );
  });
});
