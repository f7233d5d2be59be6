// What an approval's question shows of where the action goes, and what its pass covers: the same places, each
// shown whole or not covered (core/approvedPass.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { passFor } from '../../../src/core/approvedPass.ts';
import type { ActionFacts } from '../../../src/core/callTypes.ts';
import type { Decision, Effect } from '../../../src/core/guard.ts';
import { destinationMaxChars, destinationOf } from '../../../src/core/shownPlaces.ts';

const asked: Decision = {
  verdict: 'ask',
  reason: 'sensitive',
  rule: '*://github.com/settings/*',
  sensitive: true,
  approveAllAllowed: false,
};
const click = (effects: readonly Effect[]): ActionFacts => ({
  tool: 'click',
  kind: 'write',
  frames: [{ url: 'https://evil.example/promo' }],
  effects,
  carriesData: false,
});

test('every form and link is named, forms first, each with its query', () => {
  const facts = click([
    { url: 'https://github.com/settings/profile', submitsForm: false },
    {
      url: 'https://github.com/settings/delete-account?confirm=yes',
      submitsForm: true,
      sendsAs: 'urlencoded',
      fields: [['really', 'yes']],
    },
  ]);
  assert.equal(
    destinationOf(facts).destination,
    'form submit to github.com/settings/delete-account?confirm=yes, or GET github.com/settings/profile',
  );
  const pass = passFor(facts, asked);
  assert.deepEqual(pass?.writeTargets?.length, 1);
  assert.deepEqual(Object.values(pass?.writeForms ?? {}), [
    [{ sendsAs: 'urlencoded', fields: [['really', 'yes']] }],
  ]);
});

test('a post whose fields could not be read opens no write: it is held and asked as it goes', () => {
  const facts = click([{ url: 'https://github.com/settings/keys/add', submitsForm: true }]);
  assert.deepEqual(passFor(facts, asked)?.writeTargets, []);
});

test('a place pushed past the line by a long first one is shown cut and not covered', () => {
  const long = `https://evil.example/${'a'.repeat(destinationMaxChars)}`;
  const revoke = 'https://github.com/settings/sessions?revoke=all';
  const facts = click([
    { url: long, submitsForm: true },
    { url: revoke, submitsForm: false },
  ]);
  const shown = destinationOf(facts).destination ?? '';
  assert.ok(shown.length <= destinationMaxChars, `${shown.length}`);
  assert.match(shown, /cut: not covered by this approval/);
  assert.doesNotMatch(shown, /revoke/);
  const pass = passFor(facts, asked);
  assert.deepEqual(pass?.writeTargets, [], 'the cut form is no write of the pass');
  assert.ok(
    !JSON.stringify(pass?.navigationTargets ?? []).includes('revoke'),
    'the link never shown is no navigation of the pass',
  );
});

test('a query too long for the line is not approved by a question that cut it', () => {
  const url = `https://github.com/settings/sessions?utm=${'x'.repeat(destinationMaxChars)}&revoke=all`;
  const facts = click([{ url, submitsForm: false }]);
  assert.match(destinationOf(facts).destination ?? '', /cut: not covered by this approval\)$/);
  assert.ok(!JSON.stringify(passFor(facts, asked)?.navigationTargets ?? []).includes('revoke'));
});
