// `tabward mcp` starts the approval page only after the client's tools/list (or a second later): a question asked
// before then (a client without elicitation calling a sensitive write first) must start the page itself, with
// its port already protected from the agent's browser and its token already redacted when the human is told.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LazyApprovalPage } from '../../../src/cli/lazyApprovalPage.ts';
import type { ApprovalRequest } from '../../../src/core/approvals.ts';
import { approvalRequest } from '../../helpers/approvalRequest.ts';
import { waitFor, within } from '../../helpers/waitFor.ts';

test('a question asked before the page was started starts it, protected before it is announced', async () => {
  const lines: string[] = [];
  const started: { port: number; token: string }[] = [];
  /** Lines that showed the page's address before its port was protected. */
  const tooEarly: string[] = [];
  const page = new LazyApprovalPage(
    (line) => {
      lines.push(line);
      if (/127\.0\.0\.1:\d+/.test(line) && started.length === 0) tooEarly.push(line);
    },
    (port, token) => started.push({ port, token }),
  );
  try {
    const call = new AbortController();
    const asking = page.ask(approvalRequest({ id: 'early' }), call.signal);
    const url = await waitFor('the approval page address', () =>
      lines.map((line) => /approval page at (\S+)/.exec(line)?.[1]).find(Boolean),
    );
    assert.deepEqual(tooEarly, [], 'its address was shown before its port was protected');
    assert.equal(started.length, 1);
    assert.equal(started[0]?.port, Number(new URL(url).port));
    assert.equal(started[0]?.token, new URL(url).pathname.split('/')[1]);
    const pending = await waitFor('the question on the page', async () => {
      const listed = (await (await fetch(`${url}pending`)).json()) as ApprovalRequest[];
      return listed.length > 0 ? listed : undefined;
    });
    assert.deepEqual(
      pending.map((entry) => entry.id),
      ['early'],
    );
    assert.deepEqual(tooEarly, []);
    call.abort();
    assert.equal((await within('the withdrawn question', asking)).choice, 'reject');
  } finally {
    await page.stop();
  }
});
