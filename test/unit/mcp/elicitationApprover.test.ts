// Elicitation and progress over the real SDK (client and server joined by the in-memory transport): the
// question shows page-chosen text sanitised, a withdrawn call withdraws its question from the client too, and
// a call waiting for a human reports progress that says where.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalChoice, Approver } from '../../../src/core/approvals.ts';
import { ElicitationApprover } from '../../../src/mcp/elicitationApprover.ts';
import { withProgress } from '../../../src/mcp/progressApprover.ts';
import { approvalRequest } from '../../helpers/approvalRequest.ts';
import { waitFor, within } from '../../helpers/waitFor.ts';

const request = approvalRequest({ element: { role: 'button', name: 'Pay\u001b[8m\r\u202eSave' } });

async function connected() {
  const server = new Server({ name: 'test', version: '1' }, { capabilities: {} });
  const client = new Client({ name: 'human', version: '1' }, { capabilities: { elicitation: {} } });
  const asked: { message: string; signal: AbortSignal }[] = [];
  client.setRequestHandler(ElicitRequestSchema, (elicit, extra) => {
    asked.push({ message: elicit.params.message, signal: extra.signal });
    // The human never answers: only a withdrawal ends this question.
    return new Promise(() => undefined);
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  // SDK 1.32 ignores a cancellation of request id 0 (`if (!requestId) return`): use id 0 up here.
  await server.ping();
  return { server, client, asked };
}

test('the elicitation message shows page-chosen text sanitised', async () => {
  const { server, client, asked } = await connected();
  const call = new AbortController();
  const asking = new ElicitationApprover(server).ask(request, call.signal);
  const [question] = await waitFor('the question at the client', () => (asked.length ? asked : undefined));
  for (const char of ['\u001b', '\r', '\u202e'])
    assert.ok(!question?.message.includes(char), `U+${char.codePointAt(0)?.toString(16)} reached the client`);
  assert.match(question?.message ?? '', /click on button "Pay<U\+001B>\[8m<U\+000D><U\+202E>Save"/);
  assert.match(question?.message ?? '', /Approve-all is not available on sensitive pages/);
  call.abort();
  await within('the withdrawn question settling', asking);
  await client.close();
});

test('a withdrawn call withdraws its elicitation question, at the client too', async () => {
  const { server, client, asked } = await connected();
  const call = new AbortController();
  const asking = new ElicitationApprover(server).ask(request, call.signal);
  await waitFor('the question at the client', () => asked.length === 1);
  call.abort();
  assert.deepEqual(await within('the withdrawn question settling', asking), {
    choice: 'reject',
    reason: 'the call was cancelled',
  });
  await waitFor('the client to hear the question was cancelled', () => asked[0]?.signal.aborted);
  await client.close();
});

test('progress is reported when the question is asked and every interval until it is answered', async () => {
  const sent: { progress: number; message: string }[] = [];
  let answer: (choice: ApprovalChoice) => void = () => undefined;
  const slow: Approver = {
    name: 'page http://127.0.0.1:1/SECRET-TOKEN/',
    ask: () => new Promise((resolve) => (answer = resolve)),
  };
  const approver = withProgress(slow, {
    where: 'on the approval page',
    intervalMs: 20,
    send: async (progress, message) => {
      sent.push({ progress, message });
    },
  });
  assert.equal(approver.name, slow.name);
  const asking = approver.ask(request);
  await waitFor('three progress notifications', () => sent.length >= 3);
  answer({ choice: 'approve' });
  assert.deepEqual(await asking, { choice: 'approve' });
  const count = sent.length;
  // A second question at the same interval beats three times: the first, answered, must stay silent meanwhile.
  const later: number[] = [];
  const other = withProgress(slow, {
    where: 'on the approval page',
    intervalMs: 20,
    send: async (progress) => {
      later.push(progress);
    },
  });
  const second = other.ask(request);
  await waitFor('three beats of a second question', () => later.length >= 3);
  answer({ choice: 'skip' });
  await second;
  assert.equal(sent.length, count, 'no progress after the answer');
  assert.deepEqual(
    sent.map((s) => s.progress),
    sent.map((_, i) => i + 1),
  );
  assert.match(
    sent[0]?.message ?? '',
    /^waiting for the human to approve click on button "Pay<U\+001B>\[8m<U\+000D><U\+202E>Save" \(on the approval page\)$/,
  );
  assert.ok(!JSON.stringify(sent).includes('SECRET-TOKEN'));
});
