// The real Claude Code and Codex CLIs against a real `tabward mcp` (issue 31): each from npm, pointed at a scripted
// model API on 127.0.0.1 through its documented base-URL setting (ANTHROPIC_BASE_URL; a Codex model provider's
// base_url), run headless (`claude -p`, `codex exec`: no one answers elicitation there). The model asks for a
// sensitive navigation and calls again while tabward answers "still waiting"; the question reaches the human's
// screen (`tabward approvals`); on "yes" the page is opened exactly once, on "no" never. Each is skipped, saying so,
// where its CLI is not installed: TABWARD_CLAUDE / TABWARD_CODEX name the binaries (npm install
// @anthropic-ai/claude-code, @openai/codex).

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { binPath } from '../helpers/mcpClient.ts';
import { within } from '../helpers/waitFor.ts';

const claude = process.env.TABWARD_CLAUDE ?? '';
const codex = process.env.TABWARD_CODEX ?? '';
const skipClaude = existsSync(claude)
  ? false
  : 'Claude Code is not installed: set TABWARD_CLAUDE to its claude binary (npm install @anthropic-ai/claude-code) to run this';
const skipCodex = existsSync(codex)
  ? false
  : 'Codex is not installed: set TABWARD_CODEX to its codex binary (npm install @openai/codex) to run this';

/** The same for OpenAI's Responses API, as Codex reads it (MCP tools come in a namespace of their server). */
async function scriptedResponses(url: string): Promise<{ base: string; server: Server }> {
  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (!req.url?.includes('/responses')) {
      res.writeHead(404);
      res.end();
      return;
    }
    const body = JSON.parse(raw || '{}') as {
      model?: string;
      input?: unknown;
      tools?: { name?: string; tools?: { name: string }[] }[];
    };
    const input = JSON.stringify(body.input ?? []);
    const namespace = body.tools?.find((tool) => tool.tools?.some((each) => each.name === 'new_page'))?.name;
    const results = input.split('"function_call_output"').length - 1;
    const stillWaiting = input.lastIndexOf('pending_approval') > input.lastIndexOf('"function_call"');
    const call = namespace !== undefined && results < 6 && (results === 0 || stillWaiting);
    const item = call
      ? {
          type: 'function_call',
          id: `fc_${results}`,
          call_id: `call_${results}`,
          name: 'new_page',
          namespace,
          arguments: JSON.stringify({ url }),
          status: 'completed',
        }
      : {
          type: 'message',
          id: `m_${results}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'FINISHED', annotations: [] }],
        };
    const usage = {
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    };
    const response = {
      id: `resp_${results}`,
      object: 'response',
      status: 'completed',
      model: body.model,
      output: [item],
      usage,
    };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of [
      { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', output_index: 0, item },
      { type: 'response.output_item.done', output_index: 0, item },
      { type: 'response.completed', response },
    ])
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { base: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

/** tabward mcp as each client starts it: isolated, "still waiting" after 4 s, the test browser's host mapping. */
function tabwardArgs(): string[] {
  return [
    binPath,
    'mcp',
    '--mode',
    'isolated',
    '--approval-wait',
    '4',
    '--no-notify',
    ...testChromeArgs.map((arg) => `--chrome-arg=${arg}`),
  ];
}

/**
 * A model that opens `url` with tabward's new_page, calls it again while the answer is "still waiting", and says
 * FINISHED once the call has an answer (or after six tries). Streams as the Messages API does.
 */
async function scriptedModel(url: string): Promise<{ base: string; server: Server }> {
  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (!req.url?.startsWith('/v1/messages') || req.url.includes('count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    const body = JSON.parse(raw || '{}') as {
      model?: string;
      stream?: boolean;
      tools?: { name: string }[];
      messages?: unknown;
    };
    const conversation = JSON.stringify(body.messages ?? []);
    const tool = body.tools?.find((each) => each.name.endsWith('__new_page'))?.name;
    const results = conversation.split('"tool_result"').length - 1;
    const stillWaiting =
      conversation.lastIndexOf('pending_approval') > conversation.lastIndexOf('"tool_use"');
    const call = tool !== undefined && results < 6 && (results === 0 || stillWaiting);
    const events: object[] = [
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 1 },
        },
      },
      call
        ? {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'tool_use', id: `toolu_${results}`, name: tool, input: {} },
          }
        : { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      call
        ? {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify({ url }) },
          }
        : { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'FINISHED' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: 5 },
      },
      { type: 'message_stop' },
    ];
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of events)
      res.write(`event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { base: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

/** How one client is started for a session: its scripted model, its config, its process. */
type StartClient = (
  dir: string,
  tabwardHome: string,
  url: string,
) => Promise<{ run: ChildProcess; stop: () => void }>;

const startClaude: StartClient = async (dir, tabwardHome, url) => {
  const home = join(dir, 'home');
  mkdirSync(home);
  const model = await scriptedModel(url);
  const config = join(dir, 'mcp.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        tabward: { command: process.execPath, args: tabwardArgs(), env: { TABWARD_HOME: tabwardHome } },
      },
    }),
  );
  const run = spawn(
    claude,
    [
      '-p',
      'Open my GitHub profile settings.',
      '--mcp-config',
      config,
      '--allowedTools',
      'mcp__tabward__new_page',
      '--output-format',
      'text',
    ],
    {
      cwd: dir,
      env: {
        ...process.env,
        HOME: home,
        ANTHROPIC_BASE_URL: model.base,
        ANTHROPIC_API_KEY: 'sk-ant-scripted-0000000000000000000000',
        // The MCP tools in the model's list at once, not behind a tool search.
        ENABLE_TOOL_SEARCH: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return { run, stop: () => model.server.close() };
};

const startCodex: StartClient = async (dir, tabwardHome, url) => {
  const codexHome = join(dir, 'codex');
  mkdirSync(codexHome);
  const model = await scriptedResponses(url);
  // Codex passes its servers a reduced environment: TABWARD_HOME is named in the server's env table.
  const toml = (value: unknown) => JSON.stringify(value);
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      'model = "gpt-scripted"',
      'model_provider = "scripted"',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = ${toml(`${model.base}/v1`)}`,
      'wire_api = "responses"',
      'env_key = "SCRIPTED_KEY"',
      '[mcp_servers.tabward]',
      `command = ${toml(process.execPath)}`,
      `args = [${tabwardArgs().map(toml).join(', ')}]`,
      `env = { TABWARD_HOME = ${toml(tabwardHome)} }`,
      '',
    ].join('\n'),
  );
  // Codex's own approvals are off: the yes asked here is tabward's. stdin closed: with a pipe open, codex exec
  // waits for more of the prompt on it.
  const run = spawn(
    codex,
    [
      'exec',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      'Open my GitHub profile settings.',
    ],
    {
      cwd: dir,
      env: { ...process.env, HOME: dir, CODEX_HOME: codexHome, SCRIPTED_KEY: 'scripted' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return { run, stop: () => model.server.close() };
};

for (const [name, skip, start] of [
  ['Claude Code', skipClaude, startClaude],
  ['Codex', skipCodex, startCodex],
] as const)
  describe(`the real ${name} CLI`, { skip, timeout: 240_000 }, () => {
    let site: Fixture;
    const opened = () => site.seen.filter((request) => request.path === '/settings/profile').length;
    before(async () => {
      site = await startFixture(
        { 'GET /settings/profile': (_req, _body, res) => html(res, '<title>Profile</title>Public profile') },
        { tls: true },
      );
    });
    after(() => site?.close());

    /** One session: the client asks, the human answers in `tabward approvals`; how often the page opened. */
    async function session(answer: 'approve' | 'reject'): Promise<number> {
      const openedBefore = opened();
      const dir = mkdtempSync(join(tmpdir(), 'tabward-client-'));
      const tabwardHome = join(dir, 'tabward');
      const { run, stop } = await start(dir, tabwardHome, site.url('github.com', '/settings/profile'));
      let said = '';
      run.stdout?.on('data', (chunk: Buffer) => {
        said += chunk.toString();
      });
      run.stderr?.on('data', (chunk: Buffer) => {
        said += chunk.toString();
      });
      const exited = new Promise<number | null>((resolve) => run.once('exit', resolve));
      try {
        // The human's screen: the question, in the terminal's inbox, while the client calls again.
        const human = inboxOf(tabwardHome);
        const question = await human.question('new_page', 60_000).catch((error: unknown) => {
          throw new Error(`${String(error)}\n${name} said:\n${said.slice(-2000)}`);
        });
        assert.match(
          question.question,
          /^tabward: new_page — SENSITIVE PAGE\nPage: https:\/\/github\.com:\d+\/settings\/profile/,
        );
        assert.equal(opened(), openedBefore, 'nothing opened before the answer');
        const decision = answer === 'approve' ? 'approve' : { choice: 'reject', reason: 'not today' };
        assert.equal(await human.answer(question.id, decision), 200);
        assert.equal(await within(`${name} to finish`, exited, 120_000), 0, said);
        assert.match(said, /FINISHED/);
        return opened() - openedBefore;
      } finally {
        run.kill();
        await within(`${name} to be gone`, exited, 10_000).catch(() => undefined);
        stop();
        // Its helpers may still write its session files for a moment.
        rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
      }
    }

    test('yes in `tabward approvals`: the page opens exactly once', async () => {
      assert.equal(await session('approve'), 1);
    });

    test('no in `tabward approvals`: the page never opens', async () => {
      assert.equal(await session('reject'), 0);
    });
  });
