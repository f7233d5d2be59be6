// Selector candidates that survive a reload: test ids, ids that do not look generated, field names (each only when
// the page found it alone), then role and name for Playwright to check.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cssEscape,
  cssString,
  looksGenerated,
  roleSelector,
  selectorCandidates,
} from '../../../src/core/durableSelectors.ts';

const alone = (value: string) => ({ value, unique: true });
const selectors = (facts: Parameters<typeof selectorCandidates>[0]) =>
  selectorCandidates(facts).map((candidate) => `${candidate.checked ? '' : '?'}${candidate.selector}`);

test('candidates come best first: test id, id, field name, then role and name (to be checked)', () => {
  assert.deepEqual(
    selectors({
      tag: 'INPUT',
      testId: { attribute: 'data-testid', ...alone('login "user"') },
      id: alone('user'),
      fieldName: alone('username'),
      role: 'textbox',
      name: 'User  name',
    }),
    [
      '[data-testid="login \\"user\\""]',
      '#user',
      'input[name="username"]',
      '?role=textbox[name="User name"]',
    ],
  );
  // Shared by several elements in the page: not a way to find this one.
  assert.deepEqual(
    selectors({
      tag: 'INPUT',
      id: { value: 'q', unique: false },
      fieldName: { value: 'q', unique: false },
      role: 'searchbox',
      name: 'Search',
    }),
    ['?role=searchbox[name="Search"]'],
  );
});

test('ids and names a reload changes are not used', () => {
  for (const id of [':r1:', '«r2»', 'ember1234', 'input-1699', 'a1b2c3d4e5', 'radix-7', 'headlessui-menu-2'])
    assert.ok(looksGenerated(id), id);
  for (const id of ['export', 'user-name', 'step2', 'facade', 'orders_table'])
    assert.ok(!looksGenerated(id), id);
  assert.deepEqual(selectors({ tag: 'BUTTON', id: alone(':r5:'), role: 'button', name: 'Go' }), [
    '?role=button[name="Go"]',
  ]);
});

test('role selectors need a role a person points at and a name', () => {
  assert.equal(roleSelector('generic', 'x'), undefined);
  assert.equal(roleSelector('button', '  '), undefined);
  assert.equal(roleSelector('button', 'x'.repeat(121)), undefined);
  assert.equal(roleSelector('link', 'Say "hi"\\'), 'role=link[name="Say \\"hi\\"\\\\"]');
});

test('CSS escaping of ids and strings', () => {
  assert.equal(cssEscape('1a'), '\\31 a');
  assert.equal(cssEscape('-1'), '-\\31 ');
  assert.equal(cssEscape('-'), '\\-');
  assert.equal(cssEscape('a.b#c'), 'a\\.b\\#c');
  assert.equal(cssEscape('名前'), '名前');
  assert.equal(cssString('a\nb'), '"a\\a b"');
});
