// Finding a Chrome or Chromium executable: an explicit path, TABWARD_CHROME, then the usual install paths of
// Linux, macOS and Windows. The real binary is preferred to Debian's /usr/bin/chromium wrapper script.

import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { TabwardError } from '../core/errors.ts';

export function chromeCandidates(platform = process.platform, env = process.env): string[] {
  if (platform === 'darwin') {
    return [
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      '/Applications/Google Chrome Beta.app/Contents/MacOS/Google Chrome Beta',
      '/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary',
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
    ];
  }
  if (platform === 'win32') {
    const roots = [env.PROGRAMFILES, env['PROGRAMFILES(X86)'], env.LOCALAPPDATA].filter((root) => root);
    return roots.flatMap((root) => [
      join(root ?? '', 'Google', 'Chrome', 'Application', 'chrome.exe'),
      join(root ?? '', 'Chromium', 'Application', 'chrome.exe'),
    ]);
  }
  return [
    '/usr/lib/chromium/chromium',
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/google-chrome-beta',
    '/opt/google/chrome/chrome',
    '/snap/bin/chromium',
  ];
}

export function findChrome(explicitPath?: string): string {
  if (explicitPath) {
    if (isExecutable(explicitPath)) return explicitPath;
    throw new TabwardError(
      'browser_unavailable',
      `No executable browser at ${explicitPath}.`,
      'Check --executable-path.',
    );
  }
  const fromEnv = process.env.TABWARD_CHROME;
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new TabwardError('browser_unavailable', `TABWARD_CHROME=${fromEnv} is not an executable file.`);
  }
  const found = chromeCandidates().find(isExecutable);
  if (found) return found;
  throw new TabwardError(
    'browser_unavailable',
    'No Chrome or Chromium found.',
    process.platform === 'linux'
      ? 'Install one (Debian/Ubuntu: `sudo apt-get install chromium`) or pass --executable-path.'
      : 'Install Google Chrome from google.com/chrome or pass --executable-path.',
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
