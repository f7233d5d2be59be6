// Which requests the CDP hooks of the agent's tabs and frames pause (browser/networkGuard.ts; docs/architecture.md
// "The choke point", Tags). Every pause is a round trip to tabward while the page waits: on a page of 4 cross-site
// frames, pausing every request made navigate+snapshot 10-25% slower than pausing documents alone (bench/results.md,
// the twelfth pass).
//
// Behind tabward's egress proxy a request no hook paused is judged there alone, by the same rules minus what only a
// hook knows: passes and the human of the running action, which only ever let a request through that the rules
// would stop. So a hook is needed only where its verdict could differ: documents (navigations, their hops, passes),
// anything that may change state (a fetch, a beacon, a form's post), and, once the session holds something to leak
// (a sensitive read, a typed secret), every request, since any may carry it off. Until then the loads that can only
// be a GET and that the proxy judges exactly as a hook would (scripts, styles, images, fonts, media) are not paused:
// the hooks are narrow. The first sign of taint widens every hook of the guard for good (HookWidth.widen); a request
// that slips between the taint and the widening reaches the proxy untied, which refuses what a hook would have asked.
// Requests to the sensitive sites' hosts are paused whatever their type, so that a sensitive read the HTTP cache
// answers (a profile kept from an earlier session) still taints at the hook, as it did when every request paused.
// With no proxy (the user's Chrome, remote browsers) the hooks are the choke point, and always wide.

import { domainToASCII } from 'node:url';
import type { CDPSession, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import { settledWithin } from './deadline.ts';

/** The resource types a hook pauses by (the rest Chromium accepts in a filter are loads that are only a GET). */
type PausedType = 'Document' | 'XHR' | 'Fetch' | 'EventSource' | 'Ping' | 'CSPViolationReport' | 'Other';

export interface FetchPattern {
  readonly urlPattern: string;
  readonly resourceType?: PausedType;
  readonly requestStage: 'Request' | 'Response';
}

/**
 * Every resource type Chromium 156 accepts in a Fetch filter except those that can only be a GET (measured: the
 * others, prefetches and workers among them, are filtered as `Other`).
 */
const narrowTypes: readonly PausedType[] = [
  'Document',
  'XHR',
  'Fetch',
  'EventSource',
  'Ping',
  'CSPViolationReport',
  'Other',
];

const wide: readonly FetchPattern[] = [{ urlPattern: '*', requestStage: 'Request' }];

/**
 * Fetch URL patterns that take in every URL a rule could match, and more (`*github.com*`: the host anywhere in the
 * URL): undefined when a rule names no host to look for (any host, a glob over the host or the whole URL), and the
 * hooks are then never narrow.
 */
export function sensitiveHostPatterns(rules: RuleSet): string[] | undefined {
  const hosts = new Set<string>();
  for (const { pattern } of rules.rules) {
    const { host } = pattern;
    if (pattern.wholeUrl !== undefined || host.kind === 'glob' || host.kind === 'any' || !host.name)
      return undefined;
    const name = (domainToASCII(host.name) || host.name).toLowerCase();
    if (/[*?\\]/.test(name)) return undefined;
    hosts.add(name);
  }
  return [...hosts].map((name) => `*${name}*`);
}

/** A DevTools session a hook pauses on: Playwright's (hookSessionOf), or tabward's own on the pipe (pipeSession.ts). */
export interface HookSession {
  send(method: string, params?: object): Promise<unknown>;
  on(event: string, listener: (params: Record<string, unknown>) => void): void;
}

export function hookSessionOf(cdp: CDPSession): HookSession {
  return {
    send: (method, params) => cdp.send(method as 'Fetch.enable', params as never),
    on: (event, listener) => void cdp.on(event as 'Fetch.requestPaused', listener as never),
  };
}

/** How long widening waits for a session's answer: one that never answers is gone (its target closed). */
const widenMs = 2_000;

export class HookWidth {
  private isWide: boolean;
  /** What a narrow hook pauses: the types that may change state, and anything to a sensitive site's host. */
  private readonly narrow: readonly FetchPattern[];
  private widening: Promise<void> | undefined;
  /** Sessions whose hooks may be narrow (a tab's, its frames'), with the response-stage patterns each also keeps. */
  private readonly narrowable = new Map<HookSession, { page: Page; responses: readonly FetchPattern[] }>();

  /** `sensitiveHosts`: sensitiveHostPatterns' answer (undefined: always wide). */
  constructor(sensitiveHosts: readonly string[] | undefined) {
    this.isWide = sensitiveHosts === undefined;
    this.narrow = [
      ...narrowTypes.map((resourceType) => ({
        urlPattern: '*',
        resourceType,
        requestStage: 'Request' as const,
      })),
      ...(sensitiveHosts ?? []).map((urlPattern) => ({ urlPattern, requestStage: 'Request' as const })),
    ];
  }

  get wide(): boolean {
    return this.isWide;
  }

  /**
   * Pauses the session's requests: narrow while `narrowable` and nothing has widened the hooks yet, else all.
   * Registered before the command is sent, so that a widening sent after it is the one the session keeps.
   */
  async enable(
    page: Page,
    cdp: HookSession,
    narrowable: boolean,
    responses: readonly FetchPattern[] = [],
  ): Promise<void> {
    if (narrowable && !this.isWide) {
      if (![...this.narrowable.values()].some((entry) => entry.page === page))
        page.once('close', () => this.forget(page));
      this.narrowable.set(cdp, { page, responses });
    }
    const requests = narrowable && !this.isWide ? this.narrow : wide;
    await cdp.send('Fetch.enable', { patterns: [...requests, ...responses] });
  }

  /** The tab is gone, and its sessions with it. */
  private forget(page: Page): void {
    for (const [cdp, entry] of this.narrowable) if (entry.page === page) this.narrowable.delete(cdp);
  }

  /**
   * Every hook pauses every request from now on: the session holds something a request could carry off. Resolves
   * once each live session has taken it (a session that does not answer within 2 s is taken as gone).
   */
  widen(): Promise<void> {
    if (this.widening) return this.widening;
    this.isWide = true;
    const sessions = [...this.narrowable];
    this.narrowable.clear();
    this.widening = settledWithin(
      Promise.all(
        sessions.map(([cdp, { responses }]) =>
          cdp
            .send('Fetch.enable', { patterns: [...wide, ...responses] })
            .catch(swallow('browser', 'hookPatterns.widen: a session gone')),
        ),
      ),
      widenMs,
    ).then(() => undefined);
    return this.widening;
  }
}
