// DevToolsActivePort discovery: default dirs per platform, file parsing, newest first.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  defaultUserDataDirs,
  discoverActivePort,
  readActivePort,
} from '../../../src/browser/devToolsActivePort.ts';

test('default user-data-dirs cover every Chrome channel and Chromium on each platform', () => {
  const linux = defaultUserDataDirs('linux', {}, '/home/u');
  assert.ok(linux.includes('/home/u/.config/google-chrome') && linux.includes('/home/u/.config/chromium'));
  assert.ok(
    linux.includes('/home/u/.config/google-chrome-beta') &&
      linux.includes('/home/u/.config/google-chrome-unstable'),
  );
  const mac = defaultUserDataDirs('darwin', {}, '/Users/u');
  assert.ok(mac.includes('/Users/u/Library/Application Support/Google/Chrome Canary'));
  const windows = defaultUserDataDirs('win32', { LOCALAPPDATA: 'C:/L' }, 'C:/U');
  assert.ok(windows.some((dir) => dir.includes('Chrome SxS') && dir.endsWith('User Data')));
});

test('reads port and browser path; the newest file wins; a corrupt file is an error', () => {
  const root = mkdtempSync(join(tmpdir(), 'dtap-'));
  const older = join(root, 'a');
  const newer = join(root, 'b');
  mkdirSync(older);
  mkdirSync(newer);
  writeFileSync(join(older, 'DevToolsActivePort'), '9222\n/devtools/browser/old\n');
  writeFileSync(join(newer, 'DevToolsActivePort'), '9333\n/devtools/browser/new\n');
  utimesSync(join(older, 'DevToolsActivePort'), new Date(1_000_000), new Date(1_000_000));
  assert.equal(readActivePort(older)?.wsEndpoint, 'ws://127.0.0.1:9222/devtools/browser/old');
  assert.equal(discoverActivePort([older, newer, join(root, 'missing')])?.port, 9333);
  assert.equal(discoverActivePort([join(root, 'missing')]), undefined);
  writeFileSync(join(older, 'DevToolsActivePort'), 'garbage');
  assert.throws(() => readActivePort(older), /not a valid DevToolsActivePort/);
});
