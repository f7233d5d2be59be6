// The relay's verdict on a site tool call: sensitive always asks, read-only runs, "always allow" covers writes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideSiteCall } from '../../../src/core/siteCalls.ts';

test('every combination of read-only, sensitive and standing permission', () => {
  for (const readOnly of [true, false])
    for (const standingAllow of [true, false]) {
      const sensitive = decideSiteCall({ readOnly, standingAllow, sensitiveRule: 'github.com/settings/**' });
      assert.equal(sensitive.ask, true, 'a sensitive site asks whatever else holds');
      assert.match(sensitive.why, /github\.com\/settings/);
      const ordinary = decideSiteCall({ readOnly, standingAllow, sensitiveRule: undefined });
      assert.equal(ordinary.ask, !readOnly && !standingAllow);
    }
});
