// What a failed command prints: one line and an exit code for tabward's errors, Node's system errors and
// anything else.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reportError } from '../../../src/cli/errorReport.ts';
import { TabwardError } from '../../../src/core/errors.ts';

test('tabward errors: message and hint, 2 for bad input, 1 otherwise', () => {
  assert.deepEqual(reportError(new TabwardError('bad_input', 'No such file.', 'Check --x.')), {
    line: 'tabward: No such file. Check --x.',
    exitCode: 2,
  });
  assert.equal(reportError(new TabwardError('timeout', 'Too slow.')).exitCode, 1);
});

test('system errors name the path or port they were about', () => {
  const eisdir = Object.assign(new Error('EISDIR: illegal operation on a directory, read'), {
    code: 'EISDIR',
    path: '/tmp/rules',
  });
  assert.match(reportError(eisdir).line, /^tabward: cannot use \/tmp\/rules: it is a folder, not a file\./);
  const busy = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE', port: 8787 });
  assert.match(reportError(busy).line, /^tabward: port 8787 is in use\./);
});

test('anything else is one line that says how to see more', () => {
  const report = reportError(new Error('boom\n    at somewhere (file.js:1:1)'));
  assert.equal(report.exitCode, 1);
  assert.equal(report.line.split('\n').length, 1);
  assert.match(report.line, /unexpected error: boom .*TABWARD_DEBUG=1/);
});
