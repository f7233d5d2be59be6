// The backstop's logs under a page's flood (browser/rankedLog.ts): a flood of one rank never pushes out another's
// entries, and what was let go for room is still counted; the stops told to the agent count those too.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RankedLog } from '../../../src/browser/rankedLog.ts';
import { joinStops, shownStops, stoppedSummary } from '../../../src/core/approvedPass.ts';

interface Line {
  readonly seq: number;
  readonly rank: number;
  readonly what: string;
  readonly tab: string;
}

test('a flood of one rank keeps the other ranks’ entries, first, and counts what it let go', () => {
  const log = new RankedLog<Line>(200, (line) => line.tab);
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
  const tab = log.since(mark, 'p2');
  assert.equal(tab.kept.length + tab.unkept, 250);
});

test('what was let go before the mark is not counted after it', () => {
  const log = new RankedLog<Line>(3, (line) => line.tab);
  let seq = 0;
  for (let i = 0; i < 10; i++) log.add({ seq: ++seq, rank: 1, what: `old ${i}`, tab: 'p1' });
  const mark = seq;
  log.add({ seq: ++seq, rank: 1, what: 'new', tab: 'p1' });
  assert.deepEqual(log.since(mark), {
    kept: [{ seq: 11, rank: 1, what: 'new', tab: 'p1' }],
    unkept: 0,
    atLeast: false,
  });
});

test('a summary of stops counts the ones not kept', () => {
  const lines = ['POST https://github.com/settings/profile: refused', 'POST https://evil.example/x: refused'];
  assert.match(
    stoppedSummary({ lines, unkept: 298 }),
    /^tabward stopped 300 request\(s\) \(and 298 more\):\nPOST https:\/\/github\.com/,
  );
});

test('past what it counts, a log says its count is a floor', () => {
  const log = new RankedLog<Line>(2, (line) => line.tab, 5);
  for (let seq = 1; seq <= 20; seq++) log.add({ seq, rank: 1, what: `${seq}`, tab: 'p1' });
  const { kept, unkept, atLeast } = log.since(0);
  assert.deepEqual([kept.length, unkept, atLeast], [2, 5, true]);
  assert.equal(log.since(19).atLeast, false);
});

test('a summary counts the requests kept and those let go, and shows only requests', () => {
  const kept = ['POST https://github.com/settings/profile: refused', 'POST https://evil.example/x: refused'];
  assert.match(
    stoppedSummary({ lines: kept, unkept: 100 }),
    /^tabward stopped 102 request\(s\) \(and 100 more\):\n/,
  );
  assert.equal(
    stoppedSummary({ lines: [], unkept: 300 }),
    'tabward stopped 300 request(s) (and 300 more):\n',
  );
  assert.match(
    stoppedSummary({ lines: kept, unkept: 7, atLeast: true }),
    /^tabward stopped at least 9 request\(s\)/,
  );
  assert.deepEqual(shownStops({ lines: kept, unkept: 0 }, 5), kept);
  const many = Array.from({ length: 7 }, (_, i) => `GET https://evil.example/${i}: refused`);
  assert.deepEqual(shownStops({ lines: many, unkept: 10 }, 5), [...many.slice(0, 4), '(and 13 more)']);
});

test('stops told together add their counts, and one floor makes the whole count a floor', () => {
  const earlier = {
    lines: ['after the previous action in this tab returned: POST https://evil.example/a'],
    unkept: 3,
  };
  const now = { lines: ['POST https://evil.example/b'], unkept: 40, atLeast: true };
  const joined = joinStops(earlier, now);
  assert.deepEqual(joined.lines, [...earlier.lines, ...now.lines]);
  assert.equal(joined.unkept, 43);
  assert.match(stoppedSummary(joined), /^tabward stopped at least 45 request\(s\) \(and 43 more\)/);
  assert.equal(joinStops(earlier, { lines: [], unkept: 0 }).atLeast, false);
});
