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
