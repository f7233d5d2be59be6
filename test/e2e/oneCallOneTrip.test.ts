// One MCP call is one trip (docs/architecture.md "One call, one response"): a click, with or without the
// `snapshot` option, enters ToolRunner.call once and CallPath.run once; the snapshot it asks for is read inside the
// same audited call, and a sensitive page it shows taints all the same. Measured by wrapping both methods of the
// client's runner and call path with counters. In-process (test/helpers/inProcessMcp.ts), real Chromium.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

let site: Fixture;
let tw: InProcessBrowser;
const url = (path: string) => site.url('shop.test', path);

before(async () => {
  site = await startFixture({
    'GET /list': (_req, _body, res) =>
      html(
        res,
        `<title>List</title><a href="/item">Item</a> <a href="${site.url('vault.test', '/safe')}">Vault</a>`,
      ),
    'GET /item': (_req, _body, res) => html(res, '<title>Item</title><p>Item detail</p>'),
    'GET /safe': (_req, _body, res) => html(res, '<title>Vault</title><p>Vault contents</p>'),
  });
  tw = await startInProcess({ rules: ['*://vault.test/*'] });
});
after(async () => {
  await tw?.close();
  await site?.close();
});

/** Counts each entry into the runner's `call` and its call path's `run`, internal re-entries included. */
function countTrips(mcp: InProcessMcp): { runner: number; path: number } {
  const counts = { runner: 0, path: 0 };
  const { runner } = mcp;
  const call = runner.call.bind(runner);
  runner.call = (...args) => {
    counts.runner += 1;
    return call(...args);
  };
  const run = runner.path.run.bind(runner.path);
  runner.path.run = (...args) => {
    counts.path += 1;
    return run(...args);
  };
  return counts;
}

describe('one call, one trip', { timeout: 120_000 }, () => {
  for (const snapshot of [false, true])
    test(`a click${snapshot ? ' with snapshot' : ''} enters the runner once and the call path once`, async () => {
      const mcp = await tw.connect();
      const list = await mcp.call('new_page', { url: url('/list'), snapshot: true });
      const counts = countTrips(mcp);
      const clicked = await mcp.call('click', {
        ref: refOf(list.text, 'Item'),
        ...(snapshot ? { snapshot } : {}),
      });
      assert.ok(!clicked.isError, clicked.text);
      assert.deepEqual(counts, { runner: 1, path: 1 });
      if (snapshot) assert.match(clicked.text, /<untrusted>[\s\S]*Item detail/, clicked.text);
      const ends = mcp.audit().filter((record) => record.tool === 'click' && record.outcome !== 'started');
      assert.equal(ends.length, 1, 'one audited call');
      assert.deepEqual(
        'followUps' in (ends[0] ?? {}) ? (ends[0] as { followUps?: string[] }).followUps : undefined,
        snapshot ? [`take_snapshot of ${/^Tab (p\d+)/m.exec(list.text)?.[1]}: ok`] : undefined,
      );
      await mcp.close();
    });

  test('the snapshot of a sensitive page a click led to taints like a take_snapshot would', async () => {
    const mcp = await tw.connect();
    const list = await mcp.call('new_page', { url: url('/list'), snapshot: true });
    mcp.human.will({ decision: 'approve' });
    const counts = countTrips(mcp);
    const clicked = await mcp.call('click', { ref: refOf(list.text, 'Vault'), snapshot: true });
    assert.ok(!clicked.isError, clicked.text);
    assert.deepEqual(counts, { runner: 1, path: 1 });
    assert.match(clicked.text, /Vault contents/, clicked.text);
    // Shown by a result (the snapshot), not only seen going by at the choke point.
    assert.deepEqual(mcp.runner.state.describeTaint(), [new URL(site.url('vault.test', '/')).origin]);
    await mcp.close();
  });
});
