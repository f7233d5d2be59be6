// What the guard remembers across calls, in one place (docs/architecture.md "The call path's parts"): the taint
// (sensitive pages read), approve-all grants, site grants, and the hosts the human let requests go to after a
// sensitive read. Only this class changes them; the call path, the runner, recipe runs and slash commands call its
// methods, and everyone else gets copies to read.

import { ApproveAllGrants, type ApproveAllScope } from './grants.ts';
import { originOf } from './guard.ts';
import type { BrowserMode } from './kinds.ts';
import { hostKeyOf } from './networkHolds.ts';
import type { RuleSet } from './sensitiveRules.ts';
import { type SiteGrant, type SiteGrantFacts, type SiteGrantMinutes, SiteGrants } from './siteGrants.ts';
import { Taint } from './taint.ts';

export interface GuardStateOptions {
  readonly rules: RuleSet;
  readonly approveAllTtlMs?: number;
  /** The clock site grants expire by (tests move it forward). */
  readonly clock?: () => number;
}

export class GuardState {
  private readonly taint = new Taint();
  private readonly grants: ApproveAllGrants;
  /** "Allow writes like this on this site for a while" (core/siteGrants.ts). */
  private readonly siteGrants: SiteGrants;
  /** Hosts the human let requests go to after a sensitive read (a held request or a taint question approved). */
  private readonly allowedHosts = new Set<string>();
  /**
   * Hosts a typed secret may go to: only those a question that named the secret's place let through (a held
   * request's, after the secret was typed). A taint question about what the agent read allows a host what was
   * read, not a password.
   */
  private readonly secretAllowedHosts = new Set<string>();
  /** Origins of the documents tabward typed a secret into (recordTypedSecret). */
  private readonly typedSecrets = new Set<string>();

  constructor(private readonly options: GuardStateOptions) {
    this.grants = new ApproveAllGrants(options.approveAllTtlMs ?? 30 * 60_000);
    this.siteGrants = new SiteGrants(options.clock);
  }

  // ----- taint

  /** Pages a result showed: each a sensitive rule matches taints the session by its origin. */
  recordReads(urls: readonly string[]): void {
    for (const url of urls)
      if (this.options.rules.match(url)) this.taint.recordRead(originOf(url), true, 'shown');
  }

  /** A sensitive page the browser loaded or fetched that no result showed (the backstop saw it go). */
  recordBackgroundRead(origin: string): void {
    this.taint.recordRead(origin, true, 'background');
  }

  /**
   * tabward typed a secret into a document of `origin`: from then on, for good, the network backstop judges the
   * session's requests as after a read of it (the page can keep what was typed). Not the guard's taint: the agent
   * learnt nothing it could carry (it names a secret, never sees it).
   */
  recordTypedSecret(origin: string): void {
    this.typedSecrets.add(origin);
    // Hosts allowed before were allowed what the agent had read, or an earlier secret (into this origin too: a user
    // name the human let go to the site's analytics host), not this one.
    this.secretAllowedHosts.clear();
  }

  /** Origins of the documents a secret was typed into. */
  typedSecretOrigins(): string[] {
    return [...this.typedSecrets];
  }

  /** What the network backstop judges a request against: the origins read, and those a secret was typed into. */
  networkTaintedOrigins(): string[] {
    return [...new Set([...this.taint.list(), ...this.typedSecrets])];
  }

  taintedOrigins(): string[] {
    return this.taint.list();
  }

  /** Each tainted origin with how it was read, for browser_status. */
  describeTaint(): string[] {
    return [
      ...this.taint.describe(),
      ...[...this.typedSecrets].map((origin) => `${origin} (a secret was typed into a page of it)`),
    ];
  }

  /** Origins read only in the background since the agent was last told; told once. */
  takeUntoldReads(): string[] {
    return this.taint.takeUntold();
  }

  // ----- hosts allowed after a sensitive read

  /** The hosts allowed so far: read-only, live (the backstop's taint view keeps it). */
  get allowed(): ReadonlySet<string> {
    return this.allowedHosts;
  }

  /** The hosts a typed secret may go to (see secretAllowedHosts): read-only, live. */
  get secretAllowed(): ReadonlySet<string> {
    return this.secretAllowedHosts;
  }

  /**
   * The human let a held request to this URL's host go: its question named every place read or typed into (the
   * network's taint reason), so the host is allowed for the session, for both.
   */
  allowHostOf(url: string): void {
    const host = hostKeyOf(url);
    if (!host) return;
    this.allowedHosts.add(host);
    this.secretAllowedHosts.add(host);
  }

  /**
   * A yes to "data read on X could be sent to Y" allows Y (each origin the question named: guard.ts taintQuestion)
   * for the session: for what was read only, since the question names no typed secret.
   */
  allowTaintTargets(origins: readonly string[]): void {
    for (const origin of origins) {
      const host = hostKeyOf(origin);
      if (host) this.allowedHosts.add(host);
    }
  }

  // ----- approve-all grants

  grantApproveAll(scope: ApproveAllScope): void {
    this.grants.grant(scope);
  }

  approveAllCovers(tool: string): boolean {
    return this.grants.covers(tool);
  }

  /** Scopes in force, for status displays. */
  approveAllGrants(): string[] {
    return this.grants.list();
  }

  // ----- site grants

  grantSite(origin: string, tool: string, minutes: SiteGrantMinutes, givenThrough: string): SiteGrant {
    return this.siteGrants.grant(origin, tool, minutes, givenThrough);
  }

  siteGrantCovering(tool: string, facts: SiteGrantFacts): SiteGrant | undefined {
    return this.siteGrants.covering(tool, facts);
  }

  describeSiteGrant(grant: SiteGrant): string {
    return this.siteGrants.describe(grant);
  }

  siteGrantList(): SiteGrant[] {
    return this.siteGrants.list();
  }

  /** One line per grant in force, numbered for revocation; undefined when there are none. */
  siteGrantLines(): string[] | undefined {
    return this.siteGrants.lines();
  }

  /** Revokes the grant at this position of the list (1-based), when there is one. */
  revokeSiteGrant(position: number): SiteGrant | undefined {
    return this.siteGrants.revoke(position);
  }

  /** Revokes every site grant; how many there were. */
  clearSiteGrants(): number {
    return this.siteGrants.clear();
  }

  /**
   * The browser changed under the grants (connect, disconnect, a login-wall switch, a new browser): the pages a
   * site grant was given for are another browser's now, and in the user's Chrome no approve-all answers.
   */
  browserChanged(mode: BrowserMode): void {
    if (mode === 'shared') this.grants.clear();
    this.siteGrants.clear();
  }
}
