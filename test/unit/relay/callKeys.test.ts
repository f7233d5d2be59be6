// Idempotency keys (issue 17) over a real SQLite store: what a retry with the same key gets for each state of the
// earlier call, what each outcome leaves the key in, and that a relay start marks calls it lost as unknown.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { TabwardError } from '../../../src/core/errors.ts';
import { answerForEarlier, callHashOf, keyArgument, keySettlement } from '../../../src/relay/callKeys.ts';
import { RelayStore } from '../../../src/relay/relayStore.ts';

const dir = mkdtempSync(join(tmpdir(), 'tabward-keys-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The call every key below is given for, unless a test says otherwise. */
const call = callHashOf('https://shop.example', 'addToCart', { sku: 'A1', qty: 1 });

const refusal = (fn: () => unknown): TabwardError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof TabwardError) return error;
  }
  throw new Error('expected a refusal');
};

test('a key is claimed once per agent; its record says running, then done with the outcome given', () => {
  const store = new RelayStore(join(dir, 'a.db'));
  assert.equal(store.claimKey('agent-1', 'k', 'task-1', call), undefined);
  assert.equal(store.claimKey('agent-2', 'k', 'task-2', call), undefined, 'keys are per agent');
  const running = store.claimKey('agent-1', 'k', 'task-3', call);
  assert.deepEqual(running, { taskId: 'task-1', state: 'running', detail: '', callHash: call });
  assert.match(
    refusal(() => answerForEarlier(running ?? assert.fail(), 'k', call)).message,
    /is still running; this retry was not run/,
  );
  const { state, detail } = keySettlement({ ok: true, result: 'added' });
  store.settleKey('task-1', state, detail);
  const done = store.claimKey('agent-1', 'k', 'task-4', call) ?? assert.fail();
  assert.deepEqual(answerForEarlier(done, 'k', call), { taskId: 'task-1', result: 'added' });
  store.close();
});

test('what an outcome leaves the key in: unknown blocks, a sure non-run frees, too large counts as done', () => {
  assert.equal(keySettlement({ ok: false, error: { code: 'denied', message: 'no' } }).state, 'free');
  assert.equal(keySettlement({ ok: false, error: { code: 'tool_failed', message: 'boom' } }).state, 'free');
  assert.equal(
    keySettlement({ ok: false, error: { code: 'timeout', message: 'late', unknownOutcome: true } }).state,
    'unknown',
  );
  assert.equal(keySettlement({ ok: false, error: { code: 'too_large', message: 'big' } }).state, 'done');
  const store = new RelayStore(join(dir, 'b.db'));
  store.claimKey('agent-1', 'free-me', 'task-1', call);
  store.settleKey('task-1', 'free', '');
  assert.equal(store.claimKey('agent-1', 'free-me', 'task-2', call), undefined, 'a freed key runs again');
  const tooLarge = keySettlement({ ok: false, error: { code: 'too_large', message: 'The result is big.' } });
  store.settleKey('task-2', tooLarge.state, tooLarge.detail);
  const again = store.claimKey('agent-1', 'free-me', 'task-3', call) ?? assert.fail();
  assert.match(
    refusal(() => answerForEarlier(again, 'free-me', call)).message,
    /ran already and failed: The result is big\. Not run again/,
  );
  store.close();
});

test('a relay that starts again marks the calls it lost as unknown: their retries are refused', () => {
  const file = join(dir, 'c.db');
  const first = new RelayStore(file);
  first.startTask('task-1', 'team', 'agent', 'https://shop.example', 'placeOrder');
  first.claimKey('agent-1', 'order', 'task-1', call);
  first.close();
  const second = new RelayStore(file);
  second.markInterrupted();
  assert.equal(second.task('task-1')?.status, 'interrupted');
  const lost = second.claimKey('agent-1', 'order', 'task-2', call) ?? assert.fail();
  assert.equal(lost.state, 'unknown');
  assert.match(
    refusal(() => answerForEarlier(lost, 'order', call)).message,
    /may or may not have run \(the relay stopped while it ran\)/,
  );
  second.close();
});

test('a key names one call: another site, tool or arguments with it is refused, never given the first outcome', () => {
  const store = new RelayStore(join(dir, 'd.db'));
  assert.equal(store.claimKey('agent-1', 'k', 'task-1', call), undefined);
  store.settleKey('task-1', 'done', JSON.stringify({ ok: true, result: 'added' }));
  const others = [
    callHashOf('https://notes.example', 'addToCart', { sku: 'A1', qty: 1 }),
    callHashOf('https://shop.example', 'emptyCart', { sku: 'A1', qty: 1 }),
    callHashOf('https://shop.example', 'addToCart', { sku: 'A1', qty: 2 }),
  ];
  for (const other of others) {
    const earlier = store.claimKey('agent-1', 'k', 'task-2', other) ?? assert.fail();
    assert.match(
      refusal(() => answerForEarlier(earlier, 'k', other)).message,
      /was given to another call \(task-1/,
    );
  }
  const same = callHashOf('https://shop.example', 'addToCart', { qty: 1, sku: 'A1' });
  const retry = store.claimKey('agent-1', 'k', 'task-3', same) ?? assert.fail();
  assert.deepEqual(
    answerForEarlier(retry, 'k', same),
    { taskId: 'task-1', result: 'added' },
    'argument order does not matter',
  );
  store.close();
});

test('keys are short printable text', () => {
  assert.equal(keyArgument(undefined), undefined);
  assert.equal(keyArgument('order-42'), 'order-42');
  for (const bad of ['', 'x'.repeat(201), 'a\nb', 42])
    assert.throws(
      () => keyArgument(bad),
      /"idempotencyKey" must be a string of 1 to 200 printable characters/,
    );
});
