// PaiCLI users bring their sensitive_patterns.txt (issue 32, item 11): one glob per line over the whole URL
// string, `*` any run, `?` one character, any case. Such a file loads in every command (a line tabward's URL syntax
// cannot take is read as that glob, said once per line), and matches what PaiCLI matched: `*admin*`,
// `*://localhost*/admin*`, a query parameter in `*token=*`; a line that is no rule at all still stops the start.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { startMcp } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tabward-paicli-'));
const rules = join(dir, 'sensitive_patterns.txt');
writeFileSync(
  rules,
  [
    '# PaiCLI sensitive patterns',
    '*admin*',
    '*://localhost*/admin*',
    '*://app.example/*token=*',
    '*/BILLING/?ay*',
    '',
  ].join('\n'),
);
const env = { TABWARD_HOME: join(dir, 'home') };
let site: Fixture;
before(async () => {
  site = await startFixture({ '/admin/users': (_req, _body, res) => html(res, '<title>Users</title>Users') });
});
after(async () => {
  await site?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a PaiCLI file matches what PaiCLI matched, and says once how each line is read', async () => {
  const urls = {
    'https://intranet.example/team/admin-panel': '*admin*',
    'https://intranet.example/x?role=ADMIN': '*admin*',
    'http://localhost:3000/admin/users': '*admin*',
    'https://app.example/reset?token=abc': '*://app.example/*token=*',
    'https://shop.example/billing/pay': '*/billing/?ay*',
    'https://shop.example/billing/say-hello': '*/billing/?ay*',
  };
  const checked = await runCli(
    ['rules', 'check', '--json', '--rules', rules, ...Object.keys(urls), 'https://app.example/home'],
    env,
  );
  const rows = checked.json as { url: string; sensitive: boolean; rule: string | null }[];
  for (const [url, rule] of Object.entries(urls))
    assert.equal(
      rows.find((row) => row.url === url)?.rule?.toLowerCase(),
      rule,
      `${url}: ${JSON.stringify(rows)}`,
    );
  assert.equal(rows.find((row) => row.url === 'https://app.example/home')?.sensitive, false);
  // Each line read as a whole-URL glob is said, with its line number; the URL patterns among them are not.
  assert.match(
    checked.stderr,
    /sensitive_patterns\.txt:2: "\*admin\*" is not a URL pattern \(it needs a scheme/,
  );
  assert.match(
    checked.stderr,
    /sensitive_patterns\.txt:3: "\*:\/\/localhost\*\/admin\*" is not a URL pattern .*matched as a glob over the whole URL/,
  );
  assert.doesNotMatch(checked.stderr, /sensitive_patterns\.txt:4/);
});

test('tabward mcp starts with it, and a page it names is asked about in the browser', async () => {
  const mcp = await startMcp({ args: ['--mode', 'isolated', '--rules', rules] });
  try {
    mcp.human.policy = () => ({ decision: 'reject', reason: 'not today' });
    const opened = await mcp.call('new_page', { url: site.url('intranet.example', '/admin/users') });
    assert.match(opened.text, /^rejected: The user rejected new_page: not today/);
    assert.match(mcp.human.questions.at(-1) ?? '', /rule \*admin\*/);
    assert.equal(site.seen.filter((request) => request.path === '/admin/users').length, 0);
    assert.match(mcp.stderr(), /sensitive_patterns\.txt:2: "\*admin\*" is not a URL pattern/);
  } finally {
    await mcp.close();
  }
});

test('a line that is no rule at all (spaces) still stops the start, naming it', async () => {
  const broken = join(dir, 'broken.txt');
  writeFileSync(broken, '*admin*\nnot a rule\n');
  const recipe = join(dir, 'recipe.json');
  writeFileSync(
    recipe,
    JSON.stringify({ url: 'https://example.com/', steps: [], extract: { fields: { t: 'title' } } }),
  );
  const started = await runCli(['run', recipe, '--rules', broken], env);
  assert.equal(started.code, 2);
  assert.match(started.stderr, /broken\.txt:2: Bad URL pattern "not a rule"/);
});
