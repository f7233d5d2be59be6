// An agent's browsing saved as a recipe and replayed: the demo's MCP story on the demo site (public page, the
// private roadmap behind a login typed with a secret, the sensitive admin page where "Delete workspace" is refused
// and "Save" approved), driven by a real MCP SDK client over stdio; then save_recipe and `tabward audit --recipe`,
// and `tabward run` of the saved recipe in a fresh browser: refused without --confirm, and with it the site sees
// the same write and the hand-added extraction reads what the agent read.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type DemoSite, startDemoSite } from '../../src/demo/demoSite.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';

const password = 'demo-password';
let site: DemoSite;
let fixture: Fixture;
let work: string;
let rulesFile: string;
let secretsFile: string;

before(async () => {
  site = await startDemoSite();
  fixture = await startFixture(capturePages);
  work = mkdtempSync(join(tmpdir(), 'tabward-saved-'));
  rulesFile = join(work, 'rules.txt');
  writeFileSync(rulesFile, '*://*.acme.test/admin/*\n');
  secretsFile = join(work, 'secrets.env');
  writeFileSync(secretsFile, `ACME_PASSWORD@${site.origin}=${password}\n`, { mode: 0o600 });
});

after(async () => {
  await site.close();
  await fixture.close();
  rmSync(work, { recursive: true, force: true });
});

/** The demo's story, in the isolated browser: the agent logs in itself, with the password given as a secret. */
async function story(mcp: McpUnderTest): Promise<string> {
  const { origin } = site;
  const ok = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await mcp.call(name, args);
    assert.ok(!result.isError, `${name}: ${result.text}`);
    return result.text;
  };
  await ok('new_page', { url: `${origin}/wiki/public` });
  assert.match(await ok('take_snapshot', { query: 'cafeteria' }), /cafeteria opens at 8/);
  await ok('navigate_page', { url: `${origin}/wiki/private` });
  const login = await ok('take_snapshot');
  // A slip the recipe must not keep: the password typed as a literal (into the wrong field), then corrected.
  await ok('fill', { ref: refOf(login, 'User name'), value: password });
  await ok('fill_form', {
    fields: [
      { ref: refOf(login, 'User name'), value: 'alice' },
      { ref: refOf(login, 'Password'), secret: 'ACME_PASSWORD' },
    ],
  });
  await ok('click', { ref: refOf(login, 'Sign in') });
  assert.match(await ok('take_snapshot', { query: 'Q3' }), /Ship the billing rewrite/);
  mcp.human.will(
    { decision: 'approve' },
    { decision: 'approve' },
    { decision: 'reject', reason: 'never delete the workspace' },
    { decision: 'approve' },
  );
  await ok('navigate_page', { url: `${origin}/admin/settings` });
  const settings = await ok('take_snapshot');
  await ok('fill', { ref: refOf(settings, 'Workspace name'), value: 'Acme Corp' });
  const refused = await mcp.call('click', { ref: refOf(settings, 'Delete workspace') });
  assert.ok(refused.isError, 'the human refused the delete');
  await ok('click', { ref: refOf(settings, 'Save') });
  return ok('take_snapshot');
}

test("the demo's MCP story, saved as a recipe, replays to the same data", async () => {
  const mcp = await startMcp({
    args: ['--mode', 'isolated', '--rules', rulesFile, '--secrets', secretsFile],
  });
  const env = { TABWARD_HOME: mcp.home };
  try {
    const seen = await story(mcp);
    assert.match(seen, /Done[\s\S]*Action "save" applied/);
    assert.deepEqual(site.writes, ['save Acme Corp']);

    const saved = await mcp.call('save_recipe', { name: 'demo-story' });
    assert.ok(!saved.isError, saved.text);
    const file = join(mcp.home, 'recipes', 'demo-story.json');
    assert.match(saved.text, /marked write\) to .*demo-story\.json[\s\S]*tabward run .* --confirm/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const again = await mcp.call('save_recipe', { name: 'demo-story' });
    assert.match(again.text, /demo-story-2\.json/, 'a saved recipe is never replaced');
    await mcp.client.close();

    const printed = await runCli(['audit', '--recipe'], env);
    assert.equal(printed.code, 0, printed.stderr);
    const recipe = printed.json;
    assert.deepEqual(
      JSON.parse(readFileSync(file, 'utf8')).steps,
      recipe.steps,
      'the tool and the CLI agree',
    );
    assert.match(printed.stderr, /saved session s\w+: \d+ steps, 4 marked write/);

    // Secrets by name, never by value: not in the recipe, not in the log it came from.
    for (const text of [printed.stdout, readFileSync(file, 'utf8'), readFileSync(mcp.auditPath, 'utf8')])
      assert.ok(!text.includes(password));
    const steps = recipe.steps as Record<string, unknown>[];
    assert.deepEqual(
      steps.filter((step) => step.action === 'type').map((step) => [step.selector, step.text ?? step.secret]),
      [
        ['input[name="username"]', 'ACME_PASSWORD'],
        ['input[name="username"]', 'alice'],
        ['input[name="password"]', 'ACME_PASSWORD'],
        ['input[name="name"]', 'Acme Corp'],
      ],
    );
    // Selectors that survive a reload, and writes marked from the guard's own decisions and from what the page
    // sent (signing in posts a form).
    const clicks = steps.filter((step) => step.action === 'click');
    assert.deepEqual(
      clicks.map((step) => [step.selector, step.write ?? false]),
      [
        ['role=button[name="Sign in"]', true],
        ['role=button[name="Save"]', true],
      ],
    );
    assert.ok(
      steps.some((step) => step.action === 'goto' && step.write === true),
      'the sensitive page is a write',
    );
    assert.ok(!JSON.stringify(steps).includes('Delete workspace'), 'the refused click is not saved');

    // The extraction is added by hand; the run happens in a fresh browser.
    recipe.extract = { fields: { result: 'h1', detail: 'p' } };
    const recipeFile = join(work, 'replay.json');
    writeFileSync(recipeFile, JSON.stringify(recipe));
    const runArgs = [
      'run',
      recipeFile,
      '--secrets',
      secretsFile,
      '--rules',
      rulesFile,
      ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]),
    ];
    const refused = await runCli(runArgs, env);
    assert.equal(refused.code, 3, refused.stdout);
    assert.equal(refused.json.error.code, 'not_allowed');
    assert.deepEqual(site.writes, ['save Acme Corp'], 'nothing was written without --confirm');

    const replayed = await runCli([...runArgs, '--confirm'], env);
    assert.equal(replayed.code, 0, replayed.stdout);
    assert.deepEqual(replayed.json.data, { result: 'Done', detail: 'Action "save" applied.' });
    assert.deepEqual(site.writes, ['save Acme Corp', 'save Acme Corp'], 'the same write, once more');

    // The run wrote audit records of its own session; the latest browsing session is still the agent's.
    const later = await runCli(['audit', '--recipe'], env);
    assert.deepEqual(later.json.steps, recipe.steps);
  } finally {
    await mcp.close();
  }
});

/**
 * What a page keeps from one load to the next, and what it does not: a test id, an id and a name made up per
 * render, two buttons alike, a button in a frame.
 */
const capturePages = {
  '/': (_req: unknown, _body: string, res: Parameters<typeof html>[0]) =>
    html(
      res,
      `<title>Capture</title>
      <button data-testid="start-btn" onclick="fetch('/started', {method: 'POST'})">Start</button>
      <label>Search <input id=":r1:" name="q-1699"></label>
      <ul><li>A <button>Remove</button></li><li>B <button>Remove</button></li></ul>
      <iframe src="/frame" title="Inner frame"></iframe>`,
    ),
  '/frame': (_req: unknown, _body: string, res: Parameters<typeof html>[0]) =>
    html(res, '<button id="inner">Inner</button>'),
  'POST /started': (_req: unknown, _body: string, res: Parameters<typeof html>[0]) => html(res, 'ok'),
};

test('selectors that survive a reload: test ids, role and name for made-up ids; duplicates and frames end the recipe', async () => {
  const mcp = await startMcp({ args: ['--mode', 'isolated'] });
  const env = { TABWARD_HOME: mcp.home };
  try {
    const page = fixture.url('capture.test');
    assert.ok(!(await mcp.call('new_page', { url: page })).isError);
    const snapshot = (await mcp.call('take_snapshot', { allRefs: true })).text;
    for (const [tool, args] of [
      ['click', { ref: refOf(snapshot, 'Start') }],
      ['fill', { ref: refOf(snapshot, 'Search'), value: 'abc' }],
      ['press_key', { key: 'Tab', ref: refOf(snapshot, 'Remove') }],
      ['click', { ref: refOf(snapshot, 'Inner') }],
    ] as const) {
      const result = await mcp.call(tool, args);
      assert.ok(!result.isError, `${tool}: ${result.text}`);
    }
    await mcp.client.close();
    const targets = readFileSync(mcp.auditPath, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"targets"'))
      .map((line) => Object.values(JSON.parse(line).targets as Record<string, Record<string, string>>)[0]);
    assert.deepEqual(
      targets.map((target) => target?.selector ?? target?.unreplayable),
      [
        '[data-testid="start-btn"]',
        'role=textbox[name="Search"]',
        'no test id, id, field name or role and name finds it alone',
        'it is inside a frame',
      ],
    );

    const printed = await runCli(['audit', '--recipe'], env);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(
      printed.stderr,
      /note: stopped at call \S+ \(press_key\): its element cannot be found again/,
    );
    assert.deepEqual(
      (printed.json.steps as Record<string, unknown>[]).map((step) => `${step.action} ${step.selector}`),
      [
        'waitFor [data-testid="start-btn"]',
        'click [data-testid="start-btn"]',
        'type role=textbox[name="Search"]',
      ],
    );
    // The click made the page post, though nothing in its label says so: a write step, refused unconfirmed.
    assert.equal((printed.json.steps as Record<string, unknown>[])[1]?.write, true);
    // A fresh browser, a fresh load: the saved selectors find the same elements, and the click happens again.
    const recipeFile = join(work, 'capture.json');
    writeFileSync(recipeFile, printed.stdout);
    const before = fixture.seen.filter((seen) => seen.path === '/started').length;
    const runArgs = ['run', recipeFile, ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg])];
    const refused = await runCli(runArgs, env);
    assert.equal(refused.json.error?.code, 'not_allowed', refused.stdout);
    const replayed = await runCli([...runArgs, '--confirm'], env);
    assert.equal(replayed.code, 0, replayed.stdout);
    assert.equal(fixture.seen.filter((seen) => seen.path === '/started').length, before + 1);
  } finally {
    await mcp.close();
  }
});
