// The backstop's logs under a page's flood (browser/rankedLog.ts): a flood of one rank never pushes out another's
// entries, and what was let go for room is still counted; the stops told to the agent count those too.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RankedLog } from '../../../src/browser/rankedLog.ts';
import { stoppedSummary, unkeptStops } from '../../../src/core/approvedPass.ts';

interface Line {
  readonly seq: number;
  readonly rank: number;
  readonly what: string;
  readonly tab: string;
}

test('a flood of one rank keeps the other ranks’ entries, first, and counts what it let go', () => {
  const log = new RankedLog<Line>(200);
  let seq = 0;
  log.add({ seq: ++seq, rank: 2, what: 'before the mark', tab: 'p1' });
  const mark = seq;
  log.add({ seq: ++seq, rank: 0, what: 'the approved write', tab: 'p1' });
  for (let i = 0; i < 500; i++)
    log.add({ seq: ++seq, rank: 1, what: `flood ${i}`, tab: i % 2 ? 'p1' : 'p2' });
  const { kept, unkept } = log.since(mark);
  assert.equal(kept[0]?.what, 'the approved write');
  assert.equal(kept.length, 201);
  assert.equal(unkept, 300);
  assert.equal(kept.at(-1)?.what, 'flood 499');
  // Filtered (one tab's), the let-go are counted by the same filter.
  const tab = log.since(mark, (line) => line.tab === 'p2');
  assert.equal(tab.kept.length + tab.unkept, 250);
});

test('what was let go before the mark is not counted after it', () => {
  const log = new RankedLog<Line>(3);
  let seq = 0;
  for (let i = 0; i < 10; i++) log.add({ seq: ++seq, rank: 1, what: `old ${i}`, tab: 'p1' });
  const mark = seq;
  log.add({ seq: ++seq, rank: 1, what: 'new', tab: 'p1' });
  assert.deepEqual(log.since(mark), { kept: [{ seq: 11, rank: 1, what: 'new', tab: 'p1' }], unkept: 0 });
});

test('a summary of stops counts the ones not kept', () => {
  const lines = [
    'POST https://github.com/settings/profile: refused',
    'POST https://evil.example/x: refused',
    unkeptStops(298),
  ];
  assert.match(
    stoppedSummary(lines),
    /^tabward stopped 300 request\(s\) \(and 295 more\):\nPOST https:\/\/github\.com/,
  );
});
