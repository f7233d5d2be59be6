// An answer past the largest message tabward reads (a DOM snapshot of a page's hundreds of megabytes of
// attributes) fails its command rather than throw in the pipe's handler, which took tabward's process down.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { maxMessageBytes, PipeTransport } from '../../src/browser/pipeTransport.ts';

test("an oversize answer is its command's error, and the messages after it still arrive", async () => {
  const fromBrowser = new PassThrough();
  const transport = new PipeTransport(new PassThrough(), fromBrowser);
  const messages: object[] = [];
  transport.onmessage = (message) => messages.push(message);
  const chunk = Buffer.alloc(2 ** 20, 'a');
  transport['received'](Buffer.from('{"id":7,"result":{"x":"'));
  for (let sent = 0; sent <= maxMessageBytes; sent += chunk.length) transport['received'](chunk);
  transport['received'](Buffer.from('"},"sessionId":"S1"}\0{"id":8,"result":{}}\0'));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(messages.length, 2);
  const [first, second] = messages as { id: number; sessionId?: string; error?: { message: string } }[];
  assert.equal(first?.id, 7);
  assert.equal(first?.sessionId, 'S1');
  assert.match(first?.error?.message ?? '', /too large/);
  assert.deepEqual(second, { id: 8, result: {} });
});

test('an oversize answer arriving as one chunk, its id in that chunk, is its command error too', async () => {
  const transport = new PipeTransport(new PassThrough(), new PassThrough());
  const messages: object[] = [];
  transport.onmessage = (message) => messages.push(message);
  const head = Buffer.from('{"id":9,"result":{"x":"');
  transport['received'](Buffer.concat([head, Buffer.alloc(maxMessageBytes + 1, 'a')]));
  transport['received'](Buffer.from('"}}\0'));
  await new Promise((resolve) => setTimeout(resolve, 10));
  const [first] = messages as { id: number; error?: { message: string } }[];
  assert.equal(first?.id, 9);
  assert.match(first?.error?.message ?? '', /too large/);
});
