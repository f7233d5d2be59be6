// The feature switches tabward's own browsers start with (browserConnections.ts withOwnBrowserFeatures): the
// user's list kept, merged into the one switch Chromium reads (the last, in either spelling), and a user switch that
// would disable a feature tabward needs refused in every spelling Chromium takes (two attack reviews).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requiredFeatureDisabled, withOwnBrowserFeatures } from '../../../src/browser/browserConnections.ts';

const feature = 'SuppressDifferentOriginSubframeJSDialogs';

test('a --disable-features naming the dialog protection is found in every spelling', () => {
  for (const args of [
    [`--disable-features=Translate,${feature}`],
    ['--disable-features=Foo', `-disable-features=${feature}`],
    [`--disable-features=*${feature}`],
    [`--disable-features=${feature.toLowerCase()}<Trial`],
    [`-disable-features= ${feature}`],
  ])
    assert.equal(requiredFeatureDisabled(args), feature, args.join(' '));
  for (const args of [
    [],
    ['--disable-features=Translate'],
    [`--enable-features=${feature}`],
    [`--${feature}`],
  ])
    assert.equal(requiredFeatureDisabled(args), undefined, args.join(' '));
});

test("tabward's features go into the switch Chromium reads: the last, in either spelling, alone", () => {
  const args = withOwnBrowserFeatures([
    '--enable-features=Foo',
    '--lang=en',
    '-enable-features=Bar',
    '--disable-features=Translate',
    '-disable-features=Other',
  ]);
  const enables = args.filter((arg) => /^--?enable-features=/.test(arg));
  const disables = args.filter((arg) => /^--?disable-features=/.test(arg));
  assert.deepEqual(enables, [`--enable-features=Bar,${feature}`]);
  assert.equal(disables.length, 1, disables.join(' '));
  assert.match(disables[0] ?? '', /^--disable-features=Other,IsolateSandboxedIframes,/);
  assert.ok(args.includes('--lang=en'));
  assert.deepEqual(
    withOwnBrowserFeatures([]).filter((arg) => arg.startsWith('--enable-features=')),
    [`--enable-features=${feature}`],
  );
});
