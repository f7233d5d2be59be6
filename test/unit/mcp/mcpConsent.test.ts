// MCP consent over the real SDK (client and server joined by the in-memory transport), on a real consent desk
// (inbox, Unix socket, approval page): the channel follows the client's capabilities, a form answer or a URL
// page answer comes back through the inbox, an instant cancel is no human's answer, a withdrawn call withdraws
// its question at the client too, and a waiting call reports progress that says where.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { ConsentDesk } from '../../../src/cli/consentDesk.ts';
import type { ApprovalChoice, Approver } from '../../../src/core/approvals.ts';
import { elicitationOf, mcpApprover } from '../../../src/mcp/mcpConsent.ts';
import { withProgress } from '../../../src/mcp/progressApprover.ts';
import { approvalRequest } from '../../helpers/approvalRequest.ts';
import { waitFor, within } from '../../helpers/waitFor.ts';

const request = approvalRequest({ element: { role: 'button', name: 'Pay\u001b[8m\r\u202eSave' } });
const home = mkdtempSync(join(tmpdir(), 'tabward-consent-'));
const desk = new ConsentDesk({
  home,
  waitMs: 400,
  maxWaitMs: 400,
  notify: false,
  humanVerified: false,
  secret: { made: () => undefined, gone: () => undefined },
  ownPort: () => undefined,
  log: () => undefined,
});
await desk.start();
after(async () => {
  await desk.stop();
  rmSync(home, { recursive: true, force: true });
});

type Answer = (params: { message: string; url?: string; mode?: string }) => Promise<ElicitResult>;

async function connected(elicitation: Record<string, object>, answer: Answer) {
  const server = new Server({ name: 'test', version: '1' }, { capabilities: {} });
  const client = new Client({ name: 'human', version: '1' }, { capabilities: { elicitation } });
  const asked: { message: string; url?: string; signal: AbortSignal }[] = [];
  const completed: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (elicit, extra) => {
    const params = elicit.params as { message: string; url?: string };
    asked.push({ ...params, signal: extra.signal });
    return answer(params);
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (note) => {
    completed.push(note.params.elicitationId);
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  // SDK 1.32 ignores a cancellation of request id 0 (`if (!requestId) return`): use id 0 up here.
  await server.ping();
  return { server, client, asked, completed };
}

const never: Answer = () => new Promise(() => undefined);
const options = { humanMs: 300, elicitMs: 60_000, inboxOnly: false };

test('the channel follows what the client declares: url, form (an empty object too), none', async () => {
  for (const [caps, want] of [
    [{ url: {}, form: {} }, 'url'],
    [{ form: {} }, 'form'],
    [{}, 'form'],
  ] as const) {
    const { server, client } = await connected(caps, never);
    assert.equal(elicitationOf(server), want);
    await client.close();
  }
});

test('the form shows page-chosen text sanitised; a withdrawn call withdraws it at the client too', async () => {
  const { server, client, asked } = await connected({ form: {} }, never);
  const call = new AbortController();
  const asking = mcpApprover(server, desk, options).ask(request, call.signal, { mayPend: true });
  const [question] = await waitFor('the question at the client', () => (asked.length ? asked : undefined));
  for (const char of ['\u001b', '\r', '\u202e'])
    assert.ok(!question?.message.includes(char), `U+${char.codePointAt(0)?.toString(16)} reached the client`);
  assert.match(question?.message ?? '', /click on button "Pay<U\+001B>\[8m<U\+000D><U\+202E>Save"/);
  call.abort();
  assert.deepEqual(await within('the withdrawn question settling', asking), {
    choice: 'reject',
    reason: 'the call was cancelled',
  });
  await waitFor('the client to hear the question was cancelled', () => asked[0]?.signal.aborted);
  assert.equal(desk.inbox.list().length, 0);
  await client.close();
});

test('a form answer from the human is the answer', async () => {
  const { server, client } = await connected({ form: {} }, async () => {
    await new Promise((done) => setTimeout(done, 350));
    return { action: 'accept', content: { decision: 'approve' } };
  });
  assert.deepEqual(await mcpApprover(server, desk, options).ask(request, undefined, { mayPend: true }), {
    choice: 'approve',
    by: 'elicitation',
  });
  await client.close();
});

test('an instant cancel is no human answer: the call pends, the agent is told, the inbox still answers', async () => {
  const { server, client } = await connected({ form: {} }, async () => ({ action: 'cancel' }));
  const approver = mcpApprover(server, desk, options);
  const first = await approver.ask(request, undefined, { mayPend: true });
  assert.equal(first.choice, 'pending');
  assert.match(
    first.choice === 'pending' ? (first.note ?? '') : '',
    /answered "cancel" after \d+ ms, before anyone could have read the question/,
  );
  const [open] = desk.inbox.list();
  assert.ok(open, 'the question is still open');
  desk.inbox.answer(open.id, { choice: 'approve' }, 'tabward approvals');
  assert.deepEqual(await approver.ask(request, undefined, { mayPend: true }), {
    choice: 'approve',
    by: 'tabward approvals',
  });
  await client.close();
});

test('a slow decline is the human saying no', async () => {
  const { server, client } = await connected({ form: {} }, async () => {
    await new Promise((done) => setTimeout(done, 350));
    return { action: 'decline' };
  });
  const choice = await mcpApprover(server, desk, { ...options, humanMs: 100 }).ask(request, undefined, {
    mayPend: true,
  });
  assert.deepEqual(choice, { choice: 'reject', reason: 'the user chose decline', by: 'elicitation' });
  await client.close();
});

test("URL mode: the link is that question's page; the page's answer settles the call and completes it", async () => {
  const { server, client, asked, completed } = await connected({ url: {}, form: {} }, async () => ({
    action: 'accept',
  }));
  const asking = mcpApprover(server, desk, { ...options, humanMs: 0 }).ask(
    approvalRequest({ args: { ref: 'url-mode' } }),
    undefined,
    { mayPend: false },
  );
  const [question] = await waitFor('the link at the client', () => (asked.length ? asked : undefined));
  const url = question?.url ?? '';
  assert.match(url, /^http:\/\/localhost:\d+\/q\/[\w-]{32}\/$/);
  const shown = (await (await fetch(`${url}pending`)).json()) as { args: unknown }[];
  assert.deepEqual(shown[0]?.args, { ref: 'url-mode' });
  const decided = await fetch(`${url}decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ decision: { choice: 'approve' } }),
  });
  assert.equal(decided.status, 200);
  assert.deepEqual(await asking, { choice: 'approve', by: 'the approval page' });
  await waitFor('the completion notice at the client', () => completed.length === 1);
  await client.close();
});

test('progress is reported when the question is asked and every interval until it is answered', async () => {
  const sent: { progress: number; message: string }[] = [];
  let answer: (choice: ApprovalChoice) => void = () => undefined;
  const slow: Approver = { name: 'slow', ask: () => new Promise((resolve) => (answer = resolve)) };
  const approver = withProgress(slow, {
    where: 'in `tabward approvals`',
    intervalMs: 20,
    send: async (progress, message) => {
      sent.push({ progress, message });
    },
  });
  const asking = approver.ask(request);
  await waitFor('three progress notifications', () => sent.length >= 3);
  answer({ choice: 'approve' });
  assert.deepEqual(await asking, { choice: 'approve' });
  const count = sent.length;
  await new Promise((done) => setTimeout(done, 60));
  assert.equal(sent.length, count, 'no progress after the answer');
  assert.match(
    sent[0]?.message ?? '',
    /^waiting for the human to approve click on button "Pay<U\+001B>\[8m<U\+000D><U\+202E>Save" \(in `tabward approvals`\)$/,
  );
});
