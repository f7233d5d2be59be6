// The command line as users run it: help, rules check/list with a user rules file, the audit reader,
// and clear errors for bad input.

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { binPath } from '../helpers/mcpClient.ts';

const run = promisify(execFile);
const home = mkdtempSync(join(tmpdir(), 'tabward-cli-'));
const tabward = async (...args: string[]) => {
  try {
    const { stdout, stderr } = await run(process.execPath, [binPath, ...args], {
      env: { ...process.env, TABWARD_HOME: home },
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failure = error as { stdout: string; stderr: string; code: number };
    return { stdout: failure.stdout, stderr: failure.stderr, code: failure.code };
  }
};

test('help describes every command and every mcp flag', async () => {
  const help = await tabward('--help');
  for (const command of ['mcp', 'demo', 'rules', 'audit', 'doctor'])
    assert.match(help.stdout, new RegExp(`\\b${command}\\b`));
  const mcp = await tabward('mcp', '--help');
  for (const flag of [
    '--mode',
    '--headless',
    '--headed',
    '--executable-path',
    '--chrome-arg',
    '--user-data-dir',
    '--browser-url',
    '--ws-endpoint',
    '--rules',
    '--secrets',
    '--audit-log',
    '--approval',
    '--http',
  ]) {
    assert.ok(mcp.stdout.includes(flag), flag);
  }
});

test('rules check explains, in text and JSON, with the user file in force and bad lines reported', async () => {
  writeFileSync(join(home, 'sensitive_patterns.txt'), '# mine\n*://wiki.corp.test/hr/*\nbroken pattern\n');
  const extra = join(home, 'extra.txt');
  writeFileSync(extra, '*://*.vendor.test/billing/*\n');
  const json = await tabward(
    'rules',
    'check',
    '--json',
    '--rules',
    extra,
    'https://github.com/acme/app/settings',
    'https://wiki.corp.test/hr/pay',
    'https://a.vendor.test/billing',
    'https://example.com/',
  );
  assert.equal(json.code, 1, 'some URLs are sensitive');
  assert.deepEqual(JSON.parse(json.stdout), [
    { url: 'https://github.com/acme/app/settings', sensitive: true, rule: '*://github.com/*/settings/*' },
    { url: 'https://wiki.corp.test/hr/pay', sensitive: true, rule: '*://wiki.corp.test/hr/*' },
    { url: 'https://a.vendor.test/billing', sensitive: true, rule: '*://*.vendor.test/billing/*' },
    { url: 'https://example.com/', sensitive: false, rule: null },
  ]);
  assert.match(json.stderr, /sensitive_patterns\.txt:3: Bad URL pattern "broken pattern"/);
  const text = await tabward('rules', 'check', 'https://www.paypal.com/', 'not-a-url');
  assert.match(
    text.stdout,
    /SENSITIVE {2}\*:\/\/\*\.paypal\.com\/\* {2}\(default \(banking and payments\)\)/,
  );
  assert.match(text.stdout, /not a URL/);
  assert.equal(text.code, 2);
  const list = await tabward('rules', 'list');
  assert.match(list.stdout, /\*:\/\/wiki\.corp\.test\/hr\/\*\s+\S+sensitive_patterns\.txt:2/);
  assert.match(list.stdout, /\*:\/\/\*\.console\.aws\.amazon\.com\/\*\s+default \(cloud consoles\)/);
  const missing = await tabward('rules', 'check', '--rules', join(home, 'nope.txt'), 'https://a.test/');
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nope\.txt does not exist/);
});

test('audit reads the log, with --tail and --json, and reports unreadable lines', async () => {
  const log = join(home, 'audit-sample.jsonl');
  const entry = (tool: string) =>
    JSON.stringify({
      time: '2026-01-01T00:00:00Z',
      frontEnd: 'mcp',
      tool,
      kind: 'read',
      args: {},
      mode: 'isolated',
      decision: 'allow',
      outcome: 'ok',
      durationMs: 3,
    });
  writeFileSync(log, `${entry('list_pages')}\n${entry('take_snapshot')}\n{broken\n${entry('click')}\n`);
  const json = await tabward('audit', '--audit-log', log, '--json', '--tail', '2');
  assert.deepEqual(
    JSON.parse(json.stdout).map((record: { tool: string }) => record.tool),
    ['take_snapshot', 'click'],
  );
  assert.match(json.stderr, /unreadable lines 3/);
  const text = await tabward('audit', '--audit-log', log);
  assert.equal(text.stdout.trim().split('\n').length, 3);
  const empty = await tabward('audit', '--audit-log', join(home, 'none.jsonl'));
  assert.match(empty.stdout, /No audit records/);
  const bad = await tabward('audit', '--tail', 'many');
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--tail must be a positive whole number/);
});

test("audit shows a page's escape sequences and line breaks as marks, one record a line, in text and --json", async () => {
  // Pages choose much of a record: a script's exception (evaluate_script), a site tool's own error text, an
  // address. An attack review's page cleared the screen, retitled the window and forged records above the real ones.
  const log = join(home, 'audit-hostile.jsonl');
  const forged =
    '2026-01-01T10:00:02.000Z mcp isolated click http://bank.test/settings ask → elicitation: reject rejected 900ms';
  const record = (tool: string, error?: string) =>
    JSON.stringify({
      time: '2026-01-01T00:00:00Z',
      frontEnd: 'mcp',
      tool,
      kind: 'read',
      args: {},
      mode: 'isolated',
      url: 'https://evil.test/\u009b2J',
      decision: 'allow',
      outcome: error ? 'error' : 'ok',
      durationMs: 3,
      ...(error ? { error } : {}),
    });
  writeFileSync(
    log,
    `${record('click')}\n${record('evaluate_script', `Error: \u001b[H\u001b[2J\u001b[3J${forged}\u001b]0;all clear\u0007\u001b[8m`)}\n${record('call_site_tool', `none\n${forged}\r\u2028${forged}`)}\n`,
  );
  const raw = (printed: string) =>
    [...printed].find((char) => /[\p{Cc}\p{Zl}\p{Zp}]/u.test(char) && char !== '\n');
  const text = await tabward('audit', '--audit-log', log);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(raw(text.stdout), undefined, 'no raw control character');
  const lines = text.stdout.trim().split('\n');
  assert.deepEqual(
    lines.map((line) => line.split(' ')[3]),
    ['click', 'evaluate_script', 'call_site_tool'],
    'one line a record: nothing forged begins a line',
  );
  assert.match(lines[1] ?? '', /<U\+001B>\[H<U\+001B>\[2J/);
  assert.match(lines[2] ?? '', /none<U\+000A>2026-01-01T10:00:02/);
  const json = await tabward('audit', '--audit-log', log, '--json');
  assert.equal(raw(json.stdout), undefined, 'JSON escapes C1 controls and line separators too');
  assert.ok(JSON.parse(json.stdout)[1].error.includes('\u001b[H'), 'the record itself is kept whole');
});

test('bad flags are refused with a clear message', async () => {
  const mode = await tabward('mcp', '--mode', 'sideways');
  assert.notEqual(mode.code, 0);
  assert.match(mode.stderr, /Allowed choices are isolated, shared, auto, remote/);
  // The home's rules file has a bad line (the test above): going on without it must be asked for.
  const secrets = await tabward('mcp', '--ignore-bad-rules', '--secrets', join(home, 'missing.env'));
  assert.equal(secrets.code, 2);
  assert.match(secrets.stderr, /Secrets file .* does not exist/);
});

test('doctor reports the browser and remote debugging', async () => {
  const doctor = await tabward('doctor');
  assert.match(doctor.stdout, /ok browser: (Chromium|Google Chrome) \d+/);
  assert.match(doctor.stdout, /your Chrome: /);
});

test("doctor says when the user's Chrome preloads pages, profile by profile, and not when it is off", async () => {
  const chrome = mkdtempSync(join(tmpdir(), 'tabward-doctor-chrome-'));
  writeFileSync(join(chrome, 'DevToolsActivePort'), '1\n/devtools/browser/none\n');
  mkdirSync(join(chrome, 'Default'));
  writeFileSync(
    join(chrome, 'Default', 'Preferences'),
    JSON.stringify({ net: { network_prediction_options: 2 } }),
  );
  const off = await tabward('doctor', '--user-data-dir', chrome);
  assert.match(off.stdout, /DevToolsActivePort in /);
  assert.doesNotMatch(off.stdout, /preloads pages/);
  mkdirSync(join(chrome, 'Profile 2'));
  writeFileSync(join(chrome, 'Profile 2', 'Preferences'), JSON.stringify({ profile: { name: 'Work' } }));
  const on = await tabward('doctor', '--user-data-dir', chrome);
  assert.match(
    on.stdout,
    /-- your Chrome preloads pages \(profile Profile 2\):.*Settings › Performance › Preload pages/,
  );
});

test('tabward mcp started by hand in a terminal says in one line what it waits for; from a client, nothing', async () => {
  // A terminal: `script` gives the command a pseudo-terminal for its stdin and output.
  const inTerminal = spawnSync(
    'script',
    ['-qec', `${process.execPath} ${binPath} mcp --no-warm-up`, '/dev/null'],
    {
      encoding: 'utf8',
      input: '',
      timeout: 30_000,
      env: { ...process.env, TABWARD_HOME: mkdtempSync(join(tmpdir(), 'tabward-tty-')) },
    },
  );
  assert.match(
    inTerminal.stdout,
    /^tabward mcp: an MCP server, waiting for a client on stdin\. Add it to your client \(claude mcp add tabward -- \S+\/bin\/tabward mcp;/m,
  );
  // A pipe, as every client gives: no such line.
  const piped = spawnSync(process.execPath, [binPath, 'mcp', '--no-warm-up'], {
    encoding: 'utf8',
    input: '',
    timeout: 30_000,
    env: { ...process.env, TABWARD_HOME: mkdtempSync(join(tmpdir(), 'tabward-pipe-')) },
  });
  assert.doesNotMatch(piped.stderr, /waiting for a client/);
});
