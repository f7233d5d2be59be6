// The network taint judgement and what a held request is shown as: same-site hosts count as one site, a
// navigation carries data only in its document requests, hops and opaque documents, and a look-alike
// international host name is shown as it reads, flagged.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  hostKeyOf,
  type RequestFacts,
  requestDestination,
  taintReason,
} from '../../../src/core/networkHolds.ts';

const request = (url: string, extra: Partial<RequestFacts> = {}): RequestFacts => ({
  method: 'GET',
  url,
  document: false,
  mainFrame: false,
  hop: false,
  ...extra,
});
const context = {
  tainted: ['https://github.com'],
  allowed: new Set<string>(),
  acting: ['https://github.com'],
  navigationOnly: false,
};

test("hosts: scheme, host name and a port not the scheme's own, WebSockets as their http twins", () => {
  assert.equal(hostKeyOf('https://api.github.com/x'), 'https://api.github.com');
  // Another port is another server (often another application of the machine); the scheme's own is no port.
  assert.equal(hostKeyOf('https://a.bank.co.uk:8443/'), 'https://a.bank.co.uk:8443');
  assert.equal(hostKeyOf('https://a.bank.co.uk:443/'), 'https://a.bank.co.uk');
  assert.equal(hostKeyOf('ws://live.example:80/'), 'http://live.example');
  assert.equal(hostKeyOf('wss://live.github.com/socket'), 'https://live.github.com');
  assert.equal(hostKeyOf('data:text/html,x'), undefined);
  assert.equal(hostKeyOf('https://xn--a.evil.example/'), undefined);
});

test('after a sensitive read, another site is held; the same site, an acting or allowed one is not', () => {
  assert.equal(taintReason(request('https://evil.example/p'), { ...context, tainted: [] }), undefined);
  assert.match(
    taintReason(request('https://evil.example/p'), context) ?? '',
    /could carry that to https:\/\/evil\.example/,
  );
  // Another host of the same site is another place: mail.google.com read does not make docs.google.com safe.
  assert.ok(
    taintReason(request('https://docs.google.com/forms/x'), {
      ...context,
      tainted: ['https://mail.google.com'],
    }),
  );
  assert.equal(taintReason(request('https://github.com/graphql'), context), undefined);
  // An address tabward cannot read is never let go.
  assert.match(taintReason(request('https://xn--a.evil.example/?d=1'), context) ?? '', /cannot read/);
  assert.equal(
    taintReason(request('https://notes.example/a'), { ...context, acting: ['https://notes.example'] }),
    undefined,
  );
  const allowed = new Set(['https://evil.example']);
  assert.equal(taintReason(request('https://evil.example/p'), { ...context, allowed }), undefined);
  // What was read on a host goes back to that host only: another host read is no place for it (an attacker's
  // host a broad rule calls sensitive, read once, would take what was read on github.com).
  const twoReads = { ...context, acting: [], tainted: ['https://github.com', 'https://bank.evil.example'] };
  assert.match(
    taintReason(request('https://bank.evil.example/k?d=1'), twoReads) ?? '',
    /read sensitive pages \(or typed a secret\) on github\.com, and this request could carry that to https:\/\/bank\.evil\.example/,
  );
  assert.match(
    taintReason(request('https://github.com/graphql'), twoReads) ?? '',
    /on bank\.evil\.example, and this request could carry that to https:\/\/github\.com/,
  );
  assert.equal(
    taintReason(request('https://github.com/graphql'), {
      ...twoReads,
      allowed: new Set(['https://github.com']),
    }),
    undefined,
  );
});

test("a navigation carries data only in the tab's document request and hops, and what an opaque document requests", () => {
  const nav = { ...context, navigationOnly: true };
  assert.equal(
    taintReason(request('https://cdn.example/app.js', { frameUrl: 'https://notes.example/' }), nav),
    undefined,
  );
  assert.equal(
    taintReason(
      request('https://ads.example/frame', { document: true, frameUrl: 'https://notes.example/' }),
      nav,
    ),
    undefined,
  );
  assert.ok(taintReason(request('https://evil.example/?d=1', { document: true, mainFrame: true }), nav));
  assert.ok(
    taintReason(request('https://evil.example/?d=1', { document: true, mainFrame: true, hop: true }), nav),
  );
  assert.ok(taintReason(request('https://evil.example/i.png', { frameUrl: 'data:text/html,<img>' }), nav));
  assert.ok(taintReason(request('https://evil.example/i.png', { frameUrl: 'about:blank' }), nav));
});

test('a held request is shown by method, host and path; data in the URL and look-alike names are flagged', () => {
  assert.equal(
    requestDestination('post', 'https://github.com/settings/delete'),
    'POST github.com/settings/delete',
  );
  assert.equal(
    requestDestination('GET', 'https://evil.example/p?d=ghp_x'),
    'GET evil.example/p (with data in the URL)',
  );
  // An action's own target shows its query (a GET can write), cut when long.
  assert.equal(
    requestDestination('GET', 'https://github.com/settings/sessions?revoke=all#x', true),
    'GET github.com/settings/sessions?revoke=all (and a fragment)',
  );
  assert.equal(
    requestDestination('GET', `https://github.com/s?q=${'a'.repeat(300)}`, true),
    `GET github.com/s?q=${'a'.repeat(300)}`,
  );
  assert.match(
    requestDestination('GET', 'https://аpple.com/'),
    /xn--pple-43d\.com\/ ⚠ international name \(xn--\): may imitate another site/,
  );
  assert.equal(requestDestination('GET', 'data:text/html,x'), 'GET data: document');
});
