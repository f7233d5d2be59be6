// Which requests the hooks pause behind the egress proxy (browser/hookPatterns.ts): narrow until the session is
// tainted (the types that may change state, and anything to a sensitive site's host), wide for good after; never
// narrow where a rule names no host to look for.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { type HookSession, HookWidth, sensitiveHostPatterns } from '../../../src/browser/hookPatterns.ts';
import { defaultRules, parseRulesText, RuleSet } from '../../../src/core/sensitiveRules.ts';

/** How Chromium matches a Fetch urlPattern: `*` any run, `?` one character. */
const fetchMatches = (pattern: string, url: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(url);

test('every URL a default rule marks sensitive is paused by a narrow hook, whatever its type', () => {
  const rules = new RuleSet(defaultRules());
  const patterns = sensitiveHostPatterns(rules);
  assert.ok(patterns && patterns.length > 0);
  for (const url of [
    'https://github.com/settings/tokens',
    'https://api.github.com/user/keys?per_page=1',
    'https://dashboard.stripe.com/apikeys',
    'https://www.paypal.com/myaccount/summary',
  ]) {
    if (!rules.match(url)) continue;
    assert.ok(
      patterns.some((pattern) => fetchMatches(pattern, url)),
      `${url} matches a rule but no narrow hook pattern`,
    );
  }
  assert.ok(rules.match('https://github.com/settings/tokens'), 'the fixture URL must be sensitive');
});

test('a rule with no host to look for keeps the hooks wide from the start', () => {
  const { rules } = parseRulesText('*://*/admin/*', 'test');
  assert.equal(sensitiveHostPatterns(new RuleSet(rules)), undefined);
  assert.equal(new HookWidth(undefined).wide, true);
});

test('narrow until widened; every session takes the widening, and one hooked after is wide', async () => {
  const sent: { session: string; patterns: unknown[] }[] = [];
  const session = (name: string): HookSession => ({
    send: async (_method, params) => {
      sent.push({ session: name, patterns: (params as { patterns: unknown[] }).patterns });
      return {};
    },
    on: () => undefined,
  });
  const page = { once: () => undefined } as unknown as Page;
  const width = new HookWidth(['*github.com*']);
  await width.enable(page, session('tab'), true);
  await width.enable(page, session('user'), false);
  const [tab, user] = sent;
  assert.ok(tab?.patterns.some((p) => JSON.stringify(p).includes('"resourceType":"Document"')));
  assert.ok(tab?.patterns.some((p) => JSON.stringify(p).includes('*github.com*')));
  assert.ok(!tab?.patterns.some((p) => JSON.stringify(p).includes('"resourceType":"Image"')));
  assert.deepEqual(user?.patterns, [{ urlPattern: '*', requestStage: 'Request' }]);
  await width.widen();
  assert.deepEqual(sent.at(-1), { session: 'tab', patterns: [{ urlPattern: '*', requestStage: 'Request' }] });
  await width.enable(page, session('frame'), true);
  assert.deepEqual(sent.at(-1), {
    session: 'frame',
    patterns: [{ urlPattern: '*', requestStage: 'Request' }],
  });
  assert.equal(width.wide, true);
});
