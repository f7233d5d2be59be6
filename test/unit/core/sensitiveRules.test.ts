// The URL matcher and rule set: parse-then-match semantics of DESIGN.md 3.4.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultRules, parseRulesText, RuleSet } from '../../../src/core/sensitiveRules.ts';
import { compilePattern, matchesPattern } from '../../../src/core/urlPattern.ts';

const matches = (pattern: string, url: string) => matchesPattern(compilePattern(pattern), new URL(url));
const defaults = new RuleSet(defaultRules());

describe('URL patterns', () => {
  test('apex vs subdomain: *.example.com covers both, a plain host only itself', () => {
    assert.ok(matches('*://*.example.com/*', 'https://example.com/'));
    assert.ok(matches('*://*.example.com/*', 'https://a.b.example.com/x'));
    assert.ok(!matches('*://*.example.com/*', 'https://badexample.com/'));
    assert.ok(!matches('*://*.example.com/*', 'https://example.com.evil.io/'));
    assert.ok(matches('*://example.com/*', 'https://example.com/x'));
    assert.ok(!matches('*://example.com/*', 'https://www.example.com/x'));
  });

  test('host case, trailing dot, IDN in punycode', () => {
    assert.ok(matches('*://github.com/settings/*', 'https://GitHub.COM/settings/keys'));
    assert.ok(matches('*://github.com/settings/*', 'https://github.com./settings/keys'));
    assert.ok(matches('*://bücher.de/*', 'https://xn--bcher-kva.de/konto'));
    assert.ok(matches('*://xn--bcher-kva.de/*', 'https://bücher.de/konto'));
  });

  test('userinfo and ports are ignored unless the rule names a port', () => {
    assert.ok(matches('*://github.com/settings/*', 'https://user:pw@github.com/settings'));
    assert.ok(matches('*://github.com/settings/*', 'https://github.com:8443/settings'));
    assert.ok(matches('*://github.com:8443/settings/*', 'https://github.com:8443/settings'));
    assert.ok(!matches('*://github.com:8443/settings/*', 'https://github.com/settings'));
    assert.ok(matches('https://a.test:443/*', 'https://a.test/'));
  });

  test('scheme * is http and https only', () => {
    assert.ok(matches('*://a.test/*', 'http://a.test/'));
    assert.ok(!matches('*://a.test/*', 'ftp://a.test/'));
    assert.ok(!matches('https://a.test/*', 'http://a.test/'));
  });

  test('paths: percent-encoding, dot-segments, case, /settings without slash, segment boundary', () => {
    assert.ok(matches('*://github.com/settings/*', 'https://github.com/settings'));
    assert.ok(matches('*://github.com/settings/*', 'https://github.com/SETTINGS/profile'));
    assert.ok(matches('*://github.com/settings/*', 'https://github.com/%73ettings/profile'));
    assert.ok(matches('*://github.com/settings/*', 'https://github.com/x/../settings/'));
    assert.ok(matches('*://github.com/settings/*', 'https://github.com/x/%2e%2e/settings'));
    assert.ok(matches('*://github.com/settings/*', 'https://github.com/x%2F..%2Fsettings'));
    assert.ok(!matches('*://github.com/settings/*', 'https://github.com/settingsx'));
    assert.ok(!matches('*://github.com/settings/*', 'https://github.com/my/settings'));
    assert.ok(matches('*://github.com/*/settings/*', 'https://github.com/acme/repo/settings/hooks'));
  });

  test('query and fragment are ignored unless the rule names a query', () => {
    assert.ok(matches('*://a.test/admin/*', 'https://a.test/admin?x=1#y'));
    assert.ok(matches('*://a.test/page?tab=billing*', 'https://a.test/page?tab=billing&x=1'));
    assert.ok(!matches('*://a.test/page?tab=billing*', 'https://a.test/page?tab=home'));
  });

  test('bad patterns say what is wrong', () => {
    assert.throws(() => compilePattern('github.com/settings'), /needs a scheme/);
    assert.throws(() => compilePattern('*://git*hub.com/'), /whole leading or trailing labels/);
    assert.throws(() => compilePattern('*://a.test:abc/'), /not a number/);
  });
});

describe('the rule set', () => {
  test('covers the 14 rules of the source article', () => {
    const cases = [
      'https://www.bank.example/login',
      'https://www.alipay.com/x',
      'https://www.paypal.com/myaccount',
      'https://paypal.com/',
      'https://dashboard.stripe.com/payments',
      'https://github.com/settings/keys',
      'https://gist.github.com/settings/x',
      'https://github.com/acme/app/settings',
      'https://api.github.com/acme/settings/x',
      'https://acme.feishu.cn/admin/index',
      'https://acme.larksuite.com/admin/',
      'https://x.console.cloud.google.com/iam',
      'https://eu.console.aws.amazon.com/ec2',
      'https://a.portal.azure.com/#home',
    ];
    for (const url of cases) assert.ok(defaults.match(url), `${url} should be sensitive`);
    assert.equal(defaults.match('https://github.com/acme/app'), undefined);
    assert.equal(defaults.match('https://example.com/settings'), undefined);
  });

  test('blob: uses its inner origin; about:blank inherits its creator; data: matches nothing by itself', () => {
    assert.ok(defaults.match('blob:https://www.paypal.com/1f2e-33'));
    assert.ok(defaults.match('about:blank', 'https://github.com/settings/keys'));
    assert.equal(defaults.match('about:blank'), undefined);
    assert.equal(defaults.match('data:text/html,<b>x</b>'), undefined);
  });

  test('says which rule matched and where it came from', () => {
    const hit = defaults.match('https://www.paypal.com/');
    assert.deepEqual(hit, { rule: '*://*.paypal.com/*', origin: 'default (banking and payments)' });
  });

  test('a rules file: comments, blank lines, bad lines reported with their line number and skipped', () => {
    const parsed = parseRulesText(
      '# mine\n\n*://intranet.test/hr/*  # HR\nnot a pattern\n*://*.corp.test/*\n',
      'rules.txt',
    );
    assert.equal(parsed.rules.length, 2);
    assert.equal(parsed.problems.length, 1);
    assert.equal(parsed.problems[0]?.origin, 'rules.txt:4');
    const set = new RuleSet(parsed.rules);
    assert.equal(set.match('https://intranet.test/hr/salaries')?.origin, 'rules.txt:3');
    assert.equal(set.match('https://intranet.test/wiki'), undefined);
  });
});
