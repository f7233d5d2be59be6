// A literal the agent typed into a password field, in a question (core/questionRedaction.ts typedTextShown): a
// page may have chosen it, so a question holding it as a value of its own (a recipient, an amount, a held post's
// parameter) is not asked; inside a longer value it is masked; a declared secret is masked wherever it stands.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ApprovalRequest } from '../../../src/core/approvals.ts';
import { redactQuestion, typedTextShown, valuesWithin } from '../../../src/core/questionRedaction.ts';
import { Redactor, redactionMark } from '../../../src/core/redact.ts';

const typed = 'DE00ATTACK1';
const declared = 'D3clared-Tok';
const redactor = new Redactor([declared], [typed]);

const question = (extra: Partial<ApprovalRequest>): ApprovalRequest => ({
  id: 'q1',
  tool: 'click',
  kind: 'write',
  reason: 'a write on a sensitive page',
  rule: 'sensitive',
  sensitive: true,
  approveAllAllowed: false,
  url: 'https://bank.example/pay',
  origin: 'https://bank.example',
  args: { ref: 'e3' },
  frontEnd: 'mcp',
  ...extra,
});

test('a typed literal as a value of its own, in any part of a question, is found', () => {
  const cases: [Partial<ApprovalRequest>, string][] = [
    [
      {
        formData: [
          [
            ['to', typed],
            ['amount', '100'],
          ],
        ],
      },
      'the form data it sends',
    ],
    [{ formData: [[['to', typed.toLowerCase()]]] }, 'the form data it sends'],
    [{ args: { fields: [{ ref: 'e1', value: typed }] } }, 'its arguments'],
    [{ destination: `POST bank.example/transfer?to=${typed}&n=1` }, 'where it sends'],
    [{ destination: `GET bank.example/pay/${encodeURIComponent(typed)}` }, 'where it sends'],
    [{ url: `https://bank.example/pay?iban=${typed}` }, 'the page address'],
    [{ element: { role: 'button', name: typed } }, 'the element'],
    [{ element: { role: 'button', name: `Send to ${typed} now` } }, 'the element'],
    [{ args: { body: JSON.stringify({ transfer: { to: typed } }) } }, 'its arguments'],
    [{ args: { body: `to=${encodeURIComponent(typed)}&amount=5` } }, 'its arguments'],
    [
      { args: { body: `--b\r\nContent-Disposition: form-data; name="to"\r\n\r\n${typed}\r\n--b--` } },
      'its arguments',
    ],
    [{ args: { body: Buffer.from(typed).toString('base64') } }, 'its arguments'],
  ];
  for (const [extra, part] of cases)
    assert.equal(typedTextShown(question(extra), redactor), part, JSON.stringify(extra));
});

test('inside a longer word, as the value typed into its field, or as a declared secret, it is not', () => {
  for (const extra of [
    { formData: [[['email', `${typed}@example.com`]]] },
    { args: { ref: 'e1', value: redactionMark } },
    { formData: [[['token', declared]]] },
    { formData: [[['to', 'DE11HONEST']]] },
  ] as Partial<ApprovalRequest>[])
    assert.equal(typedTextShown(question(extra), redactor), undefined, JSON.stringify(extra));
  assert.equal(typedTextShown(question({ formData: [[['to', typed]]] }), new Redactor([typed])), undefined);
});

test('the values a text carries: words, lines, parameters, path segments, JSON strings', () => {
  const values = valuesWithin('POST h.example/a/b%20c?x=1&y=two {"k":["v"]}');
  for (const value of ['b c', '1', 'two']) assert.ok(values.includes(value), value);
  assert.ok(valuesWithin('{"k":["v",{"z":"w"}]}').includes('w'));
  assert.ok(valuesWithin('a\nsecond line\nc').includes('second line'));
});

test("a question's every address is redacted, the one its document was loaded from too", () => {
  const shown = redactQuestion(
    question({ loadedFrom: `https://bank.example/x?t=${declared}`, url: `https://bank.example/?t=${declared}` }),
    redactor,
  );
  assert.doesNotMatch(JSON.stringify(shown), new RegExp(declared));
});
