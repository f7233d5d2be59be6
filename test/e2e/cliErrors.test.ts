// Bad input at every entry point, as a user sees it: one line on stderr naming the input and the fix, the
// documented exit code, and no stack trace.

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { startMcp } from '../helpers/mcpClient.ts';
import { type CliOutcome, runCli } from '../helpers/runCli.ts';
import { tokenFile } from '../helpers/tokenFile.ts';

const work = mkdtempSync(join(tmpdir(), 'tabward-cli-errors-'));
const home = join(work, 'home');
const env = { TABWARD_HOME: home };
// A TABWARD_HOME that cannot be created: its parent is a file (root passes permission checks, so a
// read-only folder would not do).
const blocker = join(work, 'not-a-folder');
const unusableHome = join(blocker, 'home');
const recipe = join(work, 'recipe.json');
let busy: Server;
let busyPort = 0;

before(async () => {
  writeFileSync(blocker, 'a file');
  writeFileSync(recipe, JSON.stringify({ url: 'https://example.com/' }));
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});
after(() => {
  busy.close();
  rmSync(work, { recursive: true, force: true });
});

/** The user-facing contract: this exit code, one stderr line matching, no stack trace. */
function assertOneLine(outcome: CliOutcome, code: number, pattern: RegExp): void {
  assert.equal(outcome.code, code, `exit code; stderr: ${outcome.stderr}`);
  const lines = outcome.stderr.trim().split('\n');
  assert.match(lines[0] ?? '', pattern);
  assert.ok(!/\n\s+at /.test(outcome.stderr), `no stack trace: ${outcome.stderr}`);
  assert.ok(lines.length <= 2, `one line (and at most a usage hint): ${outcome.stderr}`);
}

test('ports out of range are refused by the flag that gave them, exit 2 (bad input)', async () => {
  assertOneLine(await runCli(['mcp', '--http', '70000'], env), 2, /--http must be a port, 0 to 65535/);
  assertOneLine(await runCli(['serve', '--port', '99999'], env), 2, /--port must be a port, 0 to 65535/);
  assertOneLine(await runCli(['demo', '--site-only', '--port', '-1'], env), 2, /--port must be a port/);
});

test('a port in use is named with its flag, for mcp --http, serve and demo --site-only', async () => {
  const port = String(busyPort);
  assertOneLine(
    await runCli(['mcp', '--http', port], { ...env, TABWARD_MCP_TOKEN: 'x'.repeat(32) }),
    2,
    new RegExp(`^tabward: Port ${port} \\(--http\\) is in use\\. .*--http 0`),
  );
  assertOneLine(
    await runCli(['serve', '--port', port, '--token-file', tokenFile('y'.repeat(32))], env),
    2,
    new RegExp(`^tabward: Port ${port} \\(--port\\) is in use\\.`),
  );
  assertOneLine(
    await runCli(['demo', '--site-only', '--port', port], env),
    2,
    new RegExp(`^tabward: Port ${port} \\(--port\\) is in use\\.`),
  );
});

test('serve and relay have distinct default ports', async () => {
  const serve = await runCli(['serve', '--help'], env);
  const relay = await runCli(['relay', '--help'], env);
  // Help text wraps with the terminal's width: read it with white space collapsed.
  const defaultOf = (help: string) =>
    /--port <port> [^(]*\(0: any free \w+\) \(default: (\d+)\)/.exec(help.replace(/\s+/g, ' '))?.[1];
  assert.equal(defaultOf(serve.stdout), '8788');
  assert.equal(defaultOf(relay.stdout), '8787');
});

test('a folder given as --rules is refused in one line', async () => {
  assertOneLine(
    await runCli(['mcp', '--rules', work], env),
    2,
    /Rules file .* is a folder\. Give --rules a file\./,
  );
  assertOneLine(
    await runCli(['rules', 'check', '--rules', work, 'https://a.test/'], env),
    2,
    /Rules file .* is a folder/,
  );
});

test('mcp refuses malformed rules unless --ignore-bad-rules, and browser_status lists the rule files', async () => {
  const rules = join(work, 'rules.txt');
  writeFileSync(rules, '*://*.vendor.test/billing/*\nnot a pattern\n');
  assertOneLine(
    await runCli(['mcp', '--rules', rules], env),
    2,
    /rules\.txt:2: Bad URL pattern "not a pattern".*--ignore-bad-rules/,
  );
  assertOneLine(await runCli(['run', recipe, '--dry-run', '--rules', rules], env), 2, /rules\.txt:2:/);
  const mcp = await startMcp({ args: ['--rules', rules, '--ignore-bad-rules'] });
  try {
    const status = await mcp.call('browser_status');
    assert.match(
      status.text,
      /sensitive-page rules in force: defaults \(\d+ rules\), \S+rules\.txt \(1 rule\)/,
    );
    assert.match(mcp.stderr(), /rules\.txt:2: Bad URL pattern/);
  } finally {
    await mcp.close();
  }
});

test('an unusable TABWARD_HOME stops mcp, run and doctor up front', async () => {
  const unusable = { TABWARD_HOME: unusableHome };
  assertOneLine(
    await runCli(['mcp'], unusable),
    2,
    /^tabward: tabward cannot keep its files in .*not-a-folder\/home \(ENOTDIR\)\. Set TABWARD_HOME to a folder you can write\./,
  );
  assertOneLine(await runCli(['run', recipe, '--dry-run'], unusable), 2, /cannot keep its files in/);
  const doctor = await runCli(['doctor'], unusable);
  assert.equal(doctor.code, 1);
  assert.match(doctor.stdout, /^!! tabward cannot keep its files in .*\(ENOTDIR\)/m);
  assert.match(doctor.stdout, /Lines marked !! need fixing/);
  const log = await runCli(['mcp', '--audit-log', join(blocker, 'audit.jsonl')], env);
  assertOneLine(log, 2, /The audit log .*audit\.jsonl cannot be written \((ENOTDIR|EEXIST)\)/);
});

test('doctor exits 1 without a browser, and checks --browser-url', async () => {
  const missing = await runCli(['doctor', '--executable-path', join(work, 'no-chrome')], env);
  assert.equal(missing.code, 1, missing.stdout);
  assert.match(missing.stdout, /^!! /m);
  const closed = await runCli(['doctor', '--browser-url', `http://127.0.0.1:${busyPort}`], env);
  assert.equal(closed.code, 1, closed.stdout);
  assert.match(closed.stdout, new RegExp(`^!! http://127\\.0\\.0\\.1:${busyPort}: `, 'm'));
});

test('doctor and mcp show what a --browser-url endpoint answered as marks, never as escapes the terminal runs', async () => {
  // An attack review's endpoint answered the protocol with an error that cleared the screen, drew a green "ok your
  // Chrome answers" line and retitled the window.
  const paint = '\u001b[2J\u001b[H\u001b[32mok your Chrome answers\u001b[0m\u001b]0;owned\u0007\u009b8m';
  const endpoint = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ Browser: 'x', webSocketDebuggerUrl: `ws://127.0.0.1:${port()}/devtools/browser/x` }),
    );
  });
  const sockets = new WebSocketServer({ server: endpoint });
  sockets.on('connection', (socket) =>
    socket.on('message', (data) => {
      const { id } = JSON.parse(String(data)) as { id: number };
      socket.send(JSON.stringify({ id, error: { code: -32000, message: paint } }));
    }),
  );
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const port = () => (endpoint.address() as { port: number }).port;
  const raw = (text: string) => [...text].find((char) => /[\p{Cc}\p{Zl}\p{Zp}]/u.test(char) && char !== '\n');
  try {
    const doctor = await runCli(['doctor', '--browser-url', `http://127.0.0.1:${port()}`], env);
    assert.equal(doctor.code, 1, doctor.stdout);
    assert.equal(raw(doctor.stdout), undefined, doctor.stdout);
    assert.match(doctor.stdout, /<U\+001B>\[2J/);
    const mcp = await startMcp({ args: ['--mode', 'shared', '--browser-url', `http://127.0.0.1:${port()}`] });
    try {
      await mcp.call('list_pages');
      assert.equal(raw(mcp.stderr()), undefined, mcp.stderr());
      assert.match(mcp.stderr(), /<U\+001B>\[2J/);
    } finally {
      await mcp.close();
    }
  } finally {
    sockets.close();
    endpoint.close();
  }
});

test('secrets files: malformed lines are refused with their numbers, a readable file is warned about', async () => {
  const secrets = join(work, 'secrets.env');
  writeFileSync(secrets, '# mine\nGOOD=1\nBAD LINE\nALSO_GOOD="two\nlines"\nnoequals\n', { mode: 0o600 });
  assertOneLine(
    await runCli(['run', recipe, '--dry-run', '--secrets', secrets], env),
    2,
    /Secrets file .*secrets\.env: lines 3, 6 are not NAME=value\./,
  );
  writeFileSync(secrets, 'GOOD=1\n');
  chmodSync(secrets, 0o644);
  const shared = await runCli(['run', recipe, '--dry-run', '--secrets', secrets], env);
  assert.equal(shared.code, 0, shared.stderr);
  assert.match(
    shared.stderr,
    /warning: secrets file .* can be read by other users \(mode 644\); run `chmod 600/,
  );
});

test('rules check exits 1 when a URL is sensitive, 0 when none is, 2 for a bad URL', async () => {
  mkdirSync(home, { recursive: true });
  assert.equal((await runCli(['rules', 'check', 'https://www.paypal.com/'], env)).code, 1);
  assert.equal((await runCli(['rules', 'check', 'https://example.com/'], env)).code, 0);
  assert.equal((await runCli(['rules', 'check', 'https://example.com/', 'nope'], env)).code, 2);
});
