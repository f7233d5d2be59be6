// A literal the agent typed into a password field (Secrets.redactTyped): masked in results and records, shown in
// questions (a page may have chosen it: masked, it hid the recipient a yes sent), and this client's own: one agent's
// literal does not hide text in another's pages, though the process's own records hide every client's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ApprovalRequest } from '../../../src/core/approvals.ts';
import { redactQuestion } from '../../../src/core/questionRedaction.ts';
import { Redactor } from '../../../src/core/redact.ts';
import { Secrets } from '../../../src/core/secrets.ts';

const typed = 'DE00ATTACK1';
const declared = 'D3clared-Tok';

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

test('a question shows a typed literal and masks a declared secret, in every part, the loaded-from address too', () => {
  const redactor = new Redactor([declared], [typed]);
  assert.equal(redactor.text(`to=${typed}`), 'to=«redacted»', 'records and results mask it');
  const shown = redactQuestion(
    question({
      formData: [
        [
          ['to', typed],
          ['token', declared],
        ],
      ],
      loadedFrom: `https://bank.example/x?t=${declared}&to=${typed}`,
      args: { body: `to=${typed}&k=${declared}` },
    }),
    redactor,
  );
  const text = JSON.stringify(shown);
  assert.doesNotMatch(text, new RegExp(declared));
  assert.equal(text.split(typed).length - 1, 3, text);
});

test("a client's typed literal is its own; the process's records hide every client's", () => {
  const process = new Secrets(new Map([['TOKEN', { value: declared, origins: [], source: 'test' }]]));
  const [first, second] = [process.forClient(), process.forClient()];
  first.redactTyped(typed);
  assert.equal(first.redactor.text(typed), '«redacted»');
  assert.equal(
    second.redactor.text(`recipient ${typed}`),
    `recipient ${typed}`,
    "another client's page text",
  );
  assert.equal(process.redactor.text(typed), '«redacted»', "the process's own records");
  for (const each of [first, second, process]) assert.equal(each.redactor.text(declared), '«redacted»');
  process.redactAlso('tok3n-value');
  assert.equal(
    second.redactor.text('tok3n-value'),
    '«redacted»',
    'a token is hidden from every client at once',
  );
});
