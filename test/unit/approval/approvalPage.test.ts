// The approval page as the human sees it over HTTP, one address per question: what it serves is sanitised, the
// address opens that question only, and it dies with its question (withdrawn or answered).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ApprovalPage } from '../../../src/approval/approvalPage.ts';
import { ApprovalInbox, type Question } from '../../../src/approval/inbox.ts';
import { InboxApprover } from '../../../src/approval/inboxApprover.ts';
import type { ApprovalRequest } from '../../../src/core/approvals.ts';
import { approvalRequest } from '../../helpers/approvalRequest.ts';
import { waitFor, within } from '../../helpers/waitFor.ts';

/** Who the audit says answered. */
const page = 'the approval page';
const request = (id: string, overrides: Partial<ApprovalRequest> = {}): ApprovalRequest =>
  approvalRequest({ id, args: { ref: id }, ...overrides });

const inbox = new ApprovalInbox();
const tokens: string[] = [];
const goneTokens: string[] = [];
const approvalPage = new ApprovalPage(inbox, {
  made: (token) => tokens.push(token),
  gone: (token) => goneTokens.push(token),
});
const approver = new InboxApprover({ inbox, waitMs: 30_000, maxWaitMs: 30_000, where: 'here', name: 'test' });
before(() => approvalPage.start());
after(() => approvalPage.stop());

const questionOf = (id: string) =>
  waitFor(`question ${id} in the inbox`, () => inbox.list().find((q) => q.request.id === id));
const urlOf = async (id: string) => approvalPage.urlFor(await questionOf(id)) as string;
const pending = async (url: string) => (await fetch(`${url}pending`)).json() as Promise<ApprovalRequest[]>;
const decide = (url: string, decision: object) =>
  fetch(`${url}decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ decision }),
  });

test('a withdrawn call takes its question and its address away; answering it afterwards is a 404', async () => {
  const call = new AbortController();
  const asking = approver.ask(request('q1'), call.signal);
  const url = await urlOf('q1');
  assert.match(url, /^http:\/\/localhost:\d+\/q\/[\w-]{32}\/$/);
  assert.deepEqual(tokens, [new URL(url).pathname.split('/')[2]], 'the redactor was told the token');
  assert.equal((await fetch(url)).status, 200);
  call.abort();
  assert.deepEqual(await within('the withdrawn question settling', asking), {
    choice: 'reject',
    reason: 'the call was cancelled',
  });
  assert.equal((await fetch(url)).status, 404);
  assert.equal((await decide(url, { choice: 'approve' })).status, 404);
  assert.deepEqual(goneTokens, tokens, 'the redactor is told the dead token can go');
});

test("one question's address never opens another's, and a guessed token opens nothing", async () => {
  const first = new AbortController();
  const second = new AbortController();
  const asking = [approver.ask(request('q2'), first.signal), approver.ask(request('q3'), second.signal)];
  const [one, two] = [await urlOf('q2'), await urlOf('q3')];
  assert.notEqual(one, two);
  assert.deepEqual(
    (await pending(one)).map((r) => r.args),
    [{ ref: 'q2' }],
  );
  assert.deepEqual(
    (await pending(two)).map((r) => r.args),
    [{ ref: 'q3' }],
  );
  const port = new URL(one).port;
  assert.equal((await fetch(`http://localhost:${port}/q/${'A'.repeat(32)}/pending`)).status, 404);
  assert.equal((await fetch(`http://localhost:${port}/`)).status, 404);
  assert.equal((await decide(two, { choice: 'skip' })).status, 200);
  assert.deepEqual(await asking[1], { choice: 'skip', by: page });
  assert.equal((await fetch(two)).status, 404, 'an answered question closes its page');
  first.abort();
  await asking[0];
});

test('what the page serves is sanitised: page-chosen text cannot carry controls or bidi to the page', async () => {
  const call = new AbortController();
  const asking = approver.ask(
    request('q4', {
      element: { role: 'button', name: 'Save\u001b[8m\r\u202eDelete' },
      url: 'https://bank.example/\u200bpay',
      args: { text: 'P\u0430ypal\n' },
    }),
    call.signal,
  );
  const [shown] = await pending(await urlOf('q4'));
  assert.equal(shown?.element?.name, 'Save<U+001B>[8m<U+000D><U+202E>Delete');
  assert.equal(shown?.url, 'https://bank.example/<U+200B>pay');
  assert.deepEqual(shown?.args, { text: 'P\u0430ypal<U+000A>' });
  assert.equal(
    (shown as { approveAllNote?: string } | undefined)?.approveAllNote,
    'Approve-all is not available on sensitive pages: each action here needs its own approval.',
  );
  call.abort();
  await within('the withdrawn question settling', asking);
});

test('a site grant is chosen on the page only where offered; revoking is a choice of its own', async () => {
  const answer = async (id: string, overrides: Partial<ApprovalRequest>, decision: object) => {
    const asking = approver.ask(request(id, overrides));
    assert.equal((await decide(await urlOf(id), decision)).status, 200);
    return asking;
  };
  const offered = { sensitive: false, siteGrant: { origin: 'https://shop.example', tool: 'click' } };
  const asking = approver.ask(request('q5', offered));
  const url = await urlOf('q5');
  const [shown] = (await pending(url)) as (ApprovalRequest & { siteGrantLines?: string[] })[];
  assert.match(shown?.siteGrantLines?.[0] ?? '', /Site grant available: click on https:\/\/shop\.example/);
  await decide(url, { choice: 'site-grant', minutes: 60 });
  assert.deepEqual(await asking, { choice: 'site-grant', minutes: 60, by: page });
  assert.deepEqual(await answer('q6', {}, { choice: 'site-grant', minutes: 15 }), {
    choice: 'approve',
    by: page,
  });
  assert.deepEqual(await answer('q7', {}, { choice: 'revoke-site-grants' }), {
    choice: 'revoke-site-grants',
    by: page,
  });
});

test('a request from another origin is refused even with the token', async () => {
  const call = new AbortController();
  const asking = approver.ask(request('q8'), call.signal);
  const url = await urlOf('q8');
  const forged = await fetch(`${url}decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
    body: JSON.stringify({ decision: { choice: 'approve' } }),
  });
  assert.equal(forged.status, 403);
  const crossSite = await fetch(`${url}pending`, { headers: { 'sec-fetch-site': 'cross-site' } });
  assert.equal(crossSite.status, 403);
  assert.ok(inbox.get((await questionOf('q8')).id), 'still open');
  call.abort();
  await asking;
});

export type { Question };
