// The display sanitiser against the ways a page tries to repaint an approval question: one test per variant
// (escape sequences, carriage return, newlines, bidi overrides, zero-width and filler characters, look-alike
// letters, very long names), plus what must stay as it is.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argsLine, displayRequest, elementPhrase } from '../../../src/core/approvalDisplay.ts';
import type { ApprovalRequest } from '../../../src/core/approvals.ts';
import {
  forDisplay,
  hasMixedScripts,
  mixedScriptsWarning,
  quotedForDisplay,
  visibleLines,
} from '../../../src/core/displayText.ts';

// Nothing a terminal, a bidi algorithm or a line breaker acts on may survive.
const dangerousRanges: [number, number][] = [
  [0x0000, 0x001f],
  [0x007f, 0x009f],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2069],
  [0xfeff, 0xfeff],
  [0x3164, 0x3164],
  [0x115f, 0x1160],
  [0xffa0, 0xffa0],
  [0xe0000, 0xe007f],
];
const hasDangerous = (text: string): boolean =>
  [...text].some((char) => {
    const code = char.codePointAt(0) ?? 0;
    return dangerousRanges.some(([from, to]) => code >= from && code <= to);
  });

test('ESC sequences (a conceal code hiding the warning) are shown, not obeyed', () => {
  const name = 'Save\u001b[8m  ⚠ SENSITIVE PAGE\u001b[0m';
  const shown = forDisplay(name);
  assert.ok(!hasDangerous(shown));
  assert.equal(shown, 'Save<U+001B>[8m ⚠ SENSITIVE PAGE<U+001B>[0m');
  // 8-bit CSI (U+009B) and BEL as well.
  assert.equal(forDisplay('a\u009b8mb\u0007'), 'a<U+009B>8mb<U+0007>');
});

test('a carriage return cannot overwrite the line it is on', () => {
  const shown = forDisplay('Delete vault\rSave settings');
  assert.equal(shown, 'Delete vault<U+000D>Save settings');
});

test('newlines and Unicode line separators cannot forge a second line of the question', () => {
  const shown = forDisplay('Save\n   why:  harmless\u2028page: https://safe.example\u2029');
  assert.ok(!hasDangerous(shown));
  assert.equal(shown, 'Save<U+000A> why: harmless<U+2028>page: https://safe.example<U+2029>');
});

test('bidi controls are named, so a reversed "exe.txt" shows what it is', () => {
  for (const code of [
    0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
  ]) {
    const char = String.fromCodePoint(code);
    const shown = forDisplay(`invoice${char}fdp.exe`);
    assert.ok(!hasDangerous(shown), code.toString(16));
    assert.equal(shown, `invoice<U+${code.toString(16).toUpperCase()}>fdp.exe`);
  }
});

test('zero-width, filler and tag characters are made visible', () => {
  const cases: [number, string][] = [
    [0x200b, '200B'],
    [0x200c, '200C'],
    [0x200d, '200D'],
    [0x2060, '2060'],
    [0xfeff, 'FEFF'],
    [0x3164, '3164'],
    [0x115f, '115F'],
    [0x1160, '1160'],
    [0xffa0, 'FFA0'],
    [0xe0041, 'E0041'],
    [0xe007f, 'E007F'],
    [0x00ad, '00AD'],
  ];
  for (const [code, hex] of cases) {
    const shown = forDisplay(`Sa${String.fromCodePoint(code)}ve`);
    assert.equal(shown, `Sa<U+${hex}>ve`, hex);
  }
  // A name made only of fillers is not an empty-looking name.
  assert.equal(forDisplay('\u3164\u3164'), '<U+3164><U+3164>');
});

test('Cyrillic and Greek look-alikes are flagged; real words in one script are not', () => {
  assert.equal(
    forDisplay('P\u0430ypal'),
    `P\u0430ypal${mixedScriptsWarning}`,
    'Cyrillic а inside a Latin word',
  );
  assert.ok(hasMixedScripts('G\u03bfogle'), 'Greek omicron inside a Latin word');
  assert.ok(hasMixedScripts('Save \u0405\u0430\u0445'), 'an all-look-alike Cyrillic word beside Latin text');
  assert.ok(!hasMixedScripts('Войти'), 'Russian');
  assert.ok(!hasMixedScripts('Ελληνικά'), 'Greek');
  assert.ok(!hasMixedScripts('Войти / Sign in'), 'a bilingual label whose Cyrillic word is not a disguise');
  assert.ok(!hasMixedScripts('naïve café'), 'Latin with accents');
  assert.equal(forDisplay('❤️ Save'), '❤️ Save', 'emoji presentation selectors stay');
});

test('a very long name is capped, and whitespace runs cannot push the rest out of sight', () => {
  const long = forDisplay(`Save${'x'.repeat(5000)}`);
  assert.equal([...long].length, 120);
  assert.ok(long.endsWith('…'));
  assert.equal(forDisplay(`Save${' '.repeat(300)}and delete the vault`), 'Save and delete the vault');
  assert.equal(forDisplay(`Save${'\t\u3000\u00a0'.repeat(50)}now`), 'Save now');
  // A cut never leaves half of a mark.
  const marks = forDisplay('\u202e'.repeat(40), 30);
  assert.match(marks, /^(<U\+202E>)+…$/);
  // Stacked combining marks cannot paint over neighbouring lines.
  assert.equal([...forDisplay(`Z${'\u0301'.repeat(50)}`)].length, 4);
});

test('quotes inside a quoted name are escaped, so the page cannot close them', () => {
  assert.equal(quotedForDisplay('Save" (safe)'), '"Save\\" (safe)"');
  assert.equal(quotedForDisplay('a\\'), '"a\\\\"');
});

test('an approval request is shown with every page-chosen string sanitised', () => {
  const request: ApprovalRequest = {
    id: 'a1',
    tool: 'click',
    kind: 'write',
    reason: 'writes on sensitive pages need a fresh approval\u001b[8m',
    rule: '*://bank.example/*',
    sensitive: true,
    approveAllAllowed: false,
    url: 'https://bank.example/pay\u202e',
    origin: 'https://bank.example',
    element: { role: 'button', name: 'Pay 1 €\rPay 10 000 €' },
    args: { ref: 'e3', nested: ['\u200bhidden', { 'k\u001b': 'v\n' }] },
    frontEnd: 'mcp',
  };
  const shown = displayRequest(request);
  assert.doesNotMatch(JSON.stringify(shown).replaceAll('\\\\', ''), /\\u00|\\r|\\n/);
  assert.equal(shown.element?.name, 'Pay 1 €<U+000D>Pay 10 000 €');
  assert.equal(shown.url, 'https://bank.example/pay<U+202E>');
  assert.deepEqual(shown.args, { ref: 'e3', nested: ['<U+200B>hidden', { 'k<U+001B>': 'v<U+000A>' }] });
  assert.equal(elementPhrase(request), ' on button "Pay 1 €<U+000D>Pay 10 000 €"');
  assert.ok(!hasDangerous(argsLine(request)));
  assert.equal(request.element?.name, 'Pay 1 €\rPay 10 000 €', 'the original is left for the guard');
});

test('visibleLines keeps lines and tabs and marks every other control, as each piece of a stream arrives', () => {
  const painted = 'a\u001b[2J\r\tb\n\u009b9;10r\u202ec\u2028d\u0007';
  assert.equal(visibleLines(painted), 'a<U+001B>[2J<U+000D>\tb\n<U+009B>9;10r<U+202E>c<U+2028>d<U+0007>');
  // An escape split across two deltas is marked in the first; nothing is held back.
  assert.equal(visibleLines('x\u001b') + visibleLines('[2J'), 'x<U+001B>[2J');
  assert.equal(visibleLines('plain   text, ✓ 😀\ufe0f'), 'plain   text, ✓ 😀\ufe0f');
});

test('a page address with a user name before its host names the real site; an international host is flagged', () => {
  const asked = (url: string) =>
    displayRequest({
      id: 'q',
      tool: 'click',
      kind: 'write',
      reason: 'r',
      rule: 'r',
      sensitive: true,
      approveAllAllowed: false,
      url,
      origin: new URL(url).origin,
      args: {},
      frontEnd: 'mcp',
    }).url;
  // Read from the left, it is github.com; the browser went to bank.test (an attack review's "Page:" line).
  assert.equal(
    asked('http://github.com@bank.test:42761/settings'),
    'http://bank.test:42761/settings ⚠ a user name (github.com@) stood before the host: the site is bank.test:42761',
  );
  assert.match(
    asked('https://github.com:secret@bank.test/'),
    /^https:\/\/bank\.test\/ ⚠ a user name \(github\.com@\)/,
  );
  assert.match(
    asked('https://gіthub.com/settings'),
    /^https:\/\/xn--gthub-n2e\.com\/settings ⚠ international name/,
  );
  assert.equal(asked('https://github.com/settings'), 'https://github.com/settings');
});
