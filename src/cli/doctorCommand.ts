// `tabward doctor`: what works on this machine — which Chrome, its version (>= 144 for the
// chrome://inspect toggle), whether remote debugging is on and reachable, and where tabward keeps its files.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { probeBrowser, resolveEndpoint } from '../browser/connect.ts';
import {
  defaultUserDataDirs,
  discoverActivePort,
  enableRemoteDebuggingHint,
} from '../browser/devToolsActivePort.ts';
import { findChrome } from '../browser/findChrome.ts';
import { visibleLines } from '../core/displayText.ts';
import { isTabwardError } from '../core/errors.ts';
import { bundledExtensionId } from '../protocol/siteTools.ts';
import { defaultAuditPath, tabwardHome, userRulesPath } from './config.ts';
import { homeProblem } from './home.ts';
import { packageRoot } from './packageRoot.ts';

export function doctorCommand(): Command {
  return new Command('doctor')
    .description(
      "Check what works here: Chrome, its version, remote debugging, tabward's files. Exits 1 when something cannot work.",
    )
    .option('--executable-path <path>', 'the Chrome/Chromium to check')
    .option('--user-data-dir <dir>', 'a profile dir to look for DevToolsActivePort in')
    .option('--browser-url <url>', "your Chrome's debugging URL to check, e.g. http://127.0.0.1:9222")
    .action(async (flags: { executablePath?: string; userDataDir?: string; browserUrl?: string }) => {
      let failed = false;
      const out = (mark: string, line: string) => {
        if (mark === '!!') failed = true;
        // A line may quote what a --browser-url endpoint answered: shown as marks, never run by the terminal.
        process.stdout.write(`${mark} ${visibleLines(line)}\n`);
      };
      out('ok', `Node ${process.version}`);
      checkChrome(flags.executablePath, out);
      if (flags.browserUrl) await checkBrowserUrl(flags.browserUrl, out);
      else await checkRemoteDebugging(flags.userDataDir, out);
      const homeTrouble = homeProblem();
      out(
        homeTrouble ? '!!' : 'ok',
        homeTrouble ?? `tabward home: ${tabwardHome()} (audit log ${defaultAuditPath()})`,
      );
      out(
        existsSync(userRulesPath()) ? 'ok' : '--',
        `user rules: ${userRulesPath()}${existsSync(userRulesPath()) ? '' : ' (none yet; defaults apply)'}`,
      );
      const extension = join(packageRoot, 'dist', 'extension');
      out(
        existsSync(join(extension, 'manifest.json')) ? 'ok' : '--',
        existsSync(join(extension, 'manifest.json'))
          ? `WebMCP extension: ${extension} (id ${bundledExtensionId}; Load unpacked in chrome://extensions)`
          : 'WebMCP extension: not built (node scripts/setup.mjs builds it)',
      );
      if (failed) {
        process.stdout.write('Lines marked !! need fixing before tabward can work here.\n');
        process.exitCode = 1;
      }
    });
}

/** The Chrome the user points at with --browser-url: does it answer, and with what? */
async function checkBrowserUrl(browserUrl: string, out: (mark: string, line: string) => void) {
  try {
    const endpoint = await resolveEndpoint({ browserUrl }, 5_000);
    const probe = await probeBrowser(endpoint, 5_000);
    out('ok', `${browserUrl} answers: ${probe.version}, ${probe.tabs} tab(s)`);
  } catch (error) {
    out('!!', `${browserUrl}: ${isTabwardError(error) ? error.describe() : String(error)}`);
  }
}

function checkChrome(explicit: string | undefined, out: (mark: string, line: string) => void): void {
  try {
    const path = findChrome(explicit);
    const versionText = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
    const major = Number.parseInt(/(\d+)\./.exec(versionText)?.[1] ?? '0', 10);
    out('ok', `browser: ${versionText} at ${path}`);
    if (major < 144)
      out(
        '!!',
        'Chrome < 144: the chrome://inspect remote-debugging toggle is missing; update Chrome to share your logins.',
      );
  } catch (error) {
    out('!!', isTabwardError(error) ? error.describe() : `browser: ${String(error)}`);
  }
}

async function checkRemoteDebugging(
  userDataDir: string | undefined,
  out: (mark: string, line: string) => void,
): Promise<void> {
  const dirs = userDataDir ? [userDataDir] : defaultUserDataDirs();
  let port: ReturnType<typeof discoverActivePort>;
  try {
    port = discoverActivePort(dirs);
  } catch (error) {
    out('!!', isTabwardError(error) ? error.message : String(error));
    return;
  }
  if (!port) {
    out(
      '--',
      `your Chrome: remote debugging is off (no DevToolsActivePort in ${dirs.length} profile dirs). ${enableRemoteDebuggingHint}`,
    );
    out(
      '--',
      'note: since Chrome 136, --remote-debugging-port is ignored on the default profile; use the chrome://inspect toggle.',
    );
    return;
  }
  out('ok', `your Chrome: DevToolsActivePort in ${port.userDataDir} (port ${port.port})`);
  const preloading = profilesPreloading(port.userDataDir);
  if (preloading.length > 0)
    out(
      '--',
      `your Chrome preloads pages (profile ${preloading.join(', ')}): a page in the agent's tabs can have Chrome prefetch an address that no hook of tabward's can hold (tabward tells it and stops the tab). For a stricter guard, turn off Settings › Performance › Preload pages.`,
    );
  try {
    const probe = await probeBrowser(port.wsEndpoint, 5_000);
    out('ok', `your Chrome answers: ${probe.version}, ${probe.tabs} tab(s)`);
  } catch {
    out(
      '!!',
      'your Chrome did not answer within 5 s (stale file, or it is waiting for you to click "Allow").',
    );
  }
}

/**
 * The profiles of a Chrome user data dir that preload pages (speculation rules, prefetch): Chrome's "Preload pages"
 * setting is on unless `net.network_prediction_options` is 2 (off; measured: then no speculative load goes).
 */
export function profilesPreloading(userDataDir: string): string[] {
  let profiles: string[];
  try {
    profiles = readdirSync(userDataDir).filter((name) => name === 'Default' || /^Profile \d+$/.test(name));
  } catch {
    return [];
  }
  return profiles.filter((profile) => {
    try {
      const preferences = JSON.parse(readFileSync(join(userDataDir, profile, 'Preferences'), 'utf8'));
      return preferences?.net?.network_prediction_options !== 2;
    } catch {
      return false; // no readable preferences: nothing to say
    }
  });
}
