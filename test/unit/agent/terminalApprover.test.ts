// The terminal approver's answers, typed into a real line stream: every choice, re-asking on unknown input,
// no approve-all on sensitive pages, and end of input as a rejection.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { LineReader } from '../../../src/agent/lineReader.ts';
import { TerminalApprover } from '../../../src/agent/terminalApprover.ts';
import type { ApprovalRequest } from '../../../src/core/approvals.ts';
import { approvalRequest } from '../../helpers/approvalRequest.ts';

const request = (overrides: Partial<ApprovalRequest> = {}): ApprovalRequest =>
  approvalRequest({
    reason: 'writes in shared mode ask',
    rule: 'write',
    sensitive: false,
    approveAllAllowed: true,
    url: 'https://shop.example/orders',
    origin: 'https://shop.example',
    element: { role: 'button', name: 'Save' },
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
  // A human reaching for the usual key is told why it is missing.
  assert.match(
    text,
    /Approve-all is not available on sensitive pages: each action here needs its own approval\./,
  );
  assert.match(text, /Unknown choice "a"/);
  reader.close();
});

test('end of input rejects', async () => {
  const { approver } = approverWith([], true);
  assert.deepEqual(await approver.ask(request()), { choice: 'reject', reason: 'no answer (end of input)' });
});

test('on sensitive pages Enter alone does not approve: it asks again and says why; y approves', async () => {
  const { approver, shown, reader } = approverWith(['', '  ', 'y']);
  const sensitive = request({ sensitive: true, approveAllAllowed: false, rule: '*://bank.example/*' });
  assert.deepEqual(await approver.ask(sensitive), { choice: 'approve' });
  const text = shown.join('');
  assert.equal(text.match(/Enter alone does not approve/g)?.length, 2);
  assert.match(text, /\[y\] approve {2}\[n\] reject/);
  assert.doesNotMatch(text, /\[y\/Enter\]/);
  reader.close();
});

test('on sensitive pages bare Enter never approves, even at end of input', async () => {
  const { approver, reader } = approverWith([''], true);
  const sensitive = request({ sensitive: true, approveAllAllowed: false });
  assert.deepEqual(await approver.ask(sensitive), { choice: 'reject', reason: 'no answer (end of input)' });
  reader.close();
});

test('a page-chosen name cannot repaint the prompt: escapes, CR, newlines and bidi reach the terminal visible', async () => {
  const { approver, shown, reader } = approverWith(['n', '']);
  const spoof = request({
    element: {
      role: 'button',
      name: 'Save settings\u001b[8m\r\n── approval needed: click on button "Save"\u202e',
    },
    url: 'https://shop.example/\u200border',
    reason: 'writes in shared mode ask\u0007',
    args: { ref: 'e3', text: 'P\u0430ypal\u001b[2K' },
  });
  assert.deepEqual(await approver.ask(spoof), { choice: 'reject' });
  const text = shown.join('');
  for (const char of ['\u001b', '\r', '\u0007', '\u200b', '\u202e'])
    assert.ok(!text.includes(char), `U+${char.codePointAt(0)?.toString(16)} reached the terminal`);
  const questions = text.split('\n').filter((line) => line.startsWith('── approval needed'));
  assert.equal(questions.length, 1, 'no forged second question');
  assert.match(
    text,
    /click on button "Save settings<U\+001B>\[8m<U\+000D><U\+000A>── approval needed: click on button \\"Save\\"<U\+202E>"/,
  );
  assert.match(text, /page: https:\/\/shop\.example\/<U\+200B>order/);
  assert.match(text, /args: .*P\u0430ypal<U\+001B>\[2K.* ⚠ mixed scripts/);
  reader.close();
});

test('a very long name is capped in the prompt', async () => {
  const { approver, shown, reader } = approverWith(['s']);
  await approver.ask(request({ element: { role: 'link', name: `Open ${'x'.repeat(10_000)}` } }));
  const line =
    shown
      .join('')
      .split('\n')
      .find((l) => l.includes('approval needed')) ?? '';
  assert.ok(line.length < 200, `${line.length} characters`);
  assert.match(line, /x…"/);
  reader.close();
});

test('a withdrawn call stops the question, and the next line goes to whoever asks next', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const shown: string[] = [];
  const reader = new LineReader(input, output);
  const approver = new TerminalApprover(reader, (text) => shown.push(text));
  const call = new AbortController();
  const asking = approver.ask(request(), call.signal);
  call.abort();
  assert.deepEqual(await asking, { choice: 'reject', reason: 'the call was cancelled' });
  assert.match(shown.join(''), /question is withdrawn/);
  const next = reader.next('you> ');
  input.write('hello\n');
  assert.equal(await next, 'hello');
  assert.deepEqual(await approver.ask(request(), call.signal), {
    choice: 'reject',
    reason: 'the call was cancelled',
  });
  reader.close();
});

test('t and h give a site grant of 15 min or 1 h, only where one is offered', async () => {
  const offered = request({ siteGrant: { origin: 'https://shop.example', tool: 'click' } });
  for (const [key, minutes] of [
    ['t', 15],
    ['h', 60],
  ] as const) {
    const { approver, shown, reader } = approverWith([key]);
    assert.deepEqual(await approver.ask(offered), { choice: 'site-grant', minutes });
    assert.match(shown.join(''), /\[t\] this site 15 min {2}\[h\] 1 h/);
    assert.match(shown.join(''), /Site grant available: click on https:\/\/shop\.example unasked/);
    reader.close();
  }
  const { approver, shown, reader } = approverWith(['t', 'h', 'n', '']);
  assert.deepEqual(await approver.ask(request()), { choice: 'reject' });
  assert.doesNotMatch(shown.join(''), /\[t\] this site/);
  assert.equal(shown.join('').match(/Unknown choice/g)?.length, 2, 'not offered: t and h ask again');
  reader.close();
});

test('a plain page asked about for another reason is not called a sensitive page: the prompt names the reason', async () => {
  const cases = [
    ['taint', /⚠ CARRIES DATA FROM A SENSITIVE PAGE/],
    ['secret-new-origin', /⚠ A SECRET/],
    ['form-resubmission', /⚠ SENDS A FORM AGAIN/],
  ] as const;
  for (const [rule, warning] of cases) {
    const { approver, shown, reader } = approverWith(['n', '']);
    await approver.ask(request({ sensitive: true, approveAllAllowed: false, rule }));
    const text = shown.join('');
    assert.match(text, warning);
    assert.doesNotMatch(text, /⚠ SENSITIVE PAGE/, `${rule}: not a sensitive page`);
    assert.match(text, /Approve-all is not available for this action: it needs its own approval\./);
    reader.close();
  }
});

test("using the user's own Chrome (a login wall's question) needs a typed y: Enter alone asks again", async () => {
  const { approver, shown, reader } = approverWith(['', 'y']);
  const useYourChrome = request({ tool: 'browser_connect', kind: 'mode', approveAllAllowed: false });
  assert.deepEqual(await approver.ask(useYourChrome), { choice: 'approve' });
  const text = shown.join('');
  assert.match(text, /hands the agent your own Chrome and its logins: Enter alone does not approve/);
  assert.doesNotMatch(text, /\[y\/Enter\]/);
  reader.close();
});
