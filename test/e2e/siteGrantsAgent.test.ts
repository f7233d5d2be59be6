// Site grants in the terminal agent (`tabward agent`, a fake model, answers typed on its standard input): `t`
// gives one for fill on the page's origin, the next fill there runs unasked and is audited as the grant's, and
// `/grants` lists it and revokes it.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { AuditEntry } from '../../src/core/audit.ts';
import { type FakeModel, startFakeModel } from '../helpers/fakeModel.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { runAgent } from '../helpers/runAgent.ts';

let model: FakeModel;
let site: Fixture;
const home = mkdtempSync(join(tmpdir(), 'tabward-site-grants-'));

before(async () => {
  model = await startFakeModel();
  site = await startFixture({
    'GET /form': (_req, _body, res) =>
      html(res, '<title>Notes</title><label>Note <input name="note"></label>'),
  });
});
after(async () => {
  await Promise.all([model?.close(), site?.close()]);
});

test('t grants fill on the site for 15 min; /grants lists and revokes it', { timeout: 120_000 }, async () => {
  const noteRef = (conversation: string) => ({
    ref: /Note @(e\d+)/.exec(conversation)?.[1] ?? 'e0',
  });
  model.reply(
    { tool: 'new_page', args: { url: site.url('shop.test', '/form') } },
    { tool: 'take_snapshot', args: {} },
    { tool: 'fill', args: (conversation) => ({ ...noteRef(conversation), value: 'one' }) },
    { tool: 'fill', args: (conversation) => ({ ...noteRef(conversation), value: 'two' }) },
    'Filled it twice.',
  );
  const origin = new URL(site.url('shop.test', '/')).origin;
  const run = await runAgent(
    [
      ...testChromeArgs.flatMap((arg) => ['--chrome-arg', arg]),
      ...['--mode', 'isolated', '--policy', 'strict'],
    ],
    'fill the note twice\nt\n/grants\n/browser status\n/grants revoke 1\n/grants\n/exit\n',
    {
      TABWARD_HOME: home,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: model.baseURL,
      TABWARD_MODEL: 'openai:fake',
    },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /Filled it twice\./);
  assert.equal(run.stderr.match(/approval needed: fill/g)?.length, 1, 'the second fill was not asked');
  assert.match(run.stderr, /\[a\] approve all {2}\[t\] this site 15 min {2}\[h\] 1 h {2}\[n\] reject/);
  assert.match(
    run.stdout,
    new RegExp(`^1\\. fill on ${origin}, 15 min left \\(given through terminal\\)$`, 'm'),
  );
  assert.match(run.stdout, new RegExp(`site grants: 1\\. fill on ${origin}, 15 min left`));
  assert.match(run.stdout, new RegExp(`Revoked: fill on ${origin}\\.`));
  assert.match(run.stdout, /No site grants in force\./);

  const records = readFileSync(join(home, 'audit.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEntry)
    .filter((record) => record.outcome !== ('started' as string));
  const fills = records.filter((record) => record.tool === 'fill');
  assert.deepEqual(
    fills.map((record) => [record.approver, record.choice, record.outcome]),
    [
      ['terminal', `site-grant ${origin} 15m`, 'ok'],
      ['site grant (given through terminal)', `site-grant ${origin} 15m`, 'ok'],
    ],
  );
  const revoked = records.find((record) => record.tool === 'site_grant_revoke');
  assert.deepEqual(revoked?.args, { tool: 'fill', origin });
});
