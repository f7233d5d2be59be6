// Redaction of secrets written with letters beyond ASCII, and of secrets a page spaces out with invisible or
// non-ASCII characters (joiners, direction marks, combining strokes, emoji presentation selectors): each was
// redacted when the spaced-out separators were Unicode's non-letters, and must stay so now that they are anything
// but an ASCII letter or digit (which also makes letters of other alphabets separators: `pжäжsж…`).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Redactor, redactionMark } from '../../../src/core/redact.ts';

/** The value's characters joined by `between`. */
const spaced = (value: string, between: string) => [...value].join(between);

const cases: Record<string, { readonly secret: string; readonly shown: readonly string[] }> = {
  'a secret with accented letters': {
    secret: 'pässwörd1',
    shown: [
      'PÄSSWÖRD1',
      spaced('pässwörd1', '\u200d'),
      spaced('pässwörd1', ' \u200f'),
      spaced('pässwörd1', 'ж'),
      [...'pässwörd1'].reverse().join('·'),
    ],
  },
  'a Cyrillic secret': {
    secret: 'пароль123',
    shown: [
      'ПАРОЛЬ123',
      spaced('ПАРОЛЬ123', ' '),
      spaced('пароль123', '\u202e'),
      spaced('пароль123', '\u200b'),
    ],
  },
  'a secret of CJK characters': {
    secret: '密码密码密码',
    shown: [spaced('密码密码密码', ' '), spaced('密码密码密码', '\u3000'), spaced('密码密码密码', '、')],
  },
  'a secret holding emoji': {
    secret: 'ab🙂cd🙂ef',
    shown: ['AB🙂CD🙂EF', 'ab🙂\u200dcd🙂\u200def', 'ab🙂\ufe0fcd🙂\ufe0fef', spaced('ab🙂cd🙂ef', '.')],
  },
  'an ASCII secret struck through or joined with invisible characters': {
    secret: 'hunter22',
    shown: [
      spaced('hunter22', '\u0336'),
      spaced('hunter22', '\u2060'),
      spaced('hunter22', '\u00ad'),
      spaced('hunter22', '🙂'),
    ],
  },
  'letters whose case folds onto ASCII (long s, Kelvin sign)': {
    secret: 'secret99',
    shown: ['ſecret99', 'SECRET99', 'ſ e c r e t 9 9'],
  },
};

for (const [what, { secret, shown }] of Object.entries(cases))
  test(`${what}: every form a page shows is redacted`, () => {
    const redactor = new Redactor([secret]);
    for (const form of shown)
      assert.equal(redactor.text(`a ${form} b`), `a ${redactionMark} b`, JSON.stringify(form));
  });

test('ordinary text in other alphabets is left alone', () => {
  const redactor = new Redactor(['пароль123', '密码密码密码']);
  for (const text of ['Пароль от почты: смотрите письмо', '我的密码不是这个', 'p a r o l 1 2 3'])
    assert.equal(redactor.text(text), text);
});
