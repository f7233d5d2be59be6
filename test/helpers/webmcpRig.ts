// Everything the WebMCP bridge tests need, real end to end: `bin/tabward relay` as a subprocess on a temporary
// SQLite file, the pairing code and agent token made with the real CLI, Chromium with the built extension
// loaded, the extension paired and the shop shared by clicking in its popup page, and the real MCP client over
// Streamable HTTP with the agent's bearer token.

import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, type Hash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
// @ts-expect-error: a plain ES module without types
import { buildExtension } from '../../scripts/buildExtension.mjs';
import { findChrome } from '../../src/browser/findChrome.ts';
import { bundledExtensionId } from '../../src/protocol/siteTools.ts';
import { testChromeArgs } from './fixtureServer.ts';
import { binPath } from './mcpClient.ts';
import { runCli } from './runCli.ts';

export interface RelayProcess {
  readonly url: string;
  readonly port: number;
  readonly stderr: () => string;
  /** SIGTERM, as a user stops it: it answers the calls in flight first. */
  stop(): Promise<void>;
  /** SIGKILL: a crash, nothing answered, sockets cut. */
  crash(): Promise<void>;
}

export async function startRelayProcess(
  db: string,
  extra: readonly string[] = [],
  port = 0,
): Promise<RelayProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    // The audit log goes next to the database, never to the user's ~/.tabward.
    [
      binPath,
      'relay',
      '--port',
      String(port),
      '--db',
      db,
      '--audit-log',
      join(dirname(db), 'audit.jsonl'),
      ...extra,
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay did not start: ${stderr}`)), 20_000);
    child.stderr?.on('data', (chunk) => {
      stderr += String(chunk);
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`relay exited ${code}: ${stderr}`)));
  });
  return {
    url,
    port: Number(new URL(url).port),
    stderr: () => stderr,
    stop: () => ended('SIGTERM'),
    crash: () => ended('SIGKILL'),
  };
  function ended(signal: NodeJS.Signals): Promise<void> {
    return new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }
}

let extensionDir: Promise<string> | undefined;
/**
 * The extension, built once per change of its sources (extension/ and the src/protocol/ it bundles) and shared
 * by every test file of a run, and of later runs: a folder in the temp dir named by the sources' hash, written
 * under a temporary name and renamed into place, so files building at once never see a half-built one.
 */
export function builtExtension(): Promise<string> {
  extensionDir ??= (async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const hash = createHash('sha256');
    for (const dir of ['extension', 'src/protocol', 'scripts/buildExtension.mjs'])
      hashTree(join(root, dir), hash);
    const dir = join(tmpdir(), `tabward-ext-${hash.digest('hex').slice(0, 16)}`);
    if (existsSync(join(dir, 'manifest.json'))) return dir;
    const building = (await buildExtension(mkdtempSync(join(tmpdir(), 'tabward-ext-build-')))) as string;
    try {
      renameSync(building, dir);
    } catch {
      // Another file renamed its build into place first: the same sources, the same bundle.
      rmSync(building, { recursive: true, force: true });
    }
    return dir;
  })();
  return extensionDir;
}

function hashTree(path: string, hash: Hash): void {
  if (!existsSync(path)) return;
  if (statSync(path).isFile()) {
    hash.update(path).update(readFileSync(path));
    return;
  }
  for (const entry of readdirSync(path).sort()) hashTree(join(path, entry), hash);
}

/** A Chromium with the extension, on a profile of its own that goes when the context closes. */
export async function launchWithExtension(options: { webmcp: boolean }): Promise<BrowserContext> {
  const dir = await builtExtension();
  const profile = mkdtempSync(join(tmpdir(), 'tabward-test-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: findChrome(),
    headless: true,
    // Playwright turns off extensions and the back/forward cache by default; both are under test here.
    ignoreDefaultArgs: ['--disable-extensions', '--disable-back-forward-cache'],
    args: [
      '--no-sandbox',
      ...(options.webmcp ? ['--enable-features=WebMCP'] : []),
      `--load-extension=${dir}`,
      `--disable-extensions-except=${dir}`,
      ...testChromeArgs,
    ],
  });
  // Chromium may still be writing into it as the context reports closed: retried, and never an error of the test.
  context.on('close', () => {
    void rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(
      () => undefined,
    );
  });
  return context;
}

export const popupUrl = `chrome-extension://${bundledExtensionId}/popup.html`;

export async function tabIdOf(popup: Page, url: string): Promise<number> {
  // Runs in the extension page, where `chrome` exists (the Node tsconfig has no chrome types: source text).
  const id = await popup.evaluate(
    `chrome.tabs.query({}).then((tabs) => tabs.find((t) => t.url === ${JSON.stringify(url)})?.id ?? -1)`,
  );
  if (typeof id !== 'number' || id < 0) throw new Error(`no tab at ${url}`);
  return id;
}

/** Opens the popup as a page for the given tab (the way a test can click it). */
export async function openPopup(context: BrowserContext, tabUrl: string): Promise<Page> {
  const popup = await context.newPage();
  await popup.goto(popupUrl);
  const tabId = await tabIdOf(popup, tabUrl);
  await popup.goto(`${popupUrl}?tab=${tabId}`);
  return popup;
}

export async function pairInPopup(popup: Page, relayUrl: string, code: string): Promise<void> {
  await popup.fill('#relay-url', relayUrl);
  await popup.fill('#pair-code', code);
  await popup.click('#pair');
  await popup.locator('#pairing').waitFor({ state: 'hidden', timeout: 10_000 });
}

export async function shareInPopup(popup: Page): Promise<void> {
  await popup.click('#share');
  await popup.locator('#link.connected').waitFor({ timeout: 15_000 });
}

export async function pairingCode(db: string, workspace: string): Promise<string> {
  const out = await runCli(['relay', 'pair', '--workspace', workspace, '--db', db], {});
  const code = /: ([A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4})/.exec(out.stdout)?.[1];
  if (!code) throw new Error(`no pairing code in: ${out.stdout}${out.stderr}`);
  return code;
}

export async function agentToken(db: string, workspace: string, name = 'ci-agent'): Promise<string> {
  const out = await runCli(
    // Tests make tokens for workspaces before (or without) pairing a browser with them.
    ['relay', 'token', 'create', '--workspace', workspace, '--name', name, '--db', db, '--new-workspace'],
    {},
  );
  const token = /^(twa_\S+)$/m.exec(out.stdout)?.[1];
  if (!token) throw new Error(`no token in: ${out.stdout}${out.stderr}`);
  return token;
}

export async function connectAgent(relayUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${relayUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

export interface ToolText {
  readonly text: string;
  readonly isError: boolean;
}

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolText> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text?: string }[];
  return { text: content.map((c) => c.text ?? '').join('\n'), isError: result.isError === true };
}

/** Polls listSiteTools until `expect` holds (the extension reports asynchronously). */
export async function waitForTools(
  client: Client,
  expect: (text: string) => boolean,
  ms = 15_000,
): Promise<string> {
  const end = Date.now() + ms;
  let last = '';
  while (Date.now() < end) {
    last = (await callTool(client, 'listSiteTools')).text;
    if (expect(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`listSiteTools never matched; last: ${last}`);
}

export interface Rig {
  readonly home: string;
  readonly db: string;
  relay: RelayProcess;
  readonly context: BrowserContext;
  readonly agent: Client;
  readonly token: string;
  close(): Promise<void>;
}

/** Relay + paired browser + agent; the caller opens and shares its sites. */
export async function startRig(options: { webmcp: boolean; relayArgs?: readonly string[] }): Promise<Rig> {
  const home = mkdtempSync(join(tmpdir(), 'tabward-relay-'));
  const db = join(home, 'relay.db');
  const relay = await startRelayProcess(db, options.relayArgs);
  const token = await agentToken(db, 'team');
  const context = await launchWithExtension({ webmcp: options.webmcp });
  const agent = await connectAgent(relay.url, token);
  const rig: Rig = {
    home,
    db,
    relay,
    context,
    agent,
    token,
    close: async () => {
      await agent.close().catch(() => undefined);
      await context.close().catch(() => undefined);
      await rig.relay.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
  return rig;
}

/** Opens `url`, pairs the extension (first time) and shares the site from the popup. */
export async function openAndShare(
  rig: Rig,
  url: string,
  pair: boolean,
): Promise<{ page: Page; popup: Page }> {
  const page = await rig.context.newPage();
  await page.goto(url);
  const popup = await openPopup(rig.context, url);
  if (pair) await pairInPopup(popup, rig.relay.url, await pairingCode(rig.db, 'team'));
  await shareInPopup(popup);
  return { page, popup };
}
