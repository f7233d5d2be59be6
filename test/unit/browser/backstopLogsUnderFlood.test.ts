// The network guard's logs under a flood of one kind (browser/requestLog.ts, rankedLog.ts): a page requesting one
// sensitive origin hundreds of times never pushes another origin's read out of what an action read, and a stop of
// a write into a sensitive page leads what was stopped however many other stops follow it. Reads come through the
// choke point's own entry (egressVerdict, as the egress proxy calls it), stops through the browser-wide gate's
// (recordRefused).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NetworkGuard } from '../../../src/browser/networkGuard.ts';
import { ActionPasses } from '../../../src/core/actionPasses.ts';
import { defaultRules, RuleSet } from '../../../src/core/sensitiveRules.ts';

const guard = () => new NetworkGuard(new RuleSet(defaultRules()), new ActionPasses(), new Set());
const request = (method: string, url: string) => ({ method, url, tag: undefined, navigation: false });

test('a flood of reads of one sensitive origin keeps another origin’s read of the same action', async () => {
  const network = guard();
  const mark = network.mark();
  await network.egressVerdict(request('GET', 'https://github.com/settings/tokens'));
  for (let i = 0; i < 300; i++)
    await network.egressVerdict(request('GET', `https://accounts.google.com/settings/x${i}`));
  assert.deepEqual(network.sensitiveReadsSince(mark).sort(), [
    'https://accounts.google.com',
    'https://github.com',
  ]);
});

test('a refused write into a sensitive page leads the stops, whatever follows it', async () => {
  const network = guard();
  const mark = network.mark();
  assert.ok(await network.egressVerdict(request('POST', 'https://github.com/settings/emails')));
  network.recordRefused('POST', 'https://github.com/settings/emails', 'refused by the test');
  for (let i = 0; i < 300; i++)
    network.recordRefused('GET', `https://evil.example/x${i}`, 'refused by the test');
  const { lines, unkept } = network.stoppedSince(mark);
  assert.match(lines[0] ?? '', /^POST https:\/\/github\.com\/settings\/emails/);
  assert.equal(lines.length + unkept, 301);
});
