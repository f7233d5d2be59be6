// The effects tools declare (core/kinds.ts ToolEffects) are what the guard and the runner go by, never a tool's
// name: each effect is declared by the tool it stands for, and the ones the runner looks a tool up by by one only.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ToolEffects } from '../../../src/core/kinds.ts';
import { toolsFor } from '../../../src/tools/catalogue.ts';

const declaring = (effect: keyof ToolEffects) =>
  toolsFor(['core', 'devtools'])
    .filter((tool) => tool[effect] === true)
    .map((tool) => tool.name);

test('each effect is declared by the tool it stands for, and by no other', () => {
  assert.deepEqual(declaring('closesTab'), ['close_page']);
  assert.deepEqual(declaring('attachesUserBrowser'), ['browser_connect']);
  assert.deepEqual(declaring('reportsGuardState'), ['browser_status']);
  // The runner reopens a login wall with the one tool that opens tabs, and reads the `snapshot` option with the
  // one that snapshots a tab.
  assert.deepEqual(declaring('opensTab'), ['new_page']);
  assert.deepEqual(declaring('snapshotsTab'), ['take_snapshot']);
});
