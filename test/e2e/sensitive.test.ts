// Sensitive pages under a real name: the fixture speaks TLS as github.com (the browser maps every name to
// 127.0.0.1), and the assertions are on what the fixture server saw. One `tabward mcp` for the file, as an agent
// would use it across tasks. The re-check of a page that moved while the human decided is in callPath.test.ts
// (in-process, real Chromium), beside the other re-checks of what an approval is bound to.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, redirect, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';

const settingsPage = `<title>Profile settings</title><h1>Public profile</h1><p>Token: ghp_visibleToken123</p>
<form method="post" action="/settings/profile"><label>Name <input name="name" value="Alice"></label>
<button>Update profile</button></form>`;

const secret = 'S3cr3t-Value-9931';

describe('sensitive pages', { timeout: 240_000 }, () => {
  let gh: Fixture;
  let other: Fixture;
  let mcp: McpUnderTest;
  let secretsDir = '';
  before(async () => {
    gh = await startFixture(
      {
        'GET /settings/profile': (_req, _body, res) => html(res, settingsPage),
        'POST /settings/profile': (_req, _body, res) => html(res, '<title>Saved</title><h1>Saved</h1>'),
        '/acme/app': (_req, _body, res) =>
          html(res, '<title>acme/app</title><h1>acme/app</h1><a href="/acme/app/settings">Settings</a>'),
        '/go': (_req, _body, res) => redirect(res, '/settings/profile'),
      },
      { tls: true },
    );
    other = await startFixture({
      '/form': (_req, _body, res) =>
        html(
          res,
          '<title>Form</title><form action="/collect"><label>Note <input name="note"></label><button>Send</button></form><p id="echo"></p>',
        ),
      '/collect': (_req, _body, res) => html(res, '<title>Thanks</title>Thanks'),
    });
    secretsDir = mkdtempSync(join(tmpdir(), 'tabward-secrets-'));
    const secretsFile = join(secretsDir, 'secrets.env');
    // Bound to the site it belongs to: typing it there asks nobody.
    writeFileSync(secretsFile, `NOTE_SECRET@${other.url('notes.example', '')}=${secret}\n`, { mode: 0o600 });
    mcp = await startMcp({ args: ['--mode', 'isolated', '--secrets', secretsFile] });
  });
  after(async () => {
    await mcp?.close();
    await gh?.close();
    await other?.close();
    rmSync(secretsDir, { recursive: true, force: true });
  });

  // First, before any approval: an approved sensitive navigation's network pass lets a redirect made by the
  // next action into the same origin through for its 2 s grace, in any tab (see the todo in callPath.test.ts).
  test('a redirect from a harmless URL into a sensitive one is stopped before the request leaves', async () => {
    const profileGets = () => gh.seen.filter((request) => request.path === '/settings/profile').length;
    const before = profileGets();
    // No answer scripted: the human declines whatever is held.
    const opened = await mcp.call('new_page', { url: gh.url('github.com', '/go') });
    assert.match(opened.text, /tabward stopped 1 request[\s\S]*\/settings\/profile/, opened.text);
    assert.equal(profileGets(), before, 'the sensitive page was never requested');
    const audit = readFileSync(mcp.auditPath, 'utf8');
    assert.match(audit, /"blocked":\["GET https:\/\/github\.com:\d+\/settings\/profile/);
  });

  test('a secret typed by name never appears in any response, log or the audit', async () => {
    // A session of its own: a typed secret taints it for good, and the tests below start without it.
    const mcp = await startMcp({
      args: ['--mode', 'isolated', '--secrets', join(secretsDir, 'secrets.env')],
    });
    try {
      await typesTheSecret(mcp);
    } finally {
      await mcp.close();
    }
  });

  const typesTheSecret = async (mcp: McpUnderTest) => {
    await mcp.call('new_page', { url: other.url('notes.example', '/form') });
    const form = await mcp.call('take_snapshot');
    const outputs: string[] = [];
    outputs.push((await mcp.call('fill', { ref: refOf(form.text, 'Note'), secret: 'NOTE_SECRET' })).text);
    outputs.push((await mcp.call('take_snapshot')).text);
    // A script in a page a secret was typed into could read it back: the human is asked.
    mcp.human.will({ decision: 'approve' });
    outputs.push(
      (await mcp.call('evaluate_script', { function: '() => document.querySelector("input").value' })).text,
    );
    outputs.push((await mcp.call('press_key', { key: 'Enter' })).text);
    await mcp.call('wait_for', { text: 'Thanks' });
    outputs.push((await mcp.call('list_pages')).text);
    outputs.push((await mcp.call('fill', { ref: 'e999', secret: 'NO_SUCH_SECRET' })).text);
    assert.ok(
      other.seen.some((request) => request.path.includes(encodeURIComponent(secret))),
      'the secret was really typed and sent',
    );
    for (const output of outputs) assert.ok(!output.includes(secret), output);
    assert.ok(outputs.some((output) => output.includes('«redacted»')));
    assert.ok(!readFileSync(mcp.auditPath, 'utf8').includes(secret));
    assert.ok(!mcp.stderr().includes(secret));
  };

  // The tests above need a session that has read no sensitive page; this one proves its own read taints it.
  test('taint: data read on a sensitive page cannot be typed into another origin without approval', async () => {
    await mcp.call('new_page', { url: other.url('notes.example', '/form') });
    const before = await mcp.call('take_snapshot');
    const fillBefore = await mcp.call('fill', { ref: refOf(before.text, 'Note'), value: 'hello' });
    assert.ok(!fillBefore.isError, `untainted: no question (${fillBefore.text})`);
    assert.doesNotMatch((await mcp.call('browser_status')).text, /tainted by reading: https/);

    mcp.human.will({ decision: 'approve' });
    await mcp.call('new_page', { url: gh.url('github.com', '/settings/profile') });
    const secretPage = await mcp.call('take_snapshot');
    assert.match(secretPage.text, /ghp_visibleToken123/);

    // Once tainted, even a navigation to another origin asks (a path or host name can carry data too).
    mcp.human.will({ decision: 'approve' });
    await mcp.call('new_page', { url: other.url('notes.example', '/form') });
    assert.match(mcp.human.questions.at(-1) ?? '', /data read on sensitive https:\/\/github\.com:\d+/);
    const form = await mcp.call('take_snapshot');
    mcp.human.will({ decision: 'reject' });
    const fill = await mcp.call('fill', { ref: refOf(form.text, 'Note'), value: 'ghp_visibleToken123' });
    assert.ok(fill.isError && fill.text.startsWith('rejected:'), fill.text);
    assert.match(mcp.human.questions.at(-1) ?? '', /data read on sensitive https:\/\/github\.com:\d+/);

    mcp.human.will({ decision: 'reject' });
    const leak = await mcp.call('navigate_page', {
      url: other.url('notes.example', '/collect?t=ghp_visibleToken123'),
    });
    assert.ok(leak.isError, leak.text);
    assert.ok(
      !other.seen.some((request) => request.path.includes('ghp_')),
      'the token never reached the other origin',
    );
    assert.match((await mcp.call('browser_status')).text, /tainted by reading: https:\/\/github\.com/);
  });

  test('a write on a sensitive page is refused without approval, runs once with it, and the next write asks again', async () => {
    const writes = gh.writes().length;
    mcp.human.will({ decision: 'approve' });
    const opened = await mcp.call('new_page', { url: gh.url('github.com', '/settings/profile') });
    assert.ok(!opened.isError, opened.text);
    assert.match(mcp.human.questions.at(-1) ?? '', /navigate_page|new_page/);
    const snapshot = await mcp.call('take_snapshot');
    const button = refOf(snapshot.text, 'Update profile');

    mcp.human.will({ decision: 'reject', reason: 'not now' });
    const rejected = await mcp.call('click', { ref: button });
    assert.ok(rejected.isError && rejected.text.includes('not now'), rejected.text);
    assert.match(mcp.human.questions.at(-1) ?? '', /SENSITIVE PAGE[\s\S]*\*:\/\/github\.com\/settings\/\*/);
    assert.equal(gh.writes().length, writes);

    mcp.human.will({ decision: 'approve' });
    const approved = await mcp.call('click', { ref: button });
    assert.ok(!approved.isError, approved.text);
    assert.equal(gh.writes().length, writes + 1);
    assert.deepEqual(
      mcp.human.offered.at(-1),
      ['approve', 'reject', 'skip', 'modify'],
      'no approve-all on sensitive pages',
    );

    // Going back to a sensitive page is a navigation to it: it asks too.
    mcp.human.will({ decision: 'approve' });
    const back = await mcp.call('navigate_page', { type: 'back' });
    assert.ok(!back.isError, back.text);
    assert.match(mcp.human.questions.at(-1) ?? '', /navigate_page[\s\S]*settings\/profile/);
    const again = await mcp.call('take_snapshot');
    const third = await mcp.call('click', { ref: refOf(again.text, 'Update profile') });
    assert.ok(third.isError, 'no answer scripted: the next write is asked again and declined');
    assert.equal(gh.writes().length, writes + 1);
  });
});
