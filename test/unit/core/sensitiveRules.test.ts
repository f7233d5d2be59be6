// The URL matcher and rule set: parse-then-match semantics of docs/architecture.md "URL patterns".

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

  test('? is one character in the path, in a host label, and reaches into the query as on a URL string', () => {
    assert.ok(matches('*://a.test/v?/admin/*', 'https://a.test/v2/admin/users'));
    assert.ok(!matches('*://a.test/v?/admin/*', 'https://a.test/v/admin/users'));
    assert.ok(!matches('*://a.test/v?/admin/*', 'https://a.test/v10/admin/users'));
    assert.ok(matches('*://mail?.corp.test/*', 'https://mail2.corp.test/inbox'));
    assert.ok(!matches('*://mail?.corp.test/*', 'https://mail.corp.test/inbox'));
    assert.ok(matches('*://*.mail?.corp.test/*', 'https://eu.mail2.corp.test/'));
    assert.ok(matches('*://a.test/page?tab=billing', 'https://a.test/page?tab=billing'));
    assert.ok(matches('*://a.test/search?q=*', 'https://a.test/search?q=x'));
  });

  test('bad patterns say what is wrong', () => {
    assert.throws(() => compilePattern('github.com/settings'), /needs a scheme/);
    assert.throws(() => compilePattern('*://git*hub.com/'), /whole leading or trailing labels/);
    assert.throws(() => compilePattern('*://a.test:abc/'), /not a number/);
    assert.throws(() => compilePattern('*://a.test?x=1'), /not a valid host name/);
    assert.throws(() => compilePattern('*://a.test#x/'), /not a valid host name/);
  });

  test('a rules file with a ? loads and matches (it used to load silently and never match)', () => {
    const parsed = parseRulesText('*://wiki.corp.test/hr-?/*\n', 'rules.txt');
    assert.deepEqual(parsed.problems, []);
    assert.equal(new RuleSet(parsed.rules).match('https://wiki.corp.test/hr-1/pay')?.origin, 'rules.txt:1');
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

  test('GitLab token, profile and admin pages, on gitlab.com and its subdomains', () => {
    for (const url of [
      'https://gitlab.com/-/user_settings/personal_access_tokens',
      'https://gitlab.com/-/profile/personal_access_tokens',
      'https://gitlab.com/acme/app/-/settings/ci_cd',
      'https://gitlab.com/admin/users',
      'https://next.gitlab.com/-/user_settings/ssh_keys',
      'https://staging.gitlab.com/-/profile/account',
      'https://staging.gitlab.com/acme/-/settings/repository',
    ])
      assert.ok(defaults.match(url), `${url} should be sensitive`);
    assert.equal(defaults.match('https://gitlab.com/acme/app/-/issues'), undefined);
  });

  // Each shape an attacker might give a settings URL, one test each (a test per variant).
  const tokens = '*://github.com/settings/*';
  const repoSettings = '*://github.com/*/settings/*';
  const variants: [string, string, string][] = [
    [';params after settings', 'https://github.com/settings;x=1/tokens', tokens],
    [';params at the end of a repository path', 'https://github.com/acme/app/settings;v=2', repoSettings],
    [';params before a deeper segment', 'https://github.com/acme/app/settings;v=2/hooks', repoSettings],
    ['a percent-encoded ;', 'https://github.com/settings%3Bx=1/tokens', tokens],
    ["Tomcat's ..; dot-segment", 'https://github.com/x/..;/settings/tokens', tokens],
    ['a percent-encoded letter', 'https://github.com/%73ettings/tokens', tokens],
    ['an encoded slash', 'https://github.com/settings%2Ftokens', tokens],
    ['an encoded leading slash', 'https://github.com/%2Fsettings/tokens', tokens],
    ['double slashes', 'https://github.com//settings/tokens', tokens],
    ['double slashes inside', 'https://github.com/acme//app//settings', repoSettings],
    ['backslashes', 'https://github.com\\settings\\tokens', tokens],
    ['an encoded backslash', 'https://github.com/settings%5Ctokens', tokens],
    ['upper case everywhere', 'HTTPS://GITHUB.COM/SETTINGS/TOKENS', tokens],
    ['a trailing dot on the host', 'https://github.com./settings/tokens', tokens],
    ['two trailing dots on the host', 'https://github.com../settings/tokens', tokens],
    ['a trailing dot on the segment', 'https://github.com/settings./tokens', tokens],
    ['an encoded space after the segment', 'https://github.com/settings%20/tokens', tokens],
    ['an encoded NUL after the segment', 'https://github.com/settings%00/tokens', tokens],
    ['a space before the segment', 'https://github.com/ settings/tokens', tokens],
    ['full-width letters in the host (IDN mapping)', 'https://ｇｉｔｈｕｂ.com/settings/tokens', tokens],
    ['a percent-encoded host', 'https://git%68ub.com/settings/tokens', tokens],
    ['userinfo before the host', 'https://github.com:x@github.com/settings/tokens', tokens],
    ['a tab inside the path', 'https://github.com/sett\tings/tokens', tokens],
    ['a tab inside the host', 'https://git\thub.com/settings/tokens', tokens],
    ['an explicit default port', 'https://github.com:443/settings/tokens', tokens],
    ['encoded dot-segments', 'https://github.com/x/%2e%2e/settings', tokens],
  ];
  for (const [what, url, rule] of variants)
    test(`a settings URL with ${what} is still sensitive`, () => {
      assert.equal(defaults.match(url)?.rule, rule, url);
    });

  test('userinfo naming github.com does not make another host github.com', () => {
    assert.equal(defaults.match('https://github.com@evil.example/settings'), undefined);
    assert.equal(defaults.match('https://github.com/acme/settings-guide'), undefined);
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
