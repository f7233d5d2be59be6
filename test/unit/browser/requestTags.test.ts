// Request tokens (browser/requestTags.ts): single-use, for exactly their request, and telling whose they are, so that
// each of several clients' gates in one user's Chrome judges only the requests its own hooks tagged.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestTags } from '../../../src/browser/requestTags.ts';

test("a token is spent once, for its own request only, and is told apart from another client's", () => {
  const mine = new RequestTags();
  const theirs = new RequestTags();
  const token = mine.issue('POST', 'https://example.test/a#frag', 0);
  const other = theirs.issue('POST', 'https://example.test/a', 0);
  assert.equal(mine.ours(token), true);
  assert.equal(mine.ours(other), false, "another client's token is not this gate's");
  assert.equal(theirs.ours(token), false);
  assert.equal(mine.ours('0'.repeat(40)), false, 'a token a page made up is nobody’s');
  assert.equal(mine.spend(token, 'GET', 'https://example.test/a'), undefined, 'another method');
  assert.ok(mine.spend(token, 'POST', 'https://example.test/a'), 'its own request, fragment aside');
  assert.equal(mine.spend(token, 'POST', 'https://example.test/a'), undefined, 'single use');
  assert.equal(mine.ours(token), true, 'still known as ours once spent');
});

test('a flood of one request (a cached script fetched in a loop) never pushes out another request’s token', () => {
  const tags = new RequestTags();
  const approved = tags.issue('GET', 'https://vault.test/settings/tokens', 0);
  const flood = Array.from({ length: 20_000 }, () => tags.issue('GET', 'https://evil.test/cached.js', 0));
  assert.ok(
    tags.judged(approved, 'GET', 'https://vault.test/settings/tokens'),
    'the other request’s token lives',
  );
  assert.equal(
    tags.judged(flood[0], 'GET', 'https://evil.test/cached.js'),
    false,
    'the flood’s oldest made room',
  );
  const last = flood.at(-1);
  assert.ok(tags.spend(last, 'GET', 'https://evil.test/cached.js'), 'its newest are live');
  assert.ok(tags.spend(approved, 'GET', 'https://vault.test/settings/tokens'));
});

test('many requests each under their own token: past the cap the oldest make room', () => {
  let now = 0;
  const tags = new RequestTags(() => now);
  const first = tags.issue('GET', 'https://a.test/0', 0);
  for (let i = 1; i <= 10_000; i++) tags.issue('GET', `https://a.test/${i}`, 0);
  assert.equal(tags.judged(first, 'GET', 'https://a.test/0'), false);
  now += 121_000;
  const fresh = tags.issue('GET', 'https://a.test/fresh', 0);
  assert.ok(tags.spend(fresh, 'GET', 'https://a.test/fresh'), 'expired tokens pruned, a new one lives');
});
