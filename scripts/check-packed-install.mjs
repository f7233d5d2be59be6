#!/usr/bin/env node
// Checks the package as a user gets it: packs a copy of the checkout (its prepack builds the bundle), installs
// the tarball into an empty folder (from the npm cache where it can), and then uses the installed `tabward`:
// --version, `mcp` driven by the MCP SDK client up to tools/list, and `relay` without its optional SQLite
// addon. Prints what it measured; exits non-zero on the first thing that is wrong. CI runs it (npm test runs
// test/e2e/packedInstall.test.ts, which runs this).

import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'tabward-pack-'));
const say = (line) => process.stdout.write(`packed-install: ${line}\n`);
const fail = (line) => {
  process.stderr.write(`packed-install: FAIL ${line}\n`);
  process.exitCode = 1;
};
const seconds = (start) => ((performance.now() - start) / 1000).toFixed(2);
const npmEnv = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

/** A copy of what `npm pack` reads and what prepack builds from; node_modules linked, not copied. */
function stageCheckout() {
  const stage = join(work, 'checkout');
  mkdirSync(join(stage, 'scripts'), { recursive: true });
  for (const entry of [
    'package.json',
    'README.md',
    'LICENSE',
    'tsconfig.json',
    'bin',
    'schema',
    'examples',
    'src',
  ])
    if (existsSync(join(root, entry))) cpSync(join(root, entry), join(stage, entry), { recursive: true });
  cpSync(join(root, 'extension'), join(stage, 'extension'), {
    recursive: true,
    filter: (path) => !path.includes('node_modules'),
  });
  for (const script of ['build.mjs', 'buildExtension.mjs', 'licences.mjs'])
    cpSync(join(root, 'scripts', script), join(stage, 'scripts', script));
  symlinkSync(join(root, 'node_modules'), join(stage, 'node_modules'), 'dir');
  return stage;
}

function pack(stage) {
  const start = performance.now();
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: stage,
    env: npmEnv,
    encoding: 'utf8',
  });
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  say(
    `packed ${info.filename}: ${info.entryCount} files, ${(info.size / 1e6).toFixed(2)} MB packed, ${(info.unpackedSize / 1e6).toFixed(2)} MB unpacked (${seconds(start)} s with the build)`,
  );
  const paths = info.files.map((file) => file.path);
  const unwanted = paths.filter((path) => /^(src|test|scripts)\/|\.ts$|\.map$/.test(path));
  if (unwanted.length) fail(`the package ships sources or maps: ${unwanted.slice(0, 5).join(', ')}`);
  for (const needed of [
    'bin/tabward',
    'dist/tabward.js',
    'dist/THIRD_PARTY_LICENSES.txt',
    'dist/extension/manifest.json',
    'schema/recipe.v1.json',
    'README.md',
  ])
    if (!paths.includes(needed)) fail(`the package lacks ${needed}`);
  return join(work, info.filename);
}

function install(tarball) {
  const project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    '{"name":"tabward-install-check","version":"1.0.0","private":true}\n',
  );
  const start = performance.now();
  const result = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    cwd: project,
    env: npmEnv,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`npm install failed:\n${result.stderr}`);
  const modules = join(project, 'node_modules');
  const installed = readdirSync(modules).filter((name) => !name.startsWith('.'));
  say(`installed in ${seconds(start)} s: ${installed.join(', ')}`);
  for (const heavy of ['tsx', 'esbuild', 'better-sqlite3', 'typescript'])
    if (installed.includes(heavy)) fail(`the install pulled ${heavy}`);
  return project;
}

function versionCheck(bin, expected) {
  const start = performance.now();
  const printed = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  say(`tabward --version: ${printed} (${seconds(start)} s)`);
  if (printed !== expected) fail(`--version printed ${printed}, expected ${expected}`);
}

async function toolsList(bin, home) {
  const start = performance.now();
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp', '--mode', 'isolated', '--approval', 'deny'],
    env: { ...process.env, TABWARD_HOME: home },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'packed-install-check', version: '1' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  say(`tabward mcp: ${tools.length} tools listed ${seconds(start)} s after start`);
  await client.close();
  for (const name of ['navigate_page', 'take_snapshot', 'browser_status'])
    if (!tools.some((tool) => tool.name === name)) fail(`tools/list lacks ${name}`);
}

function relayWithoutSqlite(bin, home) {
  const result = spawnSync(bin, ['relay', 'token', 'list'], {
    encoding: 'utf8',
    env: { ...process.env, TABWARD_HOME: home },
  });
  const lines = result.stderr.trim().split('\n');
  say(`tabward relay without better-sqlite3: exit ${result.status}, "${lines[0]?.slice(0, 100)}…"`);
  if (result.status === 0 || lines.length !== 1 || !result.stderr.includes('npm install -g better-sqlite3'))
    fail(`relay without better-sqlite3 should say how to install it in one line; printed:\n${result.stderr}`);
  // Printing the extension's folder needs no SQLite.
  const folder = spawnSync(bin, ['relay', 'extension'], {
    encoding: 'utf8',
    env: { ...process.env, TABWARD_HOME: home },
  });
  say(`tabward relay extension without better-sqlite3: exit ${folder.status}`);
  if (folder.status !== 0 || !folder.stdout.trim().endsWith(join('dist', 'extension')))
    fail(
      `relay extension should print the extension folder without better-sqlite3; printed:\n${folder.stdout}${folder.stderr}`,
    );
}

try {
  const { version } = JSON.parse(
    execFileSync('node', ['-p', 'JSON.stringify(require("./package.json"))'], {
      cwd: root,
      encoding: 'utf8',
    }),
  );
  const tarball = pack(stageCheckout());
  const project = install(tarball);
  const bin = join(project, 'node_modules', '.bin', 'tabward');
  const home = join(work, 'home');
  versionCheck(bin, version);
  await toolsList(bin, home);
  relayWithoutSqlite(bin, home);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
} finally {
  rmSync(work, { recursive: true, force: true });
}
say(process.exitCode ? 'failed' : 'ok');
