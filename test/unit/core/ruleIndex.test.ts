// The host index must never change which rule matches: every URL gets the first rule a linear scan would find.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultRules, parseRulesText, RuleSet } from '../../../src/core/sensitiveRules.ts';
import { matchesOrigin, matchesPattern, urlParts } from '../../../src/core/urlPattern.ts';

const userRules = parseRulesText(
  [
    '*://*.corp.example/admin/*',
    '*://corp.example/*',
    '*://*.bank.*/*',
    '*://bank.example.*/login',
    '*://pay.example.com/*',
    '*://*.example.com/settings/*',
    '*://intra??.example.org/*',
    '*://*/wp-admin/*',
    'https://*.xn--bcher-kva.example/*',
  ].join('\n'),
  'test',
).rules;
const set = new RuleSet([...defaultRules(), ...userRules]);

const urls = [
  'https://corp.example/',
  'https://a.b.corp.example/admin/x',
  'https://www.bank.co.uk/',
  'https://bank.example.com/login',
  'https://bank.example.com/other',
  'https://pay.example.com./x',
  'https://x.example.com/settings',
  'https://example.com/settings/tokens',
  'https://intra42.example.org/',
  'https://blog.example.net/wp-admin/edit',
  'https://shop.bücher.example/',
  'https://github.com/settings/keys',
  'https://github.com/acme/repo/settings/hooks',
  'https://console.aws.amazon.com/',
  'http://127.0.0.1:8080/admin',
  'https://news.example/',
];

test('the indexed rule set answers as a linear scan over the rules in order', () => {
  for (const url of urls) {
    const parts = urlParts(new URL(url));
    const linear = set.rules.find((rule) => matchesPattern(rule.pattern, parts));
    assert.equal(set.match(url)?.rule, linear?.pattern.source, url);
    const linearOrigin = set.rules.find((rule) => matchesOrigin(rule.pattern, parts));
    assert.equal(set.matchOrigin(url)?.rule, linearOrigin?.pattern.source, url);
    // Asked twice (the parse is kept): the same answer.
    assert.equal(set.match(url)?.rule, linear?.pattern.source, url);
  }
});

test('a thousand rules still find the one rule of a host, and none elsewhere', () => {
  const many = parseRulesText(
    Array.from({ length: 1000 }, (_, i) => `*://*.corp${i}.example/admin${i}/*`).join('\n'),
    'many',
  ).rules;
  const big = new RuleSet([...defaultRules(), ...many]);
  assert.equal(
    big.match('https://x.corp512.example/admin512/users')?.rule,
    '*://*.corp512.example/admin512/*',
  );
  assert.equal(big.match('https://x.corp512.example/admin513/users'), undefined);
  assert.equal(big.match('https://intranet.example/wiki'), undefined);
});
