// The doors of tabward's local servers: Host, Origin and the bearer token.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearerMatches, checkLocalRequest, localHosts, sameSecret } from '../../../src/core/localRequest.ts';

const hosts = localHosts('127.0.0.1', 8931);

test('Host must name this server; an Origin, when sent, must be this server', () => {
  assert.equal(checkLocalRequest('127.0.0.1:8931', undefined, hosts), 'ok');
  assert.equal(checkLocalRequest('localhost:8931', 'http://localhost:8931', hosts), 'ok');
  assert.equal(checkLocalRequest('[::1]:8931', 'http://[::1]:8931', hosts), 'ok');
  assert.equal(checkLocalRequest('evil.example:8931', undefined, hosts), 'bad-host');
  assert.equal(checkLocalRequest(undefined, undefined, hosts), 'bad-host');
  for (const origin of ['http://evil.example', 'null', 'http://127.0.0.1:8932', 'https://127.0.0.1:8931', ''])
    assert.equal(checkLocalRequest('127.0.0.1:8931', origin, hosts), 'bad-origin', origin);
  assert.deepEqual(localHosts('::1', 80).slice(0, 1), ['[::1]:80']);
});

test('the bearer token: scheme case-insensitive, exact token, nothing else', () => {
  const token = 'abcdefghijklmnop';
  assert.ok(bearerMatches(`Bearer ${token}`, token));
  assert.ok(bearerMatches(`bearer ${token}`, token));
  for (const header of [
    undefined,
    '',
    'Bearer',
    `Bearer ${token}x`,
    `Bearer ${token.slice(1)}`,
    `Basic ${token}`,
    token,
  ])
    assert.ok(!bearerMatches(header, token), String(header));
  assert.ok(!sameSecret('', ''), 'an empty secret never matches');
  assert.ok(!sameSecret('abc', 'abd'));
  assert.ok(sameSecret('abc', 'abc'));
});
