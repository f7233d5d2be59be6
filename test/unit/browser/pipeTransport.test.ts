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

/** A fake browser on the rig's pipe: answers tabward's own session's attach commands, in order. */
function ownSessionRig() {
  const r = rig();
  const written: { id: number; method: string; sessionId?: string; params?: Record<string, unknown> }[] = [];
  let buffered = '';
  r.toBrowser.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\0'); end !== -1; end = buffered.indexOf('\0')) {
      written.push(JSON.parse(buffered.slice(0, end)));
      buffered = buffered.slice(end + 1);
    }
  });
  const answer = (text: string) => r.fromBrowser.write(`${text}\0`);
  return { ...r, written, answer };
}

test("tabward's own session on the pipe: its answers and events never reach Playwright, Playwright's always do", async () => {
  const { transport, written, answer, got } = ownSessionRig();
  const opening = transport.open('TAB');
  await settle();
  const attachBrowser = written.at(-1);
  assert.equal(attachBrowser?.method, 'Target.attachToBrowserTarget');
  answer(`{"id":${attachBrowser?.id},"result":{"sessionId":"B1"}}`);
  await settle();
  const attachTab = written.at(-1);
  assert.deepEqual([attachTab?.method, attachTab?.sessionId], ['Target.attachToTarget', 'B1']);
  answer(`{"id":${attachTab?.id},"result":{"sessionId":"T1"},"sessionId":"B1"}`);
  const session = await opening;
  const seen: string[] = [];
  session.on('Fetch.requestPaused', (params, sessionId) => seen.push(`${params.requestId} on ${sessionId}`));
  // Playwright's messages, one shaped by a page like the tail of tabward's session's (escaped, as JSON has it).
  answer('{"id":7,"result":{}}');
  answer(
    '{"method":"Runtime.consoleAPICalled","params":{"text":"\\"sessionId\\":\\"T1\\"}"},"sessionId":"PW"}',
  );
  answer('{"method":"Fetch.requestPaused","params":{"requestId":"r1"},"sessionId":"T1"}');
  answer('{"method":"Target.detachedFromTarget","params":{"sessionId":"PW2","targetId":"X"}}');
  await settle();
  assert.deepEqual(seen, ['r1 on T1']);
  assert.deepEqual(
    got.map((message) => JSON.stringify(message)),
    [
      '{"id":7,"result":{}}',
      '{"method":"Runtime.consoleAPICalled","params":{"text":"\\"sessionId\\":\\"T1\\"}"},"sessionId":"PW"}',
      '{"method":"Target.detachedFromTarget","params":{"sessionId":"PW2","targetId":"X"}}',
    ],
  );
  // Left: the answers to its leaving, and any late message of its sessions, are dropped, never Playwright's.
  const leaving = session.detach();
  // Each leave is asked once the one before it is answered: the tab's session, then the browser's.
  for (let step = 0; step < 2; step++) {
    await settle();
    const command = written.at(-1);
    assert.equal(command?.method, 'Target.detachFromTarget');
    const on = command?.sessionId ? `,"sessionId":"${command.sessionId}"` : '';
    answer(`{"id":${command?.id},"error":{"code":-32602,"message":"No session with given id"}${on}}`);
  }
  await leaving;
  answer('{"method":"Fetch.requestPaused","params":{"requestId":"r2"},"sessionId":"T1"}');
  answer('{"method":"Target.detachedFromTarget","params":{"sessionId":"B1","targetId":"BROWSER"}}');
  await settle();
  assert.equal(got.length, 3, JSON.stringify(got.slice(3)));
  assert.deepEqual(seen, ['r1 on T1']);
});
