// A question's arguments are shown whole or not asked (protocol/shownArgs.ts): nothing is cut, every string is
// made visible, and the limit is on what is shown.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argsTooLongToAsk, questionArgsMaxChars, shownArgsLine } from '../../../src/protocol/shownArgs.ts';

test('every value and key is shown whole, escapes and invisible characters made visible', () => {
  const key = `ssh-ed25519 ${'A'.repeat(1500)}KEYEND`;
  const line = shownArgsLine({
    fields: [{ value: '·'.repeat(900) }, { value: key }],
    'na\u202Eme': 'x\u001b[2Jy',
  });
  assert.ok(line.includes('KEYEND'), 'a value past 1,000 characters, after another long one, was cut');
  assert.ok(line.includes('na<U+202E>me'), line.slice(-80));
  assert.ok(line.includes('x<U+001B>[2Jy'), line.slice(-80));
  assert.equal(argsTooLongToAsk({ fields: [{ value: key }] }), undefined);
});

test('past the limit, as shown, the question is refused and says why', () => {
  const fits = { value: 'a'.repeat(questionArgsMaxChars - 20) };
  assert.equal(argsTooLongToAsk(fits), undefined);
  const over = { value: 'a'.repeat(questionArgsMaxChars) };
  assert.match(
    argsTooLongToAsk(over) ?? '',
    /too long for the human to read whole in the question \(4012 characters as shown, at most 4000\)/,
  );
  // Whitespace runs show as one space: padding made of spaces does not count, nor hide anything.
  assert.equal(argsTooLongToAsk({ value: `${' '.repeat(10_000)}ATTACKERKEY` }), undefined);
  assert.match(shownArgsLine({ value: `${' '.repeat(10_000)}ATTACKERKEY` }), /ATTACKERKEY/);
});
