// The session's taint: every sensitive read counts, a read only the browser made is told to the agent once, and a
// result that shows the page makes it an ordinary read (a navigation's own document is both).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Taint } from '../../../src/core/taint.ts';

test('a read only the browser made taints, is described so, and is told once', () => {
  const taint = new Taint();
  taint.recordRead('https://github.com', true, 'background');
  assert.deepEqual(taint.list(), ['https://github.com']);
  assert.deepEqual(taint.describe(), [
    'https://github.com (loaded or fetched by the browser, not a page a tool result showed)',
  ]);
  assert.deepEqual(taint.takeUntold(), ['https://github.com']);
  assert.deepEqual(taint.takeUntold(), []);
  taint.recordRead('https://github.com', true, 'background');
  assert.deepEqual(taint.takeUntold(), [], 'the same origin again is not news');
});

test('a result that shows the page makes it an ordinary read, told by the result itself', () => {
  const taint = new Taint();
  // A navigation: the backstop sees the document go, then the result shows the page.
  taint.recordRead('https://github.com', true, 'background');
  taint.recordRead('https://github.com', true);
  assert.deepEqual(taint.takeUntold(), []);
  assert.deepEqual(taint.describe(), ['https://github.com']);
  // Shown first: a later background read of it changes nothing.
  taint.recordRead('https://github.com', true, 'background');
  assert.deepEqual(taint.takeUntold(), []);
  assert.deepEqual(taint.describe(), ['https://github.com']);
});

test('pages no rule marks sensitive never taint; clear forgets everything', () => {
  const taint = new Taint();
  taint.recordRead('https://example.com', false, 'background');
  assert.deepEqual(taint.list(), []);
  taint.recordRead('https://bank.test', true, 'background');
  taint.clear();
  assert.deepEqual([taint.list(), taint.takeUntold()], [[], []]);
});
