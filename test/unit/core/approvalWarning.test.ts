// What an approval question is labelled: a sensitive page only when the question is about one. A rules-file
// pattern is a sensitive page whatever its spelling, and a request the backstop held says why it was held.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { approveAllNote, warningOf } from '../../../src/core/approvalDisplay.ts';
import type { ApprovalRequest, Approver } from '../../../src/core/approvals.ts';
import { type Backstop, CallPath, type GuardedAction } from '../../../src/core/callPath.ts';
import type { Attendant } from '../../../src/core/networkHolds.ts';
import { Redactor } from '../../../src/core/redact.ts';
import { RuleSet } from '../../../src/core/sensitiveRules.ts';
import { approvalRequest } from '../../helpers/approvalRequest.ts';

test('a page a rules-file pattern marks sensitive is a sensitive page, however the pattern is spelled', () => {
  for (const rule of ['*://secrets.example.com/*', 'secret://vault/*', '*://taint.example/*']) {
    const request = approvalRequest({ rule });
    assert.equal(warningOf(request), 'SENSITIVE PAGE', rule);
    assert.match(approveAllNote(request) ?? '', /not available on sensitive pages/, rule);
  }
});

test('a held request is labelled by why it was held: a sensitive page (a rule), or what it may carry (the taint)', async () => {
  const asked: ApprovalRequest[] = [];
  const approver: Approver = {
    name: 'test human',
    ask: async (request) => {
      asked.push(request);
      return { choice: 'reject' };
    },
  };
  let attendant: Attendant | undefined;
  const backstop: Backstop = {
    open: () => ({ end: () => undefined }),
    mark: () => 0,
    stoppedSince: () => ({ lines: [], unkept: 0 }),
    sentSince: () => ({ lines: [], unkept: 0 }),
    sensitiveReadsSince: () => [],
    attend: (given) => {
      attendant = given;
      return { settled: async () => undefined, detach: () => undefined };
    },
    watchTaint: () => () => undefined,
    secretTyped: () => undefined,
  };
  const path = new CallPath({
    rules: new RuleSet([]),
    audit: { record: () => undefined },
    policy: 'default',
    mode: () => 'isolated',
    redactor: () => new Redactor([]),
    backstop,
    passMaxMs: 1_000,
  });
  const request = (url: string) => ({ method: 'POST', url, document: false, mainFrame: false, hop: false });
  const click: GuardedAction<string> = {
    name: 'click',
    args: {},
    look: async () => ({
      facts: {
        tool: 'click',
        kind: 'write',
        tab: { id: 'p1', ownedByAgent: true },
        frames: [{ url: 'https://shop.example/' }],
        carriesData: false,
      },
      binding: 'click',
      url: 'https://shop.example/',
    }),
    act: async () => {
      const held = attendant ?? assert.fail('the click is attended');
      await held.ask(request('https://bank.example/pay'), 'it would change state on a sensitive page', false);
      await held.ask(request('https://evil.example/x'), 'the agent has read sensitive pages on bank', true);
      return 'done';
    },
    skipped: () => 'skipped',
  };
  await path.run(click, { frontEnd: 'test', approver, signal: new AbortController().signal });
  assert.deepEqual(
    asked.map((question) => warningOf(question)),
    ['SENSITIVE PAGE', 'MAY CARRY SENSITIVE DATA'],
  );
});
