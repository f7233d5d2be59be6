// The relay's one decision about a site tool call: may it run, or must the human in the popup approve it?
// Read-only tools run; sensitive pages always ask; any other call asks unless a standing "always allow" covers it.

export interface SiteCallFacts {
  /** The page's own readOnlyHint. */
  readonly readOnly: boolean;
  /** The sensitive rule the site's URL matches, if any. */
  readonly sensitiveRule: string | undefined;
  /** The human chose "always allow" for this tool on this site. */
  readonly standingAllow: boolean;
}

export interface SiteCallVerdict {
  readonly ask: boolean;
  readonly why: string;
}

export function decideSiteCall(facts: SiteCallFacts): SiteCallVerdict {
  if (facts.sensitiveRule)
    return { ask: true, why: `the site matches the sensitive rule ${facts.sensitiveRule}: every call asks` };
  if (facts.readOnly) return { ask: false, why: 'the page marks the tool read-only' };
  if (facts.standingAllow) return { ask: false, why: 'the human chose "always allow" for this tool' };
  return { ask: true, why: 'the tool may change state' };
}
