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
  const id = first.choice === 'pending' ? first.question : '';
  assert.match(id, /^[a-z2-9]{4}$/);
  assert.deepEqual(first, { choice: 'pending', question: id, where: 'in the test' });
  // Another call id, the same question: joined, never a second one.
  const second = await pend.ask(approvalRequest({ id: 'a2' }), undefined, { mayPend: true });
  assert.equal(second.choice, 'pending');
  assert.deepEqual(opened, [id]);
  assert.deepEqual(inbox.answer(id, { choice: 'approve' }, 'test'), { ok: true });
  assert.deepEqual(await pend.ask(approvalRequest({ id: 'a3' }), undefined, { mayPend: true }), {
    choice: 'approve',
    by: 'test',
  });
  // Spent: the next identical call is a new question.
  const fourth = await pend.ask(approvalRequest({ id: 'a4' }), undefined, { mayPend: true });
  const next = fourth.choice === 'pending' ? fourth.question : '';
  assert.notEqual(next, id);
  assert.deepEqual(opened, [id, next]);
});

test('other arguments, page, tool, wording or action bound to are another question; the call id is not', () => {
  const { inbox } = setUp();
  const ids = [
    inbox.ask(approvalRequest()).question.id,
    inbox.ask(approvalRequest({ args: { ref: 'e4' } })).question.id,
    inbox.ask(approvalRequest({ url: 'https://bank.example/other' })).question.id,
    inbox.ask(approvalRequest({ tool: 'fill' })).question.id,
    inbox.ask(approvalRequest({ reason: 'data read on a sensitive page could be sent to evil.example' }))
      .question.id,
    inbox.ask(approvalRequest({ bindsTo: 'p2#1|https://bank.example|…' })).question.id,
    inbox.ask(approvalRequest({ sensitive: false })).question.id,
    inbox.ask(approvalRequest({ id: 'other-id' })).question.id,
  ];
  assert.equal(new Set(ids.slice(0, -1)).size, ids.length - 1, 'each differs');
  assert.equal(ids.at(-1), ids[0], 'another call id, the same question');
});

test('an answer to a withdrawn question is refused and recorded; it never acts for a later call', async () => {
  const { inbox, records, pend } = setUp();
  const call = new AbortController();
  const asking = pend.ask(approvalRequest(), call.signal, { mayPend: false });
  const id = inbox.list()[0]?.id ?? '';
  call.abort();
  assert.deepEqual(await asking, { choice: 'reject', reason: 'the call was cancelled' });
  const late = inbox.answer(id, { choice: 'approve' }, 'tabward approvals');
  assert.equal(late.ok, false);
  assert.match(
    late.ok ? '' : late.why,
    new RegExp(`question ${id} is not open: its call was cancelled; nothing was done`),
  );
  assert.match(
    records[0] ?? '',
    new RegExp(`an answer \\(approve\\) through tabward approvals to question ${id} was ignored`),
  );
  const again = await pend.ask(approvalRequest(), undefined, { mayPend: true });
  assert.equal(again.choice, 'pending', 'the late approve was not kept');
});

test('a call that may not pend gets no after its wait, and its question closes', async () => {
  const { inbox, opened, pend } = setUp();
  assert.deepEqual(await pend.ask(approvalRequest()), {
    choice: 'reject',
    reason: 'nobody answered within 0 s',
  });
  assert.equal(inbox.list().length, 0);
  assert.equal(inbox.answer(opened[0] ?? '', { choice: 'approve' }, 'test').ok, false);
});

test('an answered question nobody comes back for expires and is recorded', async () => {
  const { inbox, records, opened, pend } = setUp(80);
  await pend.ask(approvalRequest(), undefined, { mayPend: true });
  inbox.answer(opened[0] ?? '', { choice: 'approve' }, 'test');
  await new Promise((done) => setTimeout(done, 200));
  assert.match(
    records.join('\n'),
    new RegExp(`question ${opened[0]} \\(click\\) expired unanswered or unspent`),
  );
  assert.equal((await pend.ask(approvalRequest(), undefined, { mayPend: true })).choice, 'pending');
});

test('two calls waiting on one question: one gets the answer, the other is told it went elsewhere', async () => {
  const { inbox } = setUp();
  const slow = new InboxApprover({ inbox, waitMs: 5_000, maxWaitMs: 5_000, where: 'x', name: 'x' });
  const one = slow.ask(approvalRequest({ id: 'a1' }), undefined, { mayPend: true });
  const two = slow.ask(approvalRequest({ id: 'a2' }), undefined, { mayPend: true });
  inbox.answer(inbox.list()[0]?.id ?? '', { choice: 'approve' }, 'test');
  const answers = await Promise.all([one, two]);
  assert.deepEqual(answers, [
    { choice: 'approve', by: 'test' },
    { choice: 'reject', reason: 'the answer went to another call asking the same' },
  ]);
});
