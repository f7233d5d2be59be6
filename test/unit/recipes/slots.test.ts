// Slots when serve shuts down: queued runs are turned away, new ones too, running ones finish and idle() says so.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Slots } from '../../../src/recipes/slots.ts';

test('closing drops the queue, refuses new runs, and lets the running one finish', async () => {
  const slots = new Slots(1, 2);
  let finish: () => void = () => undefined;
  const running = slots.run(() => new Promise<string>((resolve) => (finish = () => resolve('done'))));
  const queued = slots.run(async () => 'queued ran');
  assert.equal(slots.queued, 1);
  assert.equal(slots.close(), 1);
  assert.equal(await queued, 'closed');
  assert.equal(await slots.run(async () => 'new'), 'closed');
  let idle = false;
  const idled = slots.idle().then(() => {
    idle = true;
  });
  await Promise.resolve();
  assert.equal(idle, false);
  finish();
  assert.equal(await running, 'done');
  await idled;
  assert.equal(slots.running, 0);
});

test('a queued run waits at most --queue-wait, then is turned away; the slot goes on to the next', async () => {
  const slots = new Slots(1, 2, 20);
  let finish: () => void = () => undefined;
  const running = slots.run(() => new Promise<string>((resolve) => (finish = () => resolve('done'))));
  assert.equal(await slots.run(async () => 'never'), 'waited');
  assert.equal(slots.queued, 0);
  assert.equal(slots.answer('waited').status, 503);
  assert.match(slots.answer('waited').message, /within 20 ms \(--queue-wait\)/);
  finish();
  assert.equal(await running, 'done');
  assert.equal(await slots.run(async () => 'next'), 'next');
});
