// Credentials in HTTP traffic shown by the devtools tools: headers, query and fragment parameters, form, JSON and
// multipart bodies, by the name the value is given under.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isCredentialName, redactBody, redactHeader, redactUrl } from '../../../src/core/httpRedact.ts';
import { redactionMark as R } from '../../../src/core/redact.ts';

test('credential names, and names that only look like one', () => {
  const credentials = [
    'Cookie',
    'set-cookie',
    'Authorization',
    'Proxy-Authorization',
    'x-api-key',
    'X-Auth-Token',
    'x-csrf-token',
    'access_token',
    'refresh-token',
    'client_secret',
    'password',
    'newPassword',
    'user[pass]',
    'otp',
    'sessionId',
    'JSESSIONID',
    'oauth_verifier',
    'cardNumber',
  ];
  for (const name of credentials) assert.ok(isCredentialName(name), name);
  for (const name of ['author', 'content-type', 'footprint', 'keyboard', 'passenger', 'item', 'user-agent'])
    assert.ok(!isCredentialName(name), name);
});

test('headers: a credential header loses its value, others keep theirs', () => {
  assert.equal(redactHeader('authorization', 'Bearer abc'), R);
  assert.equal(redactHeader('cookie', 'sid=1; theme=dark'), R);
  assert.equal(redactHeader('content-type', 'application/json'), 'application/json');
});

test('headers: a URL in a header keeps its credential parameters out (Location, Referer, :path)', () => {
  assert.equal(redactHeader('location', '/cb?access_token=abc&state=s'), `/cb?access_token=${R}&state=s`);
  assert.equal(
    redactHeader('referer', 'https://x.test/cb#id_token=def&state=s'),
    `https://x.test/cb#id_token=${R}&state=s`,
  );
  assert.equal(redactHeader(':path', '/api?api_key=k&page=2'), `/api?api_key=${R}&page=2`);
  assert.equal(redactHeader('refresh', '0; url=/next?token=t'), `0; url=/next?token=${R}`);
  assert.equal(redactHeader('accept', 'text/html;q=0.9'), 'text/html;q=0.9');
});

test('bodies: a JSON name written with escapes, a multipart name in capitals', () => {
  assert.equal(redactBody('{"p\\u0061ssword":"x1"}'), `{"p\\u0061ssword":"${R}"}`);
  const shown = redactBody('--b\r\nContent-Disposition: form-data; NAME="password"\r\n\r\nhunter22\r\n--b--');
  assert.ok(!shown.includes('hunter22'), shown);
});

test('URLs: credential parameters of the query and the fragment', () => {
  assert.equal(
    redactUrl('https://x.test/cb?code2=1&access_token=abc#id_token=def&state=s'),
    `https://x.test/cb?code2=1&access_token=${R}#id_token=${R}&state=s`,
  );
  assert.equal(
    redactUrl('https://x.test/token/abc'),
    'https://x.test/token/abc',
    'the path is not a parameter',
  );
});

test('bodies: forms, JSON (nested and cut short) and multipart', () => {
  assert.equal(redactBody('user=al&password=hunter22&remember=1'), `user=al&password=${R}&remember=1`);
  assert.equal(
    redactBody('user=al&pass%77ord=x'),
    `user=al&pass%77ord=${R}`,
    'an encoded name is read decoded',
  );
  assert.equal(
    redactBody('{"user":"al","password":"hun\\"ter","auth":{"k":1},"tokens":["a","b"],"n":2}'),
    `{"user":"al","password":"${R}","auth":"${R}","tokens":"${R}","n":2}`,
  );
  assert.equal(
    redactBody('{"a":{"apiKey":"k1"},"list":[{"secret":7}]}'),
    `{"a":{"apiKey":"${R}"},"list":[{"secret":"${R}"}]}`,
  );
  assert.equal(redactBody('{"user":"al","password":"hunt'), `{"user":"al","password":"${R}"`, 'cut short');
  const multipart =
    '--b\r\nContent-Disposition: form-data; name="user"\r\n\r\nal\r\n' +
    '--b\r\nContent-Disposition: form-data; name="password"\r\n\r\nhunter22\r\n--b--\r\n';
  const shown = redactBody(multipart);
  assert.ok(!shown.includes('hunter22'), shown);
  assert.match(shown, /name="user"\r\n\r\nal\r\n/);
});
