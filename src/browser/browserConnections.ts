// How the browser session (browser/session.ts) gets a browser: one launched isolated behind tabward's egress proxy,
// the user's Chrome over CDP, or a remote browser service; the guards a connection gets before any of its tabs is
// used; and closing the agent's tabs in the user's Chrome. The session decides which browser and when; these
// open, guard and close one connection.

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { TabwardError } from '../core/errors.ts';
import type { BrowserMode } from '../core/kinds.ts';
import type { ClientTabs } from './clientTabs.ts';
import { type AttachTarget, connectCdp, connectPlaywright, resolveEndpoint } from './connect.ts';
import { translateBrowserError, withDeadline } from './deadline.ts';
import type { DownloadLimits } from './downloads.ts';
import { type EgressPolicy, startEgressProxy } from './egressProxy.ts';
import { findChrome } from './findChrome.ts';
import { type HostCertificates, makeHostCertificates } from './hostCertificates.ts';
import { type IsolatedBrowser, launchIsolated } from './launchIsolated.ts';
import type { NetworkGuard } from './networkGuard.ts';
import type { TrackedPage } from './pages.ts';
import { configuredProxy, hostMapperFrom, verifiesCertificates } from './proxySettings.ts';
import type { SharedProfileTaint } from './sharedProfileTaint.ts';

export interface BrowserConfig {
  readonly mode: BrowserMode;
  readonly executablePath?: string;
  readonly headless: boolean;
  readonly chromeArgs: readonly string[];
  readonly attach: AttachTarget;
  readonly attachTimeoutMs: number;
  readonly notify: (message: string) => void;
  /** The network backstop over the agent's pages; without it requests are not policed (recipes, tests). */
  readonly network?: NetworkGuard;
  /** Record what each tab logs and requests, for the devtools tools. */
  readonly devtools?: boolean;
  /** Keep what the agent's actions download (browser/downloads.ts); without it downloads are not kept. */
  readonly downloads?: DownloadLimits;
  /**
   * Off only to measure what the choke point costs (bench/chokePointOverhead.ts): with a network backstop, the
   * browsers tabward starts always send through the egress proxy. No command-line option reaches it.
   */
  readonly egressProxy?: false;
  /**
   * Where an isolated session gets its browser when several clients share one (browser/sharedIsolatedBrowser.ts):
   * a context of its own in it, rather than a browser of its own.
   */
  readonly sharedBrowser?: ContextSource;
  /** The other clients of this process that may attach to the same user's Chrome: their tabs are not this one's. */
  readonly clientTabs?: ClientTabs;
  /** Their one taint there (one profile: what one client's page reads, another's page of the site can be handed). */
  readonly profileTaint?: SharedProfileTaint;
  /** Every MCP client of this process uses this one session (`--share-context`): browser_status says so. */
  readonly sharedContext?: boolean;
}

/** Hands out a context of one client's own, its traffic judged by that client's guard. */
export interface ContextSource {
  openContext(network: NetworkGuard): Promise<Connection>;
  /** The shared browser's process and profile, once it runs. */
  status(): { pid?: number; profile?: string };
}

export interface Connection {
  readonly mode: BrowserMode;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly endpoint: string;
  readonly launched?: IsolatedBrowser;
  /**
   * A context of its own in a browser other clients share (browser/sharedIsolatedBrowser.ts): closing this
   * connection closes that context and its egress proxy, never the browser.
   */
  readonly release?: () => Promise<void>;
  /** In a shared browser: its process, and how many clients have a context in it now. */
  readonly sharedBy?: { readonly pid: number; readonly profile: string; clients(): number };
}

/** Browsers tabward launched that are closing (the unused warm one, a crashed one's leftovers): awaited at exit. */
export class LaunchedClosings {
  private readonly pending = new Set<Promise<void>>();

  /** Closes a browser tabward launched (its process group and profile too); never fails. */
  close(launched: IsolatedBrowser): Promise<void> {
    const closing: Promise<void> = launched
      .close()
      .catch(swallow('browser', 'session: closing a browser tabward launched'))
      .finally(() => this.pending.delete(closing));
    this.pending.add(closing);
    return closing;
  }

  /** Once every close begun so far has ended. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}

/** A start or switch refused while tabward shuts down. */
export function shuttingDown(): TabwardError {
  return new TabwardError('browser_unavailable', 'tabward is shutting down; its browser is closing.');
}

/** What openIsolated tells the session, and asks of it. */
export interface IsolatedHooks {
  /** Aborted when tabward shuts down: a browser still starting is stopped. */
  readonly signal: AbortSignal;
  /** Whether this is the first time a proxy of the environment is to be mentioned (once per session). */
  readonly firstProxyNotice: () => boolean;
  /** The browser launched, before it is returned: the session closes it if it shuts down meanwhile. */
  readonly onLaunched: (launched: IsolatedBrowser) => void;
  /** What judges the traffic of the browser's own profile, when not the session's network guard. */
  readonly egressPolicy?: EgressPolicy;
  /** The key the browser trusts for its proxies' TLS ends, when several proxies serve one browser. */
  readonly certificates?: HostCertificates;
}

export async function openIsolated(config: BrowserConfig, hooks: IsolatedHooks): Promise<Connection> {
  const { network } = config;
  // Before the gate starts: a browser that cannot be found must not leave its server holding the process open.
  const executablePath = findChrome(config.executablePath);
  // Everything the browser sends goes through the choke point, where the backstop judges it
  // (browser/egressProxy.ts); a proxy of the user's would take its place, so it is refused, not guessed at.
  const proxy = configuredProxy(config.chromeArgs, {});
  if (network && proxy)
    throw new TabwardError(
      'bad_input',
      `The browser switch ${proxy} would send the browser's traffic past tabward's egress proxy, where every request is judged.`,
      'Drop the --chrome-arg proxy switch; tabward starts its browser with its own proxy.',
    );
  const switchedOff = requiredFeatureDisabled(config.chromeArgs);
  if (switchedOff)
    throw new TabwardError(
      'bad_input',
      `The browser switch --disable-features=${switchedOff} would switch off a protection of tabward's own browsers: with it, a frame of another site opens dialogs, and one whose frame is gone crashed the browser under every client (docs/security.md).`,
      `Drop ${switchedOff} from the --chrome-arg --disable-features list.`,
    );
  const direct = configuredProxy([], process.env);
  if (network && direct && hooks.firstProxyNotice()) {
    config.notify(
      `tabward: ${direct} is set, but the browser's traffic goes through tabward's egress proxy, which connects directly.`,
    );
  }
  const egress =
    network && config.egressProxy !== false
      ? await startGuardedEgress(
          config,
          network,
          hooks.certificates ?? makeHostCertificates(),
          hooks.egressPolicy,
        )
      : undefined;
  // Over a pipe: nothing to attach to, nobody asked to allow the connection.
  const launched = await launchIsolated({
    executablePath,
    headless: config.headless,
    extraArgs: [...withOwnBrowserFeatures(config.chromeArgs), ...(egress?.chromeArgs ?? [])],
    signal: hooks.signal,
  }).catch((error: unknown) => {
    egress?.close();
    throw error;
  });
  // The proxy outlives the browser's last request: closed once the browser is gone, never before.
  if (egress) launched.browser.on('disconnected', () => egress.close());
  // Its contexts send through that proxy; the shared browser's proxy judges no client's traffic (each client's
  // context has a proxy of its own, sharedIsolatedBrowser.ts).
  if (egress && network && hooks.egressPolicy === undefined) network.behindEgressProxy(launched.browser);
  hooks.onLaunched(launched);
  const { browser, context } = launched;
  return { mode: 'isolated', browser, context, endpoint: 'a pipe', launched };
}

/** An egress proxy tabward's browsers send through, with what closes it. */
export interface GuardedEgress {
  readonly port: number;
  readonly chromeArgs: readonly string[];
  /** Stops the proxy, its cutting, and its port's protection. */
  close(): void;
}

/**
 * Starts an egress proxy judging by `policy` (the network guard itself unless said), its port one of tabward's
 * own (the agent's browser never reaches it as a site); while it runs, a grown taint cuts its connections to the
 * hosts that taint now covers.
 */
export async function startGuardedEgress(
  config: BrowserConfig,
  network: NetworkGuard,
  certificates: HostCertificates,
  policy: EgressPolicy = network,
): Promise<GuardedEgress> {
  const proxy = await startEgressProxy({
    policy,
    certificates,
    mapHost: hostMapperFrom(config.chromeArgs),
    verifyUpstream: verifiesCertificates(config.chromeArgs),
  });
  network.protectedPorts.add(proxy.port);
  const stopCutting = network.addCutter((crosses) => proxy.cut(crosses));
  let closed = false;
  return {
    port: proxy.port,
    chromeArgs: proxy.chromeArgs,
    close: () => {
      if (closed) return;
      closed = true;
      stopCutting();
      proxy.close();
      network.protectedPorts.delete(proxy.port);
    },
  };
}

export async function openShared(config: BrowserConfig, target: AttachTarget): Promise<Connection> {
  const endpoint = await resolveEndpoint(target, config.attachTimeoutMs);
  const browser = await connectCdp(endpoint, config.attachTimeoutMs, config.notify);
  const context = browser.contexts()[0];
  if (!context) {
    await browser.close().catch(swallow('browser', 'browserConnections.openShared: browser.close()'));
    throw new TabwardError('attach_failed', `The browser at ${endpoint} has no default profile to share.`);
  }
  return { mode: 'shared', browser, context, endpoint };
}

export async function openRemote(config: BrowserConfig): Promise<Connection> {
  const endpoint = config.attach.wsEndpoint ?? config.attach.browserUrl;
  if (!endpoint) {
    throw new TabwardError(
      'bad_input',
      'Remote mode needs --ws-endpoint (or --browser-url) of the browser service.',
    );
  }
  const { attach, attachTimeoutMs } = config;
  const resolved = await resolveEndpoint({ ...attach }, attachTimeoutMs);
  const browser =
    attach.protocol === 'playwright'
      ? await connectPlaywright(resolved, attachTimeoutMs, attach.headers)
      : await connectCdp(resolved, attachTimeoutMs, config.notify, undefined, attach.headers);
  // A fresh context: the service's other sessions are not the agent's to see.
  const context = await browser.newContext();
  return { mode: 'remote', browser, context, endpoint: resolved };
}

/**
 * Guards a connection before any of its tabs is used. A browser with no egress proxy of tabward's is paused
 * browser-wide, so that what an agent frame sends after its own CDP session ended is still judged
 * (browser/browserFetchGate.ts); it fails closed. Outside the user's Chrome the whole context is watched.
 */
export async function guardConnection(
  network: NetworkGuard | undefined,
  connection: Connection,
): Promise<void> {
  if (network && connection.mode !== 'isolated')
    await withDeadline(network.guardBrowser(connection.browser), 30_000, 'Guarding the browser').catch(
      async (error: unknown) => {
        await connection.browser
          .close()
          .catch(swallow('browser', 'browserConnections.guardConnection: connection.browser.close()'));
        throw new TabwardError(
          'attach_failed',
          `tabward could not hold the requests of the browser at ${connection.endpoint} until judged (${translateBrowserError(error, 'Guarding the browser').message}), so it does not use it.`,
          'Use an isolated browser, or an endpoint that allows a browser-wide CDP session.',
        );
      },
    );
  // Before any tab is used: no request of the agent's pages may leave unjudged.
  if (network && connection.mode !== 'shared')
    await withDeadline(network.watchContext(connection.context), 30_000, 'Guarding the browser');
}

/**
 * The blank tab a headless browser of tabward's own started with (its renderer started while playwright-core
 * loaded) becomes the agent's first tab, handed out as warmUp's tab is: the first call uses it, or new_page does.
 * A headed browser's first window stays as it was. A tab the backstop could not take under watch is closed, not used.
 */
export async function usableFirstTab(
  connection: Connection,
  headless: boolean,
  network: NetworkGuard | undefined,
): Promise<Page | undefined> {
  const first = connection.launched?.firstTab;
  if (!first || !headless || first.isClosed()) return undefined;
  const guarded = network
    ? await withDeadline(network.ready(first), 30_000, 'Guarding the tab').then(
        () => true,
        () => false,
      )
    : true;
  if (guarded) return first;
  await withDeadline(first.close(), 5_000, 'Closing a tab').catch(
    swallow(
      'browser',
      'browserConnections.usableFirstTab: withDeadline(first.close(), 5_000, "Closing a tab")',
    ),
  );
  return undefined;
}

/**
 * Leaves a browser tabward did not launch (the user's Chrome, a remote service): the agent's tabs do not outlive
 * tabward's watch: left open in the user's Chrome, their pages could send what they saw with nobody judging. They
 * close while the browser-wide gate still judges what their frames send as they tear down; the user's own tabs
 * stay as they are.
 */
export async function closeAttached(
  connection: Connection,
  agentTabs: readonly TrackedPage[],
  network: NetworkGuard | undefined,
): Promise<void> {
  if (connection.mode === 'shared') await closeTabs(agentTabs);
  if (connection.mode === 'remote')
    await connection.context
      .close()
      .catch(swallow('browser', 'browserConnections.closeAttached: connection.context.close()'));
  await network?.releaseBrowser(connection.browser);
  // For a CDP connection, Browser.close() disconnects and leaves the user's browser and tabs open.
  await connection.browser
    .close()
    .catch(swallow('browser', 'browserConnections.closeAttached: connection.browser.close()'));
}

/**
 * Closes tabs of the user's Chrome that are the agent's, bounded. Each is silenced first, as close_page does (its
 * frames' scripts off, its renderer stopped), so that no unload handler runs to send anything as it goes: a request
 * sent then could be answered by a redirect after tabward has left.
 */
async function closeTabs(tabs: readonly TrackedPage[]): Promise<void> {
  await Promise.all(
    tabs.map(async (tracked) => {
      if (!tracked.dialog) await tracked.silence(4_000);
      await withDeadline(tracked.page.close(), 5_000, 'Closing an agent tab').catch(
        swallow(
          'browser',
          'browserConnections.closeTabs: withDeadline(tracked.page.close(), 5_000, "Closing an agent tab")',
        ),
      );
    }),
  );
}

/**
 * Chromium features the browsers tabward starts run without, merged into any --disable-features given (Chromium
 * reads only the last one):
 * - IsolateSandboxedIframes: a sandboxed iframe (srcdoc, allow-scripts) gets a process of its own in Chromium 156,
 *   whose first request neither the context's route nor the tab's CDP interception sees in time; without it such
 *   frames stay in their page's process, where every request is paused.
 * - WebUIOmniboxPopup, WebUIOmniboxAimPopup: Chromium 156 loads two WebUI renderers for the address bar's popup
 *   with the first window, headless too; they compete with the first tab for the CPU (its start and first load
 *   about 0.1 s slower here, bench/results.md). The address bar falls back to its native popup.
 * - AutofillServerCommunication, NetworkTimeServiceQuerying: Chromium asks content-autofill.googleapis.com for
 *   predictions on every page with a form (twice, the form's signature in the URL) and clients2.google.com for the
 *   time. An agent's browser has no use for either: before a sensitive read they sent Google the signatures of the
 *   forms on the pages the agent read, and after one each was a refused request in the session's audit that no page
 *   made (ownBrowserQuiet).
 * - WebRtcHideLocalIpsWithMdns: with it, a page's remote ICE candidate named `<anything>.local` is resolved by
 *   multicast DNS, past the host resolver's rules: a query (for the mapped name) left the machine at the moment
 *   the page chose, a signal to anyone on the network (an attack review). The browser gathers no host candidate
 *   to hide anyway: WebRTC may use only proxied TCP there (egressProxy.ts).
 * And one it runs with, merged into any --enable-features given the same way:
 * - SuppressDifferentOriginSubframeJSDialogs: a frame of another origin opens no alert, confirm or prompt (measured
 *   on 156: none reaches Playwright or CDP). A cross-site frame's dialog whose frame its page then removed crashes
 *   the whole browser when answered or when its tab closes (browser/orphanDialogs.ts): one page of one run, or of
 *   one client, took every other run's and client's tabs down with it (an attack review). An agent has no use for
 *   a third party's dialog.
 */
export function withOwnBrowserFeatures(args: readonly string[] = []): string[] {
  const features = [
    'IsolateSandboxedIframes',
    'WebUIOmniboxPopup',
    'WebUIOmniboxAimPopup',
    'AutofillServerCommunication',
    'NetworkTimeServiceQuerying',
    'WebRtcHideLocalIpsWithMdns',
  ].join(',');
  return mergedFeatures(
    mergedFeatures(args, '--disable-features=', features),
    '--enable-features=',
    'SuppressDifferentOriginSubframeJSDialogs',
  );
}

/** Features tabward's own browsers run with (withOwnBrowserFeatures) that they must not run without. */
const requiredFeatures = ['SuppressDifferentOriginSubframeJSDialogs'];

/** A feature-list switch in any spelling Chromium takes (one dash or two), with its value. */
function featureSwitch(arg: string): { readonly name: string; readonly value: string } | undefined {
  const match = /^--?((?:enable|disable)-features)(?:=(.*))?$/s.exec(arg);
  return match ? { name: match[1] ?? '', value: match[2] ?? '' } : undefined;
}

/**
 * A required feature a --disable-features switch of the user's names, in any spelling (one dash, a `*` before it,
 * other letter case), or undefined: Chromium lets a disabled feature win over the same feature enabled, and three
 * spellings of the switch got past a check of the usual one (two attack reviews).
 */
export function requiredFeatureDisabled(args: readonly string[] = []): string | undefined {
  const disabled = args
    .map(featureSwitch)
    .filter((found) => found?.name === 'disable-features')
    .map((found) => found?.value.toLowerCase() ?? '');
  return requiredFeatures.find((feature) => disabled.some((value) => value.includes(feature.toLowerCase())));
}

/**
 * `features` added to the list Chromium reads: the last switch of that name in either spelling (Chromium takes
 * the last), every earlier one dropped, the merged one last. Added to the first of two spellings, tabward's own
 * were never read.
 */
function mergedFeatures(args: readonly string[], switchName: string, features: string): string[] {
  const name = switchName.replace(/^-+|=$/g, '');
  const given = args.filter((arg) => featureSwitch(arg)?.name === name);
  const last = given.length > 0 ? featureSwitch(given[given.length - 1] ?? '')?.value : undefined;
  const rest = args.filter((arg) => featureSwitch(arg)?.name !== name);
  return [...rest, `--${name}=${last ? `${last},` : ''}${features}`];
}
