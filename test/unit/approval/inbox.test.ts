// The inbox's promises (docs/architecture.md "Consent"): the same question asked again joins the open one, an
// answer is spent by one call only, an answer given while no call waits is kept for the call made again, and an
// answer to a question that is gone is refused and recorded.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApprovalInbox } from '../../../src/approval/inbox.ts';
import { InboxApprover } from '../../../src/approval/inboxApprover.ts';
import { approvalRequest } from '../../helpers/approvalRequest.ts';

function setUp(keepMs = 60_000) {
  const records: string[] = [];
  const opened: string[] = [];
  const inbox = new ApprovalInbox(
    { record: (line) => records.push(line), opened: (q) => opened.push(q.id) },
    keepMs,
  );
  const pend = new InboxApprover({ inbox, waitMs: 50, maxWaitMs: 50, where: 'in the test', name: 'test' });
  return { inbox, records, opened, pend };
}

test('a call that may pend answers pending; calling again joins the question and spends its answer once', async () => {
  const { inbox, opened, pend } = setUp();
  const first = await pend.ask(approvalRequest({ id: 'a1' }), undefined, { mayPend: true });
  assert.deepEqual(first, { choice: 'pending', question: '1', where: 'in the test' });
  // Another call id, the same question: joined, never a second one.
  const second = await pend.ask(approvalRequest({ id: 'a2' }), undefined, { mayPend: true });
  assert.equal(second.choice, 'pending');
  assert.deepEqual(opened, ['1']);
  assert.deepEqual(inbox.answer('1', { choice: 'approve' }, 'test'), { ok: true });
  assert.deepEqual(await pend.ask(approvalRequest({ id: 'a3' }), undefined, { mayPend: true }), {
    choice: 'approve',
    by: 'test',
  });
  // Spent: the next identical call is a new question.
  const fourth = await pend.ask(approvalRequest({ id: 'a4' }), undefined, { mayPend: true });
  assert.deepEqual(fourth, { choice: 'pending', question: '2', where: 'in the test' });
  assert.deepEqual(opened, ['1', '2']);
});

test('other arguments, another page or another tool are another question', () => {
  const { inbox } = setUp();
  const ids = [
    inbox.ask(approvalRequest()).question.id,
    inbox.ask(approvalRequest({ args: { ref: 'e4' } })).question.id,
    inbox.ask(approvalRequest({ url: 'https://bank.example/other' })).question.id,
    inbox.ask(approvalRequest({ tool: 'fill' })).question.id,
    inbox.ask(approvalRequest({ id: 'other-id' })).question.id,
  ];
  assert.deepEqual(ids, ['1', '2', '3', '4', '1']);
});

test('an answer to a withdrawn question is refused and recorded; it never acts for a later call', async () => {
  const { inbox, records, pend } = setUp();
  const call = new AbortController();
  const asking = pend.ask(approvalRequest(), call.signal, { mayPend: false });
  call.abort();
  assert.deepEqual(await asking, { choice: 'reject', reason: 'the call was cancelled' });
  const late = inbox.answer('1', { choice: 'approve' }, 'tabward approvals');
  assert.equal(late.ok, false);
  assert.match(late.ok ? '' : late.why, /question 1 is not open: its call was cancelled; nothing was done/);
  assert.match(records[0] ?? '', /an answer \(approve\) through tabward approvals to question 1 was ignored/);
  const again = await pend.ask(approvalRequest(), undefined, { mayPend: true });
  assert.equal(again.choice, 'pending', 'the late approve was not kept');
});

test('a call that may not pend gets no after its wait, and its question closes', async () => {
  const { inbox, pend } = setUp();
  assert.deepEqual(await pend.ask(approvalRequest()), {
    choice: 'reject',
    reason: 'nobody answered within 0 s',
  });
  assert.equal(inbox.list().length, 0);
  assert.equal(inbox.answer('1', { choice: 'approve' }, 'test').ok, false);
});

test('an answered question nobody comes back for expires and is recorded', async () => {
  const { inbox, records, pend } = setUp(80);
  await pend.ask(approvalRequest(), undefined, { mayPend: true });
  inbox.answer('1', { choice: 'approve' }, 'test');
  await new Promise((done) => setTimeout(done, 200));
  assert.match(records.join('\n'), /question 1 \(click\) expired unanswered or unspent/);
  assert.equal((await pend.ask(approvalRequest(), undefined, { mayPend: true })).choice, 'pending');
});

test('two calls waiting on one question: one gets the answer, the other is told it went elsewhere', async () => {
  const { inbox } = setUp();
  const slow = new InboxApprover({ inbox, waitMs: 5_000, maxWaitMs: 5_000, where: 'x', name: 'x' });
  const one = slow.ask(approvalRequest({ id: 'a1' }), undefined, { mayPend: true });
  const two = slow.ask(approvalRequest({ id: 'a2' }), undefined, { mayPend: true });
  inbox.answer('1', { choice: 'approve' }, 'test');
  const answers = await Promise.all([one, two]);
  assert.deepEqual(answers, [
    { choice: 'approve', by: 'test' },
    { choice: 'reject', reason: 'the answer went to another call asking the same' },
  ]);
});
