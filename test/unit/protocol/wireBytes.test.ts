// Every cap counts the bytes that travel (issue 17): the UTF-8 of a value's JSON text. Characters lie: a control
// character is 6 bytes once escaped, a euro sign 3, an emoji 4.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodedBytes, utf8Bytes } from '../../../src/protocol/siteTools.ts';

test('utf8Bytes matches Buffer.byteLength on every kind of character', () => {
  for (const text of ['', 'abc', 'é', '€', '😀', 'a\u0001b', `lone ${'\ud800'} surrogate`, '€'.repeat(8000)])
    assert.equal(utf8Bytes(text), Buffer.byteLength(text), JSON.stringify(text.slice(0, 10)));
});

test('encodedBytes counts the JSON text: 200,000 control characters are 1.2 MB', () => {
  assert.equal(encodedBytes('\u0001'.repeat(200_000)), 1_200_002);
  assert.equal(encodedBytes({ description: '€'.repeat(8000) }), 24_000 + '{"description":""}'.length);
  assert.equal(encodedBytes(undefined), 0);
});
