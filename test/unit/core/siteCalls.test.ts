// A relay site call as guard facts, and the read-only hint the relay and the extension both distrust the same way.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { siteCallFacts } from '../../../src/core/siteCalls.ts';
import { nameReadsDestructive, SiteRules, trustedReadOnly } from '../../../src/protocol/siteRules.ts';

test('facts: the frame is the document that runs the call; kind from the trusted hint; standing permission', () => {
  const facts = siteCallFacts({
    tool: { name: 'searchProducts', readOnly: true },
    documentUrl: 'https://shop.example/search?q=x',
    standingAllow: false,
  });
  assert.deepEqual(facts.frames, [{ url: 'https://shop.example/search?q=x' }]);
  assert.equal(facts.kind, 'read');
  assert.deepEqual(facts.site, { standingPermission: 'ask' });
  const write = siteCallFacts({
    tool: { name: 'wipeCart', readOnly: true },
    documentUrl: 'https://a.example/',
    standingAllow: true,
  });
  assert.equal(write.kind, 'write');
  assert.deepEqual(write.site, { standingPermission: 'always' });
});

test('names that read destructive, in any case style; harmless ones keep their hint', () => {
  for (const name of [
    'deleteItem',
    'DeleteItem',
    'delete_item',
    'bulk-delete',
    'payInvoice',
    'refund',
    'cancelOrder',
  ])
    assert.ok(nameReadsDestructive(name), name);
  for (const name of ['searchProducts', 'listOrders', 'getSettings', 'getAddress', 'exportAll', 'hang'])
    assert.ok(!nameReadsDestructive(name), name);
  assert.equal(trustedReadOnly({ name: 'listOrders', readOnly: true }), true);
  assert.equal(trustedReadOnly({ name: 'listOrders', readOnly: false }), false);
});

test("the extension's rules: the shipped defaults plus what the relay sends; bad patterns skipped", () => {
  const rules = new SiteRules(['*://shop.example/admin/*', 'not a pattern']);
  assert.equal(rules.match('https://github.com/acme/x/settings/keys'), '*://github.com/*/settings/*');
  assert.equal(rules.match('https://shop.example/admin/users'), '*://shop.example/admin/*');
  assert.equal(rules.match('https://shop.example/'), undefined);
  assert.equal(rules.match('not a url'), undefined);
});
