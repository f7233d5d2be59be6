// Relay site calls go through the one call path: what is judged is the document the extension says will run the
// call, located again after the human answers. A shared shop whose tab moves to a path a --rules file marks
// sensitive asks even under "always allow", and runs nothing before the human approves; a tab that moves while
// the human decides is asked about again; every call is in the relay's audit log with agent, workspace, site tool,
// decision and outcome.

import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { readAuditLog } from '../../src/audit/auditLog.ts';
import { startWebmcpSite } from '../fixtures/webmcpSite.ts';
import type { Fixture } from '../helpers/fixtureServer.ts';
import { runCli } from '../helpers/runCli.ts';
import { callTool, openAndShare, type Rig, startRig, waitForTools } from '../helpers/webmcpRig.ts';

type Calls = [string, { sku?: string }][];
const callsOf = (page: Page): Promise<Calls> => page.evaluate('window.calls') as Promise<Calls>;
const skusOf = async (page: Page): Promise<string[]> =>
  (await callsOf(page)).map(([, input]) => input.sku ?? '');

describe('relay calls judged on the document that runs them', () => {
  let site: Fixture;
  let rig: Rig;
  let shop: Page;
  let popup: Page;
  let origin: string;
  const rules = join(tmpdir(), `tabward-relay-rules-${process.pid}.txt`);
  const call = (sku: string) =>
    callTool(rig.agent, 'callSiteTool', { site: origin, tool: 'addToCart', arguments: { sku, qty: 1 } });
  const approval = () => popup.locator('#pending .approval').first();

  before(async () => {
    site = await startWebmcpSite();
    writeFileSync(rules, '*://127.0.0.1:*/admin/*\n');
    rig = await startRig({ webmcp: true, relayArgs: ['--call-timeout', '15', '--rules', rules] });
    origin = site.url('127.0.0.1', '').replace(/\/$/, '');
    ({ page: shop, popup } = await openAndShare(rig, site.url('127.0.0.1', '/shop'), true));
    await waitForTools(rig.agent, (text) => text.includes('addToCart'));
  });
  after(async () => {
    await rig?.close();
    await site?.close();
    rmSync(rules, { force: true });
  });

  test('"always allow" on the shop; the tab moves to a sensitive path: asked again, nothing runs unasked', async () => {
    const first = call('A1');
    await approval().waitFor({ timeout: 10_000 });
    await approval().locator('.always').click();
    assert.match((await first).text, /added 1 x A1/);
    assert.match((await call('A2')).text, /added 1 x A2/, '"always allow" stops asking');

    // Same document, new URL (pushState): the site announced nothing new, the document that would run it moved.
    await shop.evaluate("history.pushState({}, '', '/admin/shop')");
    const moved = call('P1');
    await approval().waitFor({ timeout: 10_000 });
    assert.match(
      await approval().innerText(),
      /\/admin\/shop.*sensitive rule \*:\/\/127\.0\.0\.1:\*\/admin\/\*/s,
    );
    assert.equal(await approval().locator('.always').count(), 0, 'no "always" on a sensitive page');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(!(await skusOf(shop)).includes('P1'), 'nothing ran before the human answered');
    await approval().locator('.deny').click();
    const denied = await moved;
    assert.ok(denied.isError);
    assert.match(denied.text, /rejected: task-\w+: The user rejected addToCart/);
    assert.ok(!(await skusOf(shop)).includes('P1'));

    // A real navigation to the sensitive path: the new document is judged, and runs only once approved.
    await shop.goto(site.url('127.0.0.1', '/admin/shop'));
    await shop.evaluate('window.ready');
    const navigated = call('N1');
    await approval().waitFor({ timeout: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(await skusOf(shop), [], 'nothing ran before the human answered');
    await approval().locator('.approve').click();
    assert.match((await navigated).text, /added 1 x N1/);
    assert.deepEqual(await skusOf(shop), ['N1']);
  });

  test('a tab that moves while the human decides is asked about again; the first approval runs nothing', async () => {
    const pending = call('M1');
    await approval().waitFor({ timeout: 10_000 });
    const firstTask = await approval().getAttribute('data-task');
    await shop.evaluate("history.pushState({}, '', '/admin/elsewhere')");
    await approval().locator('.approve').click();
    // The relay locates the document again after the answer: another URL, another question.
    await popup.locator('#pending .approval', { hasText: '/admin/elsewhere' }).waitFor({ timeout: 10_000 });
    assert.equal(await approval().getAttribute('data-task'), firstTask, 'the same task, asked again');
    assert.ok(!(await skusOf(shop)).includes('M1'), 'the approval for the old URL ran nothing');
    await approval().locator('.deny').click();
    assert.ok((await pending).isError);
    assert.ok(!(await skusOf(shop)).includes('M1'));
  });

  test('every relay call is in the audit log: agent, workspace, site tool, decision, outcome', async () => {
    const path = join(rig.home, 'audit.jsonl');
    const relay = readAuditLog(path).entries.filter((entry) => entry.frontEnd === 'relay');
    const bySku = (sku: string) => relay.find((entry) => entry.args.sku === sku);
    for (const sku of ['A1', 'A2', 'P1', 'N1', 'M1'])
      assert.deepEqual(
        { ...bySku(sku)?.subject, task: undefined },
        { agent: 'ci-agent', workspace: 'team', site: origin, siteTool: 'addToCart', task: undefined },
        sku,
      );
    assert.deepEqual(
      ['A1', 'A2', 'P1', 'N1', 'M1'].map((sku) => {
        const entry = bySku(sku);
        return [sku, entry?.decision, entry?.choice, entry?.outcome, entry?.kind];
      }),
      [
        // Asked once; the re-check after "always" acts under the standing permission the human just gave.
        ['A1', 'allow', 'approve', 'ok', 'site'],
        ['A2', 'allow', undefined, 'ok', 'site'],
        ['P1', 'ask', 'reject', 'rejected', 'site'],
        ['N1', 'ask', 'approve', 'ok', 'site'],
        ['M1', 'ask', 'reject', 'rejected', 'site'],
      ],
    );
    assert.match(bySku('P1')?.url ?? '', /\/admin\/shop$/);
    assert.equal(bySku('P1')?.rule, '*://127.0.0.1:*/admin/*');
    assert.equal(bySku('A2')?.approver, undefined);
    const shown = await runCli(['audit', '--audit-log', path], {});
    assert.match(
      shown.stdout,
      /relay shared addToCart http:\S+\/admin\/shop ask rule=\S+ → extension popup: reject rejected/,
    );
  });
});
