// The approval page as the human sees it over HTTP: what /pending serves is sanitised, and a question whose
// call is withdrawn (its signal aborted) leaves the page at once and can no longer be answered.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ApprovalPage } from '../../../src/approval/approvalPage.ts';
import type { ApprovalRequest } from '../../../src/core/approvals.ts';
import { approvalRequest } from '../../helpers/approvalRequest.ts';
import { waitFor, within } from '../../helpers/waitFor.ts';

const request = (id: string, overrides: Partial<ApprovalRequest> = {}): ApprovalRequest =>
  approvalRequest({ id, ...overrides });

let page: ApprovalPage;
let url = '';
before(async () => {
  page = new ApprovalPage();
  url = await page.start();
});
after(() => page.stop());

const pending = async () => (await fetch(`${url}pending`)).json() as Promise<ApprovalRequest[]>;
const decide = (id: string) =>
  fetch(`${url}decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, decision: { choice: 'approve' } }),
  });

test('a withdrawn call takes its question off the page; approving it afterwards is a 404', async () => {
  const call = new AbortController();
  const asking = page.ask(request('q1'), call.signal);
  await waitFor('the question on the page', async () => (await pending()).some((r) => r.id === 'q1'));
  call.abort();
  assert.deepEqual(await within('the withdrawn question settling', asking), {
    choice: 'reject',
    reason: 'the call was cancelled',
  });
  assert.deepEqual(await pending(), []);
  assert.equal((await decide('q1')).status, 404);
});

test('a call withdrawn before it asks never shows a question', async () => {
  const call = new AbortController();
  call.abort();
  assert.deepEqual(await within('the withdrawn question settling', page.ask(request('q2'), call.signal)), {
    choice: 'reject',
    reason: 'the call was cancelled',
  });
  assert.deepEqual(await pending(), []);
});

test('an answered question releases its signal listener and the answer stands', async () => {
  const call = new AbortController();
  const asking = page.ask(request('q3'), call.signal);
  await waitFor('the question on the page', async () => (await pending()).some((r) => r.id === 'q3'));
  assert.equal((await decide('q3')).status, 200);
  call.abort();
  assert.deepEqual(await asking, { choice: 'approve' });
});

test('what /pending serves is sanitised: page-chosen text cannot carry controls or bidi to the page', async () => {
  const call = new AbortController();
  const asking = page.ask(
    request('q4', {
      element: { role: 'button', name: 'Save\u001b[8m\r\u202eDelete' },
      url: 'https://bank.example/\u200bpay',
      args: { text: 'P\u0430ypal\n' },
    }),
    call.signal,
  );
  const [shown] = await waitFor('the question on the page', async () => {
    const list = await pending();
    return list.length ? list : undefined;
  });
  assert.equal(shown?.element?.name, 'Save<U+001B>[8m<U+000D><U+202E>Delete');
  assert.equal(shown?.url, 'https://bank.example/<U+200B>pay');
  assert.deepEqual(shown?.args, { text: 'P\u0430ypal<U+000A>' });
  // No approve-all here (the helper's request is on a sensitive page): the page says why under the buttons.
  assert.equal(
    (shown as { approveAllNote?: string } | undefined)?.approveAllNote,
    'Approve-all is not available on sensitive pages: each action here needs its own approval.',
  );
  call.abort();
  await within('the withdrawn question settling', asking);
});

test('a site grant is chosen on the page only where offered; revoking is a choice of its own', async () => {
  const answer = async (id: string, overrides: Partial<ApprovalRequest>, decision: object) => {
    const asking = page.ask(request(id, overrides));
    await waitFor('the question on the page', async () => (await pending()).some((r) => r.id === id));
    const response = await fetch(`${url}decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, decision }),
    });
    assert.equal(response.status, 200);
    return asking;
  };
  const offered = { sensitive: false, siteGrant: { origin: 'https://shop.example', tool: 'click' } };
  const asking = page.ask(request('q5', offered));
  const [shown] = await waitFor('the question on the page', async () => {
    const list = (await pending()) as (ApprovalRequest & { siteGrantLines?: string[] })[];
    return list.length ? list : undefined;
  });
  assert.match(shown?.siteGrantLines?.[0] ?? '', /Site grant available: click on https:\/\/shop\.example/);
  await fetch(`${url}decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'q5', decision: { choice: 'site-grant', minutes: 60 } }),
  });
  assert.deepEqual(await asking, { choice: 'site-grant', minutes: 60 });
  assert.deepEqual(await answer('q6', {}, { choice: 'site-grant', minutes: 15 }), { choice: 'approve' });
  assert.deepEqual(await answer('q7', {}, { choice: 'revoke-site-grants' }), {
    choice: 'revoke-site-grants',
  });
});
