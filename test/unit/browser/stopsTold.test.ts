// Stops told as audit events of their own (browser/stopsTold.ts): one a source per window, the rest counted in one
// summary; a page making up new sites opens no window of its own past a few; what is held back is told when the
// session that hears it leaves.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type StopSource, StopsTold, siteOf } from '../../../src/browser/stopsTold.ts';
import type { UntiedStop } from '../../../src/core/backstop.ts';

const untied = (place: string): StopSource => ({
  group: 'untied 1',
  key: `untied 1 ${place}`,
  what: `requests no tab sent to ${place}`,
  others: 'requests no tab sent to other sites',
});
const stopTo = (url: string): UntiedStop => ({ method: 'GET', url, reason: 'refused' });

test('one source: the first told, the rest counted in a summary when the session leaves', () => {
  const told: UntiedStop[] = [];
  const stops = new StopsTold((stop) => told.push(stop));
  for (let i = 0; i < 50; i++) stops.stop(untied('evil.example'), stopTo(`https://a${i}.evil.example/`));
  assert.equal(told.length, 1);
  stops.flush();
  assert.equal(told.length, 2);
  assert.match(
    told[1]?.reason ?? '',
    /the last of 49 requests no tab sent to evil\.example refused within 5 s/,
  );
  assert.equal(told[1]?.url, 'https://a49.evil.example/');
});

test('a page making up a new site for each request opens a few windows, then shares one', () => {
  const told: UntiedStop[] = [];
  const stops = new StopsTold((stop) => told.push(stop));
  for (let i = 0; i < 1000; i++) stops.stop(untied(`d${i}.test`), stopTo(`https://d${i}.test/`));
  stops.flush();
  assert.ok(told.length <= 12, `${told.length} events for 1000 sites`);
  const counted = told.reduce(
    (sum, stop) => sum + Number(/the last of (\d+)/.exec(stop.reason)?.[1] ?? 1),
    0,
  );
  assert.equal(counted, 1000);
  assert.match(told.at(-1)?.reason ?? '', /requests no tab sent to other sites/);
});

test('the site of an address', () => {
  assert.equal(siteOf('https://a.b.evil.example/x'), 'evil.example');
  assert.equal(siteOf('https://evil.example./x'), 'evil.example');
  assert.equal(siteOf('http://127.0.0.5:8080/'), '127.0.0.5');
  assert.equal(siteOf('http://[::1]:9/'), '[::1]');
  assert.equal(siteOf('not a url'), '(an unreadable address)');
});
