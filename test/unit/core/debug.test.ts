// The debug channel (core/debug.ts): TABWARD_DEBUG unset prints nothing; 1 (all, *) every area; a comma list only
// those; a swallowing handler always resolves to undefined and says what it swallowed and why, on stderr only.

import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { debugOn, swallow, swallowed } from '../../../src/core/debug.ts';

const saved = process.env.TABWARD_DEBUG;
afterEach(() => {
  if (saved === undefined) delete process.env.TABWARD_DEBUG;
  else process.env.TABWARD_DEBUG = saved;
});

/** What `run` wrote to stderr. */
async function stderrOf(run: () => unknown): Promise<string> {
  const written: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    await run();
  } finally {
    process.stderr.write = write;
  }
  return written.join('');
}

test('which areas a TABWARD_DEBUG value turns on', () => {
  for (const off of [undefined, '', ' ', '0', 'false'])
    assert.equal(debugOn('browser', off), false, String(off));
  for (const all of ['1', 'all', '*', 'true', 'TRUE']) {
    assert.equal(debugOn('browser', all), true, all);
    assert.equal(debugOn('cli', all), true, all);
  }
  assert.equal(debugOn('browser', 'browser,cli'), true);
  assert.equal(debugOn('cli', ' browser , cli '), true);
  assert.equal(debugOn('tools', 'browser,cli'), false);
});

test('unset, a swallowed error resolves to undefined and prints nothing', async () => {
  delete process.env.TABWARD_DEBUG;
  let value: unknown = 'not yet';
  const printed = await stderrOf(async () => {
    value = await Promise.reject(new Error('tab closed')).catch(swallow('browser', 'closing a tab'));
    swallowed('cli', 'an empty catch', new Error('gone'));
  });
  assert.equal(value, undefined);
  assert.equal(printed, '');
});

test('on for an area, it says what was swallowed and why; other areas stay quiet', async () => {
  process.env.TABWARD_DEBUG = 'browser';
  let value: unknown = 'not yet';
  const printed = await stderrOf(async () => {
    value = await Promise.reject(new Error('tab closed')).catch(
      swallow('browser', 'session.close: closing a tab'),
    );
    swallowed('browser', 'launch.killGroup: already gone', 'ESRCH');
    swallowed('cli', 'config: reported below', new Error('not printed'));
  });
  assert.equal(value, undefined);
  assert.equal(
    printed,
    'tabward debug [browser] swallowed (session.close: closing a tab): Error: tab closed\n' +
      'tabward debug [browser] swallowed (launch.killGroup: already gone): ESRCH\n',
  );
});
