// From a review of 4c3d4c2 (a spaced-out secret's separators: anything but an ASCII letter or digit), each test
// failed before its fix:
// - A secret's own non-ASCII characters were separators too, so a secret with a repeated non-ASCII letter made its
//   pattern backtrack exponentially on text of that letter (`жжжжжжжжжжжжq` against 300 × `ж`: ~30 s of CPU), on
//   the event loop that serves every session. A separator now never is the character that follows it (which also
//   ends the same stall for secrets of repeated punctuation, `!!!!…`, that the old separators had).
// - Redacted neither before nor after 4c3d4c2, now redacted: the secret in another Unicode normal form (NFD: `a` +
//   U+0308 for `ä`, which renders the same), in full-width characters, and in case forms that are not one-to-one
//   (`ß` upper-cased by CSS text-transform is `SS`; `İ` lower-cased is `i` + U+0307).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { Redactor, redactionMark } from '../../../src/core/redact.ts';

/** Redacts `text` for `secret` in a worker thread; undefined when it has not finished within `boundMs`. */
function redactInWorker(secret: string, text: string, boundMs: number): Promise<string | undefined> {
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    require('tsx/cjs');
    const { Redactor } = require(workerData.module);
    parentPort.postMessage(new Redactor([workerData.secret]).text(workerData.text));`;
  const module = new URL('../../../src/core/redact.ts', import.meta.url).pathname;
  const worker = new Worker(source, { eval: true, workerData: { secret, text, module } });
  return new Promise((resolve, reject) => {
    const bound = setTimeout(() => {
      void worker.terminate();
      resolve(undefined);
    }, boundMs);
    worker.once('message', (redacted: string) => {
      clearTimeout(bound);
      void worker.terminate();
      resolve(redacted);
    });
    worker.once('error', (error) => {
      clearTimeout(bound);
      reject(error);
    });
  });
}

test('a secret with a repeated non-ASCII letter does not hang redaction of text made of that letter ', async () => {
  const secret = `${'ж'.repeat(15)}q`;
  // Linear work for the old pattern (well under a second even on a loaded machine); the bound only stops a hang.
  const redacted = await redactInWorker(secret, `${'ж'.repeat(300)} ${secret}`, 20_000);
  assert.notEqual(redacted, undefined, 'redaction did not finish within 20 s (exponential backtracking)');
  assert.ok(redacted?.endsWith(redactionMark));
});

test('a secret shown in another Unicode normal form (NFD, renders the same) is redacted', () => {
  const redactor = new Redactor(['pässwörd1']);
  const decomposed = 'pässwörd1'.normalize('NFD');
  assert.equal(redactor.text(`a ${decomposed} b`), `a ${redactionMark} b`);
});

test('a secret shown in full-width characters (NFKC-equivalent) is redacted', () => {
  const redactor = new Redactor(['hunter22']);
  assert.equal(redactor.text('a ｈｕｎｔｅｒ２２ b'), `a ${redactionMark} b`);
});

test('a secret upper- or lower-cased where case is not one-to-one (ß → SS, İ → i̇) is redacted', () => {
  const redactor = new Redactor(['Straße99x', 'İstanbul7']);
  for (const shown of ['Straße99x'.toUpperCase(), 'İstanbul7'.toLowerCase()])
    assert.equal(redactor.text(`a ${shown} b`), `a ${redactionMark} b`, JSON.stringify(shown));
});
