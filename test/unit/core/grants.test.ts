// Approval grants: approve-all expiry and clearing; single-use approvals bound to tab, document, origin, action.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApproveAllGrants, canonicalAction, SingleUseGrant } from '../../../src/core/grants.ts';

test('approve-all grants cover their tool or the whole server, expire, and clear', () => {
  let now = 1_000;
  const grants = new ApproveAllGrants(60_000, () => now);
  grants.grant({ kind: 'tool', tool: 'click' });
  assert.ok(grants.covers('click'));
  assert.ok(!grants.covers('fill'));
  grants.grant({ kind: 'server' });
  assert.ok(grants.covers('fill'));
  now += 60_001;
  assert.ok(!grants.covers('click') && !grants.covers('fill'));
  grants.grant({ kind: 'tool', tool: 'click' });
  grants.clear();
  assert.deepEqual(grants.list(), []);
});

test('a single approval is spent once, only on the exact action in the same document', () => {
  let now = 0;
  const binding = {
    tabId: 'p1',
    documentId: '3',
    origin: 'https://github.com',
    action: canonicalAction('click', { ref: 'e5' }),
  };
  const grant = new SingleUseGrant(binding, 10_000, () => now);
  assert.ok(!grant.spend({ ...binding, documentId: '4' }), 'another document');
  assert.ok(!grant.spend({ ...binding, action: canonicalAction('click', { ref: 'e6' }) }), 'another action');
  assert.ok(grant.spend(binding));
  assert.ok(!grant.spend(binding), 'spent');
  const late = new SingleUseGrant(binding, 10_000, () => now);
  now = 10_000;
  assert.ok(!late.spend(binding), 'expired');
});

test('canonical actions ignore key order, at every depth', () => {
  assert.equal(
    canonicalAction('fill_form', { fields: [{ value: 'a', ref: 'e1' }], pageId: 'p1' }),
    canonicalAction('fill_form', { pageId: 'p1', fields: [{ ref: 'e1', value: 'a' }] }),
  );
});
