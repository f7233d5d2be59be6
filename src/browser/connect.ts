// Opening a CDP connection: to a Chromium we launched, to the user's running Chrome, or to a remote browser
// service. Chrome >= 144 asks the user to allow each new debugging connection, so attaching waits, visibly and
// for a bounded time.

import { createRequire } from 'node:module';
import type { Browser, BrowserContext } from 'playwright-core';
import { swallow, swallowed } from '../core/debug.ts';
import { TabwardError } from '../core/errors.ts';
import { discoverActivePort, enableRemoteDebuggingHint, readActivePort } from './devToolsActivePort.ts';
import { refEngine, refEngineSource } from './snapshot/refLocators.ts';

export interface AttachTarget {
  readonly userDataDir?: string;
  readonly browserUrl?: string;
  readonly wsEndpoint?: string;
  /** What speaks at wsEndpoint: CDP (the default), or Playwright's own protocol (launchServer / run-server). */
  readonly protocol?: 'cdp' | 'playwright';
  /** Headers sent with the WebSocket handshake (a bearer token a browser service wants). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Resolves where the user's Chrome listens, from explicit options first, then DevToolsActivePort files. */
export async function resolveEndpoint(target: AttachTarget, timeoutMs: number): Promise<string> {
  if (target.wsEndpoint) return target.wsEndpoint;
  if (target.browserUrl) return endpointFromBrowserUrl(target.browserUrl, timeoutMs);
  const port = target.userDataDir ? readActivePort(target.userDataDir) : discoverActivePort();
  if (port) return port.wsEndpoint;
  const where = target.userDataDir ? `in ${target.userDataDir}` : 'in any default Chrome or Chromium profile';
  throw new TabwardError(
    'attach_failed',
    `No DevToolsActivePort file found ${where}.`,
    enableRemoteDebuggingHint,
  );
}

async function endpointFromBrowserUrl(browserUrl: string, timeoutMs: number): Promise<string> {
  let url: URL;
  try {
    url = new URL('/json/version', browserUrl);
  } catch {
    throw new TabwardError(
      'bad_input',
      `--browser-url ${browserUrl} is not a URL.`,
      'Example: http://127.0.0.1:9222',
    );
  }
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await response.json()) as { webSocketDebuggerUrl?: unknown };
    if (typeof body.webSocketDebuggerUrl === 'string') return body.webSocketDebuggerUrl;
  } catch (error) {
    // fall through to the error below
    swallowed('browser', 'connect.endpointFromBrowserUrl: fall through to the error below', error);
  }
  throw new TabwardError('attach_failed', `No Chrome answered at ${browserUrl}.`, enableRemoteDebuggingHint);
}

/**
 * playwright-core takes most of a second to load; loading it on first connection lets an MCP client see the
 * tool list before any browser work starts. Loaded with require, not import(): an ESM import of a CommonJS package
 * makes Node scan its whole bundle for export names first (cjs-module-lexer, 90-140 ms of CPU here).
 */
export async function loadChromium(): Promise<typeof import('playwright-core').chromium> {
  return playwright().chromium;
}

const playwright = () => requireFromHere('playwright-core') as typeof import('playwright-core');

/**
 * Gives a browser just connected the selector engine its refs resolve with (snapshot/refLocators.ts), before anything runs
 * in its pages: Playwright builds the engines into each document's script once. Registered once a process (a
 * context made later, by newContext, is given every engine registered); a connected browser's own context exists
 * before that and Playwright hands it only the engines registered after it, so a browser connected later gives its
 * contexts the engine the way Playwright's register does for the contexts it knows (their channel's
 * registerSelectorEngine, the one call here outside Playwright's public API; a name registered per connection
 * instead would add an engine to every document's script for every connection a long-running serve ever made).
 */
export async function withRefEngine(browser: Browser): Promise<Browser> {
  const first = !engineRegistered;
  engineRegistered ??= playwright()
    .selectors.register(refEngine, refEngineSource, { contentScript: true })
    .catch((error: unknown) => {
      // Tried again by the next connection, not failed for the life of the process.
      engineRegistered = undefined;
      throw error;
    });
  await engineRegistered;
  if (!first) await Promise.all(browser.contexts().map((context) => giveEngine(context)));
  return browser;
}

let engineRegistered: Promise<void> | undefined;

async function giveEngine(context: BrowserContext): Promise<void> {
  const channel = (context as unknown as { _channel?: { registerSelectorEngine?: unknown } })._channel;
  if (typeof channel?.registerSelectorEngine !== 'function')
    throw new TabwardError(
      'internal',
      'This Playwright version cannot be given the selector engine tabward resolves refs with.',
      'Install the playwright-core version tabward pins (package.json).',
    );
  await (channel.registerSelectorEngine as (params: unknown) => Promise<void>)
    .call(channel, { selectorEngine: { name: refEngine, source: refEngineSource, contentScript: true } })
    .catch((error: unknown) => {
      // A browser connected while the first registration ran was given it then.
      if (!/already registered/.test(String(error))) throw error;
    });
}

const requireFromHere = createRequire(import.meta.url);

/** Starts loading playwright-core in the background, once the caller has answered what it had to answer fast. */
export function preloadBrowserLibrary(): void {
  loadChromium().catch(swallow('browser', 'connect.loadChromium: loadChromium()'));
}

export async function connectCdp(
  endpoint: string,
  timeoutMs: number,
  notify: (message: string) => void,
  /** Where Playwright may write for this browser; by default a playwright-artifacts-* folder in the temp dir. */
  artifactsDir?: string,
  /** Sent with the WebSocket handshake. */
  headers?: Readonly<Record<string, string>>,
): Promise<Browser> {
  const slowNotice = setTimeout(
    () => notify('Waiting for Chrome: if it asks whether to allow remote debugging, click "Allow".'),
    1500,
  );
  try {
    const browser = await (await loadChromium()).connectOverCDP(endpoint, {
      timeout: timeoutMs,
      // The user's browser keeps its own settings: without this, Playwright sets its download behaviour (the
      // user's downloads renamed into a temporary folder while attached) and emulates focus in the user's tabs.
      noDefaults: true,
      ...(artifactsDir ? { artifactsDir } : {}),
      ...(headers ? { headers: { ...headers } } : {}),
    });
    return await withRefEngine(browser);
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new TabwardError(
      'attach_failed',
      `Could not attach to the browser at ${endpoint} within ${timeoutMs} ms (${message}).`,
      enableRemoteDebuggingHint,
    );
  } finally {
    clearTimeout(slowNotice);
  }
}

/**
 * Connects to a Playwright server (`chromium.launchServer()`, `playwright run-server`): Playwright's own protocol,
 * not CDP. The browser it gives is driven as a CDP-connected one is; CDP itself is reached through it
 * (newCDPSession, newBrowserCDPSession), which the browser-wide gate needs.
 */
export async function connectPlaywright(
  endpoint: string,
  timeoutMs: number,
  headers?: Readonly<Record<string, string>>,
): Promise<Browser> {
  try {
    const browser = await (await loadChromium()).connect(endpoint, {
      timeout: timeoutMs,
      ...(headers ? { headers: { ...headers } } : {}),
    });
    return await withRefEngine(browser);
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new TabwardError(
      'attach_failed',
      `Could not connect to the Playwright server at ${endpoint} within ${timeoutMs} ms (${message}).`,
      'Check that the server runs (chromium.launchServer() or `playwright run-server`) and that its version matches the playwright-core tabward pins.',
    );
  }
}

/** Connects, reads the version and tab count, and disconnects, leaving the browser as it was. */
export async function probeBrowser(
  endpoint: string,
  timeoutMs: number,
): Promise<{ version: string; tabs: number }> {
  const browser = await (await loadChromium()).connectOverCDP(endpoint, { timeout: timeoutMs });
  try {
    return { version: browser.version(), tabs: browser.contexts()[0]?.pages().length ?? 0 };
  } finally {
    await browser.close();
  }
}
