// The agent's other hands: external MCP servers from mcp.json (with ${VAR}), restarted with new arguments at
// run time under the same tool names, writes there asked in the terminal; a browsing sub-agent; plan mode.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeModel, startFakeModel } from '../helpers/fakeModel.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { runAgent } from '../helpers/runAgent.ts';

/** `${NAME}` in mcp.json, built so that it is plainly not a template literal by mistake. */
const variable = (name: string) => `$${'{'}${name}}`;

describe('tabward agent: external MCP servers, sub-agents, plans', () => {
  let model: FakeModel;
  let site: Fixture;
  const home = mkdtempSync(join(tmpdir(), 'tabward-agent-tools-'));
  before(async () => {
    model = await startFakeModel();
    site = await startFixture({
      '/': (_req, _body, res) => html(res, '<title>Board</title><p>Public notice board: lunch at noon.</p>'),
    });
    const server = new URL('../fixtures/echoMcpServer.ts', import.meta.url).pathname;
    writeFileSync(
      join(home, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          echo: {
            command: process.execPath,
            args: ['--import', import.meta.resolve('tsx'), server, '--prefix', variable('ECHO_PREFIX')],
          },
          off: { command: 'nope', disabled: true },
        },
      }),
    );
  });
  after(async () => {
    await Promise.all([model?.close(), site?.close()]);
  });

  const chromeArgs = testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]);
  const agent = (args: string[], stdin: string) =>
    runAgent(
      ['--mode', 'isolated', ...chromeArgs, ...args],
      stdin,
      {
        TABWARD_HOME: home,
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: model.baseURL,
        TABWARD_MODEL: 'openai:fake',
        ECHO_PREFIX: 'first',
      },
      home,
    );
  const lastRequest = () => JSON.stringify(model.requests.at(-1)?.body);

  test("external tools join the browser's; a restart with new arguments keeps their names; writes there ask", async () => {
    model.reply(
      { tool: 'echo__echo', args: { text: 'hi' } },
      'It said hi.',
      { tool: 'echo__echo', args: { text: 'again' } },
      'Again.',
      { tool: 'echo__write_note', args: { note: 'x' } },
      'Not written.',
    );
    const echoServer = new URL('../fixtures/echoMcpServer.ts', import.meta.url).pathname;
    const restart = `/mcp restart echo --import ${import.meta.resolve('tsx')} ${echoServer} --prefix second`;
    const run = await agent([], `say hi\n/mcp\n${restart}\nonce more\nwrite a note\nn\n\n/exit\n`);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /MCP server echo: 2 tools/);
    assert.match(run.stdout, /echo: 2 tools/);
    assert.match(run.stdout, /Restarted echo with .*--prefix second/);
    const bodies = model.requests.map((request) => JSON.stringify(request.body));
    assert.ok(
      bodies.some((body) => body.includes('first hi')),
      'the first server answered, with the variable expanded',
    );
    assert.ok(
      bodies.some((body) => body.includes('second again')),
      'the restarted server answered under the same tool name',
    );
    assert.match(run.stderr, /approval needed: echo__write_note/);
    assert.match(lastRequest(), /rejected: The user rejected echo__write_note/);
    // External calls are on the one call path: audited like browser tools, naming server and tool.
    const audit = readFileSync(join(home, 'audit.jsonl'), 'utf8');
    assert.match(
      audit,
      /"tool":"echo__echo","kind":"external".*"decision":"allow".*"subject":\{"server":"echo","tool":"echo"\}/,
    );
    assert.match(audit, /"tool":"echo__write_note","kind":"external".*"decision":"ask".*"choice":"reject"/);
    const tools = (model.requests.at(-1)?.body.tools ?? []) as { function: { name: string } }[];
    const toolNames = tools.map((tool) => tool.function.name);
    assert.ok(
      toolNames.includes('echo__echo') &&
        toolNames.includes('take_snapshot') &&
        toolNames.includes('browse_subtask'),
    );
  });

  test('a sub-agent browses in a context of its own and reports back', async () => {
    model.reply(
      { tool: 'browse_subtask', args: { task: 'read the notice board' } },
      { tool: 'new_page', args: { url: site.url('board.test', '/') } },
      'Findings: lunch at noon.',
      'Lunch is at noon.',
    );
    const run = await agent(['when is lunch?'], '');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Lunch is at noon\./);
    assert.match(run.stderr, /\[sub-agent\] → new_page/);
    assert.match(lastRequest(), /Findings: lunch at noon\./);
    const subRequest = JSON.stringify(model.requests.at(-2)?.body);
    assert.doesNotMatch(subRequest, /when is lunch/, 'the sub-agent has its own context');
  });

  test('plan mode shows the plan and runs it only on yes', async () => {
    model.reply('1. Open the board.\n2. Read the time.', 'Done as planned.');
    const yes = await agent(['--plan', 'check the board'], 'y\n');
    assert.match(yes.stdout, /Plan:\n1\. Open the board\./);
    assert.match(yes.stdout, /Done as planned\./);
    assert.match(lastRequest(), /Follow this plan/);
    model.reply('1. Something.');
    const no = await agent(['--plan', 'check the board'], 'n\n');
    assert.doesNotMatch(no.stdout, /Done as planned/);
  });
});
