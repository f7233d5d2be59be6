// A relay site call as guard facts, and the read-only hint the relay and the extension both distrust the same way.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decide } from '../../../src/core/guard.ts';
import { defaultRules, RuleSet } from '../../../src/core/sensitiveRules.ts';
import { siteCallFacts } from '../../../src/core/siteCalls.ts';
import {
  distrustedHint,
  nameReadsDestructive,
  SiteRules,
  trustedReadOnly,
} from '../../../src/protocol/siteRules.ts';

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
  assert.deepEqual(write.site, {
    standingPermission: 'always',
    distrustedHint: 'the page marks "wipeCart" read-only, but its name reads as destructive',
  });
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
    // Written so that no word stands apart (an attack review): one case, a digit, a verb's form, a hidden character.
    'removeall',
    'DELETEALL',
    'refundorder',
    'transferfunds',
    'delete2Orders',
    'deletesAll',
    'deletingOrder',
    'del\u200beteAccount',
    // Letters drawn like Latin ones, compatibility forms, accents (a later review).
    'd\u0435leteOrders',
    '\u13a0elete',
    '\uff44\uff45\uff4c\uff45\uff54\uff45',
    'd\u00e9let\u00e9_all',
  ])
    assert.ok(nameReadsDestructive(name), name);
  for (const name of [
    'searchProducts',
    'listOrders',
    'getSettings',
    'getAddress',
    'exportAll',
    'hang',
    'listPayments',
    'getShippingRates',
    'café_menu',
  ])
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

// AgentRQ trusted a site's readOnlyHint; here a hint the name or the description contradicts is not believed.
test('a read-only hint is distrusted when the description reads destructive, in English or Chinese', () => {
  const cases: [string, string, RegExp | undefined][] = [
    ['tidyInbox', 'Permanently deletes messages older than a year', /its description says "deletes"/],
    ['syncCart', 'Empties the cart and places order for everything in it', /description says "places order"/],
    ['整理', '清空购物车', /description says "清空"/],
    ['deleteAccount', 'Shows account details', /its name reads as destructive/],
    ['searchProducts', 'Search the catalogue', undefined],
    ['listOrders', 'Orders, newest first, with their refund status', /description says "refund"/],
  ];
  for (const [name, description, why] of cases) {
    const reason = distrustedHint({ name, description, readOnly: true });
    if (why) assert.match(reason ?? '', why, name);
    else assert.equal(reason, undefined, name);
    assert.equal(trustedReadOnly({ name, description, readOnly: true }), why === undefined, name);
    assert.equal(
      distrustedHint({ name, description, readOnly: false }),
      undefined,
      'no claim, nothing to distrust',
    );
  }
});

test("the guard's question says why a read-only hint was not believed", () => {
  const facts = siteCallFacts({
    tool: { name: 'tidyInbox', description: 'Permanently deletes old messages', readOnly: true },
    documentUrl: 'https://mail.example.net/',
    standingAllow: false,
  });
  assert.equal(facts.kind, 'write');
  const verdict = decide(
    {
      ...facts,
      mode: 'shared',
      tab: { id: 'site', ownedByAgent: true },
      taintedOrigins: [],
      policy: 'default',
      approveAll: false,
    },
    new RuleSet(defaultRules()),
  );
  assert.equal(verdict.verdict, 'ask');
  assert.match(
    verdict.verdict === 'ask' ? verdict.reason : '',
    /marks "tidyInbox" read-only, but its description says "deletes"/,
  );
});
