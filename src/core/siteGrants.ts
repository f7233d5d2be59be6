// Site grants: "allow writes like this on this site for 15 min / 1 h". A grant covers one tool on one exact origin
// (scheme, host and port), and only an ordinary write there (docs/architecture.md "The guard's rules", rule 6): every frame from the target up to
// the top page on that origin, nothing it would send or open elsewhere, no script, upload, secret, site tool or
// other server's tool. Sensitive pages, taint and the user's own tabs ask before rule 6 is reached, so a grant
// never answers for them. Grants expire, are revocable one by one, and the runner clears them on a mode switch.

import { type GuardFacts, originOf } from './guard.ts';

export const siteGrantMinutes = [15, 60] as const;
export type SiteGrantMinutes = (typeof siteGrantMinutes)[number];

export interface SiteGrant {
  readonly origin: string;
  readonly tool: string;
  readonly minutes: SiteGrantMinutes;
  readonly expiresAt: number;
  /** The approver the human answered through. */
  readonly givenThrough: string;
}

/** What decides whether a write is one a site grant may cover. */
export type SiteGrantFacts = Pick<
  GuardFacts,
  | 'kind'
  | 'tab'
  | 'frames'
  | 'destination'
  | 'effects'
  | 'runsScript'
  | 'exportsLocalFiles'
  | 'external'
  | 'site'
  | 'secrets'
  | 'touchesTypedSecret'
  | 'looksDestructive'
  | 'repostsForm'
>;

/**
 * The origin a site grant for this action would cover, or undefined when none may: the action must be a write in
 * a tab the agent opened whose target frame, every ancestor and the top page are one http(s) origin, with nothing
 * it predictably sends or opens on another origin. Scripts (each one different), uploads, typed secrets, site
 * tools, other servers' tools and writes that read as destructive are never "like" an earlier write.
 */
export function siteGrantOrigin(facts: SiteGrantFacts): string | undefined {
  if (facts.kind !== 'write' || !facts.tab?.ownedByAgent) return undefined;
  if (facts.runsScript || facts.exportsLocalFiles || facts.external || facts.site) return undefined;
  if ((facts.secrets?.length ?? 0) > 0 || facts.touchesTypedSecret) return undefined;
  if (facts.looksDestructive || facts.repostsForm) return undefined;
  const origins = facts.frames.flatMap((frame) => [
    originOf(frame.url, frame.creatorUrl),
    ...(frame.loadedUrl ? [originOf(frame.loadedUrl)] : []),
  ]);
  const [origin] = origins;
  if (!origin || !/^https?:\/\//.test(origin)) return undefined;
  const elsewhere = [
    ...origins,
    ...(facts.destination ? [originOf(facts.destination)] : []),
    ...(facts.effects ?? []).map((effect) => originOf(effect.url)),
  ].some((other) => other !== origin);
  return elsewhere ? undefined : origin;
}

export function minutesLabel(minutes: SiteGrantMinutes): string {
  return minutes === 60 ? '1h' : `${minutes}m`;
}

/** The audit's choice for a call a site grant answered: `site-grant https://shop.example 15m`. */
export function siteGrantChoice(grant: Pick<SiteGrant, 'origin' | 'minutes'>): string {
  return `site-grant ${grant.origin} ${minutesLabel(grant.minutes)}`;
}

export class SiteGrants {
  private grants: SiteGrant[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** Grants (or renews) `tool` on `origin`. */
  grant(origin: string, tool: string, minutes: SiteGrantMinutes, givenThrough: string): SiteGrant {
    const grant = { origin, tool, minutes, expiresAt: this.now() + minutes * 60_000, givenThrough };
    this.grants = [...this.grants.filter((old) => old.origin !== origin || old.tool !== tool), grant];
    return grant;
  }

  /** The live grant covering this call of `tool`, judged on the facts read just before acting. */
  covering(tool: string, facts: SiteGrantFacts): SiteGrant | undefined {
    const origin = siteGrantOrigin(facts);
    if (!origin) return undefined;
    return this.list().find((grant) => grant.origin === origin && grant.tool === tool);
  }

  /** Grants in force, oldest first (their 1-based positions are what `revoke` takes). */
  list(): SiteGrant[] {
    const now = this.now();
    this.grants = this.grants.filter((grant) => grant.expiresAt > now);
    return [...this.grants];
  }

  /** Revokes the grant at 1-based `position` of `list()`; undefined when there is none. */
  revoke(position: number): SiteGrant | undefined {
    const grant = this.list()[position - 1];
    if (grant) this.grants = this.grants.filter((other) => other !== grant);
    return grant;
  }

  /** Revokes every grant; answers how many were in force. */
  clear(): number {
    const count = this.list().length;
    this.grants = [];
    return count;
  }

  /** `click on https://shop.example, 14 min left (given through terminal)`. */
  describe(grant: SiteGrant): string {
    const left = Math.max(1, Math.ceil((grant.expiresAt - this.now()) / 60_000));
    return `${grant.tool} on ${grant.origin}, ${left} min left (given through ${grant.givenThrough})`;
  }

  /** Numbered lines for status displays, or undefined when none is in force. */
  lines(): string[] | undefined {
    const live = this.list();
    if (live.length === 0) return undefined;
    return live.map((grant, index) => `${index + 1}. ${this.describe(grant)}`);
  }
}
