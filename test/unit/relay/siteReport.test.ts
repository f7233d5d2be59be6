// The extension's site report within the bytes the relay accepts (issue 17): a tool over 16 KiB is left out, a
// site past 256 KiB keeps what fits, and a report the relay refused anyway (1009) halves the budget, so the next
// report is smaller instead of the same one sent for ever.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cappedReport,
  droppedTools,
  reportRefused,
  withinSiteCap,
  withinToolLimits,
} from '../../../extension/src/worker/siteReport.ts';
import { encodedBytes, type SiteTool } from '../../../src/protocol/siteTools.ts';

const tool = (name: string, description: string): SiteTool => ({
  name,
  description,
  inputSchema: { type: 'object' },
  readOnly: true,
});
const site = (origin: string, tools: SiteTool[]) => ({ origin, url: `${origin}/`, tools, openTabs: 1 });

test('tools are capped by their bytes, one by one and per site, and the popup is told which and why', () => {
  const euros = Array.from({ length: 50 }, (_, i) => tool(`e${i}`, '€'.repeat(8000)));
  assert.deepEqual(
    withinToolLimits('https://big.example', euros),
    [],
    '24 KB each in UTF-8, under 16 K characters',
  );
  const many = Array.from({ length: 50 }, (_, i) => tool(`t${i}`, 'd'.repeat(10_000)));
  const kept = withinSiteCap('https://many.example', withinToolLimits('https://many.example', many));
  assert.ok(kept.length > 10 && kept.length < 50);
  assert.ok(encodedBytes(kept) <= 256 * 1024);
  const dropped = droppedTools([site('https://big.example', []), site('https://many.example', kept)]);
  assert.match(dropped.find((d) => d.origin === 'https://big.example')?.why ?? '', /over 16 KiB each/);
  assert.equal(dropped.find((d) => d.origin === 'https://many.example')?.tools.length, 50 - kept.length);
});

test('a refused report halves the budget: the next one is smaller, never the same again', () => {
  const states = Array.from({ length: 4 }, (_, s) =>
    site(
      `https://s${s}.example`,
      Array.from({ length: 20 }, (_, i) => tool(`t${i}`, 'd'.repeat(10_000))),
    ),
  );
  const first = encodedBytes({ t: 'sites', sites: cappedReport(states) });
  assert.ok(first <= 768 * 1024, `${first} bytes`);
  reportRefused(first);
  const second = encodedBytes({ t: 'sites', sites: cappedReport(states) });
  assert.ok(second <= first / 2, `${second} after ${first}`);
  assert.equal(cappedReport(states).length, 4, 'every site is still reported, with fewer tools');
});
