// The DevTools pipe as Playwright sees it: NUL-ended JSON in both directions, messages however the bytes are cut
// (a screenshot spans many chunks; a character's bytes may straddle two), one message per task, the end reported
// after the messages that came before it, nothing delivered once Playwright closed it.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { setImmediate as nextTask } from 'node:timers/promises';
import { PipeTransport } from '../../../src/browser/pipeTransport.ts';

function rig() {
  const toBrowser = new PassThrough();
  const fromBrowser = new PassThrough();
  const transport = new PipeTransport(toBrowser, fromBrowser);
  const got: object[] = [];
  const events: string[] = [];
  transport.onmessage = (message) => {
    got.push(message);
    events.push('message');
  };
  transport.onclose = (reason) => events.push(`close: ${reason}`);
  return { toBrowser, fromBrowser, transport, got, events };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await nextTask();
};

test('sends each message as JSON ended by one NUL byte', () => {
  const { toBrowser, transport } = rig();
  transport.send({ id: 1, method: 'Browser.getVersion' });
  transport.send({ id: 2, method: 'Target.getTargets', params: { x: 'é' } });
  assert.equal(
    toBrowser.read().toString('utf8'),
    '{"id":1,"method":"Browser.getVersion"}\0{"id":2,"method":"Target.getTargets","params":{"x":"é"}}\0',
  );
});

test('a message cut anywhere, a character split between chunks, several messages in one chunk', async () => {
  const { fromBrowser, got } = rig();
  const bytes = Buffer.from(
    '{"id":1,"result":{"text":"héllo ✓"}}\0{"id":2}\0{"method":"Page.loadEventFired"}\0',
  );
  // Cut inside the two-byte é and the three-byte ✓.
  const cuts = [3, 27, 28, 39, 41, bytes.length];
  let from = 0;
  for (const to of cuts) {
    fromBrowser.write(bytes.subarray(from, to));
    from = to;
  }
  await settle();
  assert.deepEqual(got, [
    { id: 1, result: { text: 'héllo ✓' } },
    { id: 2 },
    { method: 'Page.loadEventFired' },
  ]);
});

test('one message per task: what the first message starts settles before the second is seen', async () => {
  const { fromBrowser, transport } = rig();
  const order: string[] = [];
  transport.onmessage = (message) => {
    const { id } = message as { id: number };
    order.push(`message ${id}`);
    void Promise.resolve().then(() => order.push(`after ${id}`));
  };
  fromBrowser.write('{"id":1}\0{"id":2}\0');
  await settle();
  assert.deepEqual(order, ['message 1', 'after 1', 'message 2', 'after 2']);
});

test('the browser closing its pipe is reported once, after the messages it sent before', async () => {
  const { fromBrowser, events } = rig();
  fromBrowser.write('{"id":1}\0{"id":2}\0');
  fromBrowser.destroy();
  await settle();
  assert.deepEqual(events, ['message', 'message', 'close: the browser closed its pipe']);
});

test('closed by Playwright: the write side ends, nothing more is delivered or sent', async () => {
  const { toBrowser, fromBrowser, transport, events } = rig();
  let ended = false;
  toBrowser.on('finish', () => {
    ended = true;
  });
  transport.close();
  fromBrowser.write('{"id":1}\0');
  transport.send({ id: 3 });
  await settle();
  assert.equal(ended, true);
  assert.deepEqual(events, ['close: closed']);
  assert.equal(toBrowser.read(), null);
});

test('something other than JSON from the browser ends the connection', async () => {
  const { fromBrowser, events } = rig();
  fromBrowser.write('{"id":1}\0not json\0{"id":2}\0');
  await settle();
  assert.deepEqual(events, ['message', 'close: closed']);
});
