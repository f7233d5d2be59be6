// Which key presses paste (core/activatingKeys.ts pasteKey): refused for tools and recipes, since the browser's
// clipboard is shared by every context in it. Keys that only look alike stay allowed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pasteKey } from '../../../src/core/activatingKeys.ts';

test('every spelling of paste is a paste', () => {
  for (const key of [
    'Control+V',
    'control+v',
    'Meta+v',
    'ControlOrMeta+KeyV',
    'Control+Shift+V',
    'Control+Alt+Shift+v',
    'Shift+Insert',
    'ControlLeft+V',
    'MetaRight+v',
    'ShiftLeft+Insert',
    'ControlRight+KeyV',
    'Paste',
    ' Control + V ',
  ])
    assert.equal(pasteKey(key), true, key);
});

test('other keys are not', () => {
  for (const key of [
    'v',
    'V',
    'Shift+V',
    'Alt+V',
    'Control+A',
    'Insert',
    'Control+Insert',
    'Enter',
    'Control+C',
  ])
    assert.equal(pasteKey(key), false, key);
});
