// A form's post carries what its question showed, in each encoding (core/formBodies.ts): the same fields in the same
// order, line breaks as the browser sends them; a field changed or added, or another order, is another body.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { passwordSeal } from '../../../src/browser/passwordSeals.ts';
import { carriesShownForm, passwordNotShown, type ShownForm } from '../../../src/core/formBodies.ts';

const fields = [
  ['title', 'laptop'],
  ['note', 'line one\nline two'],
] as const;

test('URL-encoded: the same fields pass, another value, an added field or another order do not', () => {
  const shown: ShownForm = { sendsAs: 'urlencoded', fields };
  assert.equal(carriesShownForm(shown, 'title=laptop&note=line+one%0D%0Aline+two'), true);
  assert.equal(carriesShownForm(shown, 'title=laptop&note=line+one%0D%0Aline+three'), false);
  assert.equal(carriesShownForm(shown, 'title=laptop&note=line+one%0D%0Aline+two&key=evil'), false);
  assert.equal(carriesShownForm(shown, 'note=line+one%0D%0Aline+two&title=laptop'), false);
  assert.equal(carriesShownForm(shown, undefined), false);
});

test('text/plain: name=value lines', () => {
  const shown: ShownForm = {
    sendsAs: 'plain',
    fields: [
      ['title', 'laptop'],
      ['key', 'a=b'],
    ],
  };
  assert.equal(carriesShownForm(shown, 'title=laptop\r\nkey=a=b\r\n'), true);
  assert.equal(carriesShownForm(shown, 'title=laptop\r\nkey=evil\r\n'), false);
});

test('multipart: text parts by value, a file by its name', () => {
  const shown: ShownForm = {
    sendsAs: 'multipart',
    fields: [
      ['title', 'laptop'],
      ['avatar', '(a file: me.png, 4 bytes)'],
    ],
  };
  const body = (title: string, file: string) =>
    `------B\r\nContent-Disposition: form-data; name="title"\r\n\r\n${title}\r\n------B\r\nContent-Disposition: form-data; name="avatar"; filename="${file}"\r\nContent-Type: image/png\r\n\r\n\u0089PNG\r\n------B--\r\n`;
  assert.equal(carriesShownForm(shown, body('laptop', 'me.png')), true);
  assert.equal(carriesShownForm(shown, body('ATTACKER', 'me.png')), false);
  assert.equal(carriesShownForm(shown, body('laptop', 'other.png')), false);
  assert.equal(carriesShownForm(shown, 'not multipart'), false);
  const empty: ShownForm = { sendsAs: 'multipart', fields: [] };
  assert.equal(carriesShownForm(empty, '------B--\r\n'), true);
  assert.equal(carriesShownForm({ sendsAs: 'urlencoded', fields: [] }, ''), true);
  assert.equal(carriesShownForm({ sendsAs: 'urlencoded', fields: [] }, 'key=evil'), false);
});

test('a value shown as a password is bound by its seal: another value, or no seal to check with, does not pass', () => {
  const shown: ShownForm = {
    sendsAs: 'urlencoded',
    fields: [
      ['title', 'laptop'],
      ['key', passwordNotShown],
    ],
    sealed: [undefined, passwordSeal('hunter2-secret')],
  };
  assert.equal(carriesShownForm(shown, 'title=laptop&key=hunter2-secret', passwordSeal), true);
  assert.equal(carriesShownForm(shown, 'title=laptop&key=ssh-ed25519+AAAA+attacker', passwordSeal), false);
  // Without the process's seal nothing sealed is let through (fail closed).
  assert.equal(carriesShownForm(shown, 'title=laptop&key=hunter2-secret'), false);
  // A password field whose value could not be read (none sealed) is bound by its name alone, as before.
  const unread: ShownForm = { sendsAs: 'urlencoded', fields: [['pw', passwordNotShown]] };
  assert.equal(carriesShownForm(unread, 'pw=anything', passwordSeal), true);
  assert.equal(carriesShownForm(unread, 'other=anything', passwordSeal), false);
});
