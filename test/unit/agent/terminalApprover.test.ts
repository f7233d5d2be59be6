// The terminal approver's answers, typed into a real line stream: every choice, re-asking on unknown input,
// no approve-all on sensitive pages, and end of input as a rejection.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { LineReader } from '../../../src/agent/lineReader.ts';
import { TerminalApprover } from '../../../src/agent/terminalApprover.ts';
import type { ApprovalRequest } from '../../../src/core/approvals.ts';

const request = (overrides: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  id: 'a1',
  tool: 'click',
  kind: 'write',
  reason: 'writes in shared mode ask',
  rule: 'write',
  sensitive: false,
  approveAllAllowed: true,
  url: 'https://shop.example/orders',
  origin: 'https://shop.example',
  element: { role: 'button', name: 'Save' },
  args: { ref: 'e3' },
  frontEnd: 'agent',
  ...overrides,
});

function approverWith(typed: string[], end = false) {
  const input = new PassThrough();
  const shown: string[] = [];
  const output = new PassThrough();
  output.on('data', (chunk: Buffer) => shown.push(chunk.toString()));
  const reader = new LineReader(input, output);
  for (const line of typed) input.write(`${line}\n`);
  if (end) input.end();
  return { approver: new TerminalApprover(reader, (text) => shown.push(text)), shown, reader };
}

test('every choice, as typed', async () => {
  const cases: [string[], object][] = [
    [[''], { choice: 'approve' }],
    [['y'], { choice: 'approve' }],
    [['a', 't'], { choice: 'approve-all', scope: 'tool' }],
    [['a', 's'], { choice: 'approve-all', scope: 'server' }],
    [['n', 'not now'], { choice: 'reject', reason: 'not now' }],
    [['n', ''], { choice: 'reject' }],
    [['s'], { choice: 'skip' }],
    [['m', '{"ref": "e9"}'], { choice: 'modify', args: { ref: 'e9' } }],
  ];
  for (const [typed, expected] of cases) {
    const { approver, reader } = approverWith(typed);
    assert.deepEqual(await approver.ask(request()), expected, typed.join(' / '));
    reader.close();
  }
});

test('unknown input and bad JSON ask again', async () => {
  const { approver, shown, reader } = approverWith(['maybe', 'm', '[1,2]', 'y']);
  assert.deepEqual(await approver.ask(request()), { choice: 'approve' });
  assert.match(shown.join(''), /Unknown choice "maybe"/);
  assert.match(shown.join(''), /not a JSON object/);
  reader.close();
});

test('on sensitive pages: the prompt says so, names the rule, and offers no approve-all', async () => {
  const { approver, shown, reader } = approverWith(['a', 'n', '']);
  const sensitive = request({ sensitive: true, approveAllAllowed: false, rule: '*://github.com/settings/*' });
  assert.deepEqual(await approver.ask(sensitive), { choice: 'reject' });
  const text = shown.join('');
  assert.match(text, /SENSITIVE PAGE/);
  assert.match(text, /rule \*:\/\/github\.com\/settings\/\*/);
  assert.doesNotMatch(text, /\[a\] approve all/);
  assert.match(text, /Unknown choice "a"/);
  reader.close();
});

test('end of input rejects', async () => {
  const { approver } = approverWith([], true);
  assert.deepEqual(await approver.ask(request()), { choice: 'reject', reason: 'no answer (end of input)' });
});
