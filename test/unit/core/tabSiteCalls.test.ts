// A page's own WebMCP tool called from tabward's MCP server on the agent's tab (call_site_tool): judged like a
// click after the sensitive-page rule every site call has.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decide, type GuardFacts } from '../../../src/core/guard.ts';
import type { WritePolicy } from '../../../src/core/kinds.ts';
import { defaultRules, RuleSet } from '../../../src/core/sensitiveRules.ts';
import { tabSiteCallFacts } from '../../../src/core/siteCalls.ts';

const rules = new RuleSet(defaultRules());

function verdict(
  tool: { name: string; description: string; readOnly: boolean },
  url: string,
  given: { mode?: GuardFacts['mode']; policy?: WritePolicy; approveAll?: boolean } = {},
) {
  return decide(
    {
      tool: 'call_site_tool',
      ...tabSiteCallFacts(tool, [{ url }]),
      tab: { id: 'p1', ownedByAgent: true },
      mode: given.mode ?? 'isolated',
      taintedOrigins: [],
      policy: given.policy ?? 'default',
      approveAll: given.approveAll ?? false,
    },
    rules,
  );
}

const list = { name: 'listOrders', description: 'Orders, newest first', readOnly: true };
const refund = { name: 'refundOrder', description: 'Refund one order in full.', readOnly: false };
const tidy = { name: 'tidyOrders', description: 'Delete old orders', readOnly: true };

test('rule table: like a click, after sensitive pages (where every call asks)', () => {
  const cases: [string, ReturnType<typeof verdict>['verdict'], ReturnType<typeof verdict>][] = [
    ['trusted read, ordinary page', 'allow', verdict(list, 'https://shop.example/')],
    ['trusted read, sensitive page', 'ask', verdict(list, 'https://www.paypal.com/orders')],
    ['write, isolated', 'allow', verdict(refund, 'https://shop.example/')],
    ['write, shared', 'ask', verdict(refund, 'https://shop.example/', { mode: 'shared' })],
    [
      'write, shared, approve-all',
      'allow',
      verdict(refund, 'https://shop.example/', { mode: 'shared', approveAll: true }),
    ],
    [
      'write, sensitive, approve-all',
      'ask',
      verdict(refund, 'https://www.paypal.com/', { approveAll: true }),
    ],
    ['distrusted hint, strict', 'ask', verdict(tidy, 'https://shop.example/', { policy: 'strict' })],
    [
      'destructive words, destructive-asks',
      'ask',
      verdict(refund, 'https://shop.example/', { policy: 'destructive-asks' }),
    ],
    [
      'read, destructive-asks',
      'allow',
      verdict(list, 'https://shop.example/', { policy: 'destructive-asks' }),
    ],
  ];
  for (const [name, expected, got] of cases) assert.equal(got.verdict, expected, name);
  const sensitive = verdict(list, 'https://www.paypal.com/orders');
  assert.ok(sensitive.verdict === 'ask' && !sensitive.approveAllAllowed && sensitive.sensitive);
});

test('facts: the kind follows the trusted hint; arguments carry data; no standing permission', () => {
  const facts = tabSiteCallFacts(tidy, [{ url: 'https://shop.example/' }]);
  assert.equal(facts.kind, 'write');
  assert.equal(facts.carriesData, true);
  assert.equal(facts.site?.standingPermission, undefined);
  assert.match(facts.looksDestructive ?? '', /reads as destructive/);
  assert.equal(tabSiteCallFacts(list, [{ url: 'https://shop.example/' }]).kind, 'read');
});
