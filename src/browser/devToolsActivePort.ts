// Discovery of a running Chrome that allows remote debugging, through the DevToolsActivePort file that
// Chrome writes into its user-data-dir (line 1: port, line 2: browser WebSocket path). Chrome >= 144 writes it
// when the user turns on chrome://inspect/#remote-debugging; --remote-debugging-port writes it too.

import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TabwardError } from '../core/errors.ts';

export interface ActivePort {
  readonly userDataDir: string;
  readonly port: number;
  readonly wsEndpoint: string;
  readonly modifiedMs: number;
}

export function defaultUserDataDirs(
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
  home = homedir(),
): string[] {
  if (platform === 'darwin') {
    const base = join(home, 'Library', 'Application Support');
    const names = [
      'Google/Chrome',
      'Google/Chrome Beta',
      'Google/Chrome Dev',
      'Google/Chrome Canary',
      'Chromium',
    ];
    return names.map((name) => join(base, name));
  }
  if (platform === 'win32') {
    const base = env.LOCALAPPDATA ?? join(home, 'AppData', 'Local');
    const names = [
      'Google/Chrome',
      'Google/Chrome Beta',
      'Google/Chrome Dev',
      'Google/Chrome SxS',
      'Chromium',
    ];
    return names.map((name) => join(base, ...name.split('/'), 'User Data'));
  }
  const base = env.XDG_CONFIG_HOME ?? join(home, '.config');
  const names = [
    'google-chrome',
    'google-chrome-beta',
    'google-chrome-unstable',
    'google-chrome-canary',
    'chromium',
  ];
  return names.map((name) => join(base, name));
}

/** Reads one user-data-dir's DevToolsActivePort, or undefined when there is none. Throws on a corrupt file. */
export function readActivePort(userDataDir: string): ActivePort | undefined {
  const file = join(userDataDir, 'DevToolsActivePort');
  let text: string;
  let modifiedMs: number;
  try {
    text = readFileSync(file, 'utf8');
    modifiedMs = statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  const [portLine = '', pathLine = ''] = text.split(/\r?\n/);
  const port = Number.parseInt(portLine.trim(), 10);
  if (
    !Number.isInteger(port) ||
    port <= 0 ||
    port > 65535 ||
    !pathLine.trim().startsWith('/devtools/browser/')
  ) {
    throw new TabwardError('attach_failed', `${file} is not a valid DevToolsActivePort file.`);
  }
  return { userDataDir, port, wsEndpoint: `ws://127.0.0.1:${port}${pathLine.trim()}`, modifiedMs };
}

/** The newest DevToolsActivePort among the given dirs (default: every known Chrome/Chromium dir). */
export function discoverActivePort(dirs: readonly string[] = defaultUserDataDirs()): ActivePort | undefined {
  const found: ActivePort[] = [];
  for (const dir of dirs) {
    const port = readActivePort(dir);
    if (port) found.push(port);
  }
  return found.sort((a, b) => b.modifiedMs - a.modifiedMs)[0];
}

export const enableRemoteDebuggingHint =
  'Open chrome://inspect/#remote-debugging in your Chrome (version 144 or newer) and turn on ' +
  '"Allow remote debugging for this browser instance", then try again. Older Chrome: start it with ' +
  '--remote-debugging-port=9222 and a non-default --user-data-dir, and pass --browser-url http://127.0.0.1:9222.';
