// A question's arguments are shown whole or not asked (protocol/shownArgs.ts): nothing is cut, every string is
// made visible, and the limit is on what is shown.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argsUnaskable, questionArgsMaxChars, shownArgsLine } from '../../../src/protocol/shownArgs.ts';

test('every value and key is shown whole, escapes and invisible characters made visible', () => {
  const key = `ssh-ed25519 ${'A'.repeat(1500)}KEYEND`;
  const line = shownArgsLine({
    fields: [{ value: '·'.repeat(900) }, { value: key }],
    'na\u202Eme': 'x\u001b[2Jy',
  });
  assert.ok(line.includes('KEYEND'), 'a value past 1,000 characters, after another long one, was cut');
  assert.ok(line.includes('na<U+202E>me'), line.slice(-80));
  assert.ok(line.includes('x<U+001B>[2Jy'), line.slice(-80));
  assert.equal(argsUnaskable({ fields: [{ value: key }] }), undefined);
});

test('past the limit, as shown, the question is refused and says why', () => {
  const fits = { value: 'a'.repeat(questionArgsMaxChars - 20) };
  assert.equal(argsUnaskable(fits), undefined);
  const over = { value: 'a'.repeat(questionArgsMaxChars) };
  assert.match(
    argsUnaskable(over) ?? '',
    /too long for the human to read whole in the question \(10012 characters as shown, at most 10000\)/,
  );
  // Every space shows, and counts: padding made of spaces is refused as any other.
  assert.match(argsUnaskable({ value: `${' '.repeat(10_000)}ATTACKERKEY` }) ?? '', /too long/);
});

test('shown character for character: nothing collapsed, trimmed or dropped, so different values never look the same', () => {
  const pairs = [
    ['a b', 'a  b'],
    ['to', 'to '],
    ['k\u0300\u0300\u0300', 'k\u0300\u0300\u0300\u0300'],
    ['a\u00a0b', 'a b'],
    ['a\tb', 'a b'],
  ];
  for (const [one, other] of pairs)
    assert.notEqual(shownArgsLine({ v: one }), shownArgsLine({ v: other }), one);
  assert.equal(shownArgsLine({ v: 'k\u0300\u0300\u0300\u0300' }), '{"v":"k\u0300\u0300\u0300<U+0300>"}');
});

test('names of one object that read alike are refused, at any depth', () => {
  assert.match(
    argsUnaskable({ to: 'x', 'to ': 'y' }) ?? '',
    /Two argument names read alike \("to" and "to "\)/,
  );
  assert.match(argsUnaskable({ payment: [{ Amount: 1, amount: 2 }] }) ?? '', /read alike/);
  assert.match(argsUnaskable({ a: { 'to\u200b': 1, to: 2 } }) ?? '', /"to<U\+200B>" and "to"/);
  assert.equal(argsUnaskable({ to: 'x', from: { to: 'y' } }), undefined);
});
