// Bounded waits: settledWithin gives back what the work resolved to, or undefined once its time is up, and
// leaves no timer behind (a timer left running kept `tabward run` alive for two seconds after its result).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { settledWithin } from '../../../src/browser/deadline.ts';

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

test('settledWithin: the work wins and its timer is gone', async () => {
  const before = timers();
  assert.equal(await settledWithin(Promise.resolve('done'), 60_000), 'done');
  assert.equal(timers(), before);
});

test('settledWithin: a failure counts as settled, without throwing', async () => {
  const before = timers();
  assert.equal(await settledWithin(Promise.reject(new Error('gone')), 60_000), undefined);
  assert.equal(timers(), before);
});

test('settledWithin: work that never settles gives undefined after the time', async () => {
  assert.equal(await settledWithin(new Promise(() => undefined), 20), undefined);
});
