// The guard: one pure function that decides allow / ask / block for a tool call from live page facts.
// Every front end (MCP server, agent, recipes, relay) calls it; docs/architecture.md "The guard's rules" is its specification,
// and the rules below are numbered as there.

import type { FormEncoding } from './formBodies.ts';
import type { BrowserMode, ToolKind, WritePolicy } from './kinds.ts';
import type { RuleSet } from './sensitiveRules.ts';
import { effectiveUrl, isOpaqueUrl } from './sensitiveRules.ts';
import { reasonMaxChars, shownWhole } from './shownPlaces.ts';

export interface FrameFact {
  readonly url: string;
  /** For about:blank / srcdoc frames: the URL of the document that created them. */
  readonly creatorUrl?: string;
  /** Where the document was loaded from, when the page has rewritten the URL it shows (history.replaceState). */
  readonly loadedUrl?: string;
}

export interface GuardFacts {
  readonly tool: string;
  readonly kind: ToolKind;
  readonly mode: BrowserMode;
  /** The tab the call acts on, if any. */
  readonly tab?: { readonly id: string; readonly ownedByAgent: boolean };
  /** The target frame first, then each ancestor, ending with the top document. */
  readonly frames: readonly FrameFact[];
  /** Where a navigation goes. */
  readonly destination?: string;
  /** Where a click or key press would send the browser: a link's target, a submitted form's action. */
  readonly effects?: readonly Effect[];
  /** The call can carry data to the target (typing, submitting, scripts, uploads, a URL with query or fragment). */
  readonly carriesData: boolean;
  /** The call runs the agent's script in the page (evaluate_script): judged by every rule of the origin. */
  readonly runsScript?: boolean;
  /** The call sends local files to the page (upload_file): asks in every mode. */
  readonly exportsLocalFiles?: boolean;
  /** A reload or history move would send a form's POST again. */
  readonly repostsForm?: boolean;
  /** Secrets the call types, and where each may go. */
  readonly secrets?: readonly SecretUse[];
  /** The call runs script in (or reads raw values of) a document a secret was typed into. */
  readonly touchesTypedSecret?: boolean;
  /** Why the action reads as destructive (its label, or the path it sends to), when it does. */
  readonly looksDestructive?: string;
  /** The call closes its tab (a tool declaring `closesTab`): the agent may close only its own. */
  readonly closesTab?: boolean;
  /** The call attaches to the user's own Chrome (a tool declaring `attachesUserBrowser`). */
  readonly attachesUserBrowser?: boolean;
  /** A tool of one of the user's external MCP servers: tabward cannot see what it does. */
  readonly external?: boolean;
  /** Origins of sensitive pages the agent has read in this session. */
  readonly taintedOrigins: readonly string[];
  readonly policy: WritePolicy;
  /** An approve-all grant (this tool or the whole server) is in force. */
  readonly approveAll: boolean;
  /** A site grant covers this write (core/siteGrants.ts judged its scope): what it is, for the reason. */
  readonly siteGrant?: string;
  /** A WebMCP site tool call through the relay (core/siteCalls.ts builds these facts): see siteCallRule. */
  readonly site?: SiteCallFact;
}

export interface SiteCallFact {
  /**
   * The human's standing choice for this tool on this site, in this workspace (relay). Absent (tabward's own MCP
   * server, on the agent's tab): after sensitive pages, the call is judged like any write, by mode and grants.
   */
  readonly standingPermission?: 'always' | 'ask';
  /** Why the page's read-only hint was not believed (protocol/siteRules.ts), when it was not. */
  readonly distrustedHint?: string;
}

export interface SecretUse {
  readonly name: string;
  /** Where the secret would be typed: the target frame's origin. */
  readonly origin: string;
  /** bound-here / known-origin: fine; bound-elsewhere: declared for other origins; new-origin: never used here. */
  readonly placement: 'bound-here' | 'known-origin' | 'bound-elsewhere' | 'new-origin';
  readonly boundTo?: readonly string[];
}

export interface Effect {
  readonly url: string;
  /** A form submission carries the form's data; a link only its own URL. */
  readonly submitsForm: boolean;
  /** A form's fields as it would send them (name, value; a file as its name and size): shown to the human. */
  readonly fields?: readonly (readonly [string, string])[];
  /**
   * How a form posts (set for a POST holding no password): the approval's pass lets through only a body carrying
   * `fields` as shown (core/formBodies.ts).
   */
  readonly sendsAs?: FormEncoding;
  /** For each field shown as a password (`passwordNotShown`), the seal of its value (sealPassword), where read. */
  readonly sealed?: readonly (string | undefined)[];
  /** Fields of another kind holding a password's value: such a form cannot be shown, so it is not asked about. */
  readonly holdsPassword?: readonly string[];
  /** The charset the form is sent in, where not UTF-8 (its URL-encoded body is read in it). */
  readonly charset?: string;
}

export type Decision =
  | { readonly verdict: 'allow'; readonly reason: string }
  | {
      readonly verdict: 'ask';
      readonly reason: string;
      readonly rule: string;
      readonly sensitive: boolean;
      readonly approveAllAllowed: boolean;
      /** A taint question's: the origins its yes allows for the session, each one it names (taintQuestion). */
      readonly taintAllows?: readonly string[];
    }
  | { readonly verdict: 'block'; readonly reason: string; readonly rule: string };

export function decide(facts: GuardFacts, rules: RuleSet): Decision {
  const { kind, mode, tab } = facts;
  const userTab = tab !== undefined && !tab.ownedByAgent;
  if (facts.closesTab && userTab && mode !== 'isolated') {
    return block(
      'tab-ownership',
      // PaiCLI's advice: the user closes their own tabs; the agent asks them to.
      `${facts.tool} refused: tab ${tab.id} is the user's, not one the agent opened. If it should be closed, ask the user to close that tab themselves.`,
    );
  }
  const sensitiveSite = facts.site ? sensitiveSiteCall(facts, rules) : undefined;
  if (sensitiveSite) return sensitiveSite;
  if (facts.touchesTypedSecret) {
    const why = 'a secret was typed into this page: a script or a screenshot here could show it back';
    return ask('typed-secret', why, false, true);
  }
  if (kind === 'read') {
    // A read that hands the page data (a read-only site tool's arguments) can carry what the agent read
    // elsewhere to that page, whose own code may send it on.
    const leak = facts.carriesData ? taintLeak(facts) : undefined;
    if (leak) return ask('taint', leak.reason, false, true, leak.allows);
    return { verdict: 'allow', reason: 'read-only tool' };
  }
  if (kind === 'mode') return modeChange(facts);
  if (userTab && mode !== 'isolated') {
    const sensitive = sensitiveFrame(facts, rules) !== undefined;
    return ask('user-tab', `tab ${tab.id} is the user's own tab, not one the agent opened`, false, sensitive);
  }
  if (kind === 'write') {
    const hit = sensitiveFrame(facts, rules);
    if (hit) {
      return ask(hit.rule, `writes on sensitive pages need a fresh approval (${hit.where})`, false, true);
    }
    const effect = sensitiveEffect(facts, rules);
    if (effect) return ask(effect.rule, effect.reason, false, true);
    const reach = facts.runsScript ? sensitiveOrigin(facts, rules) : undefined;
    if (reach) return ask(reach.rule, reach.reason, false, true);
  }
  if (kind === 'navigate' && facts.destination) {
    const hit = rules.match(facts.destination);
    if (hit)
      return ask(hit.rule, `the destination ${originOf(facts.destination)} is a sensitive page`, false, true);
  }
  if (facts.repostsForm)
    return ask('form-resubmission', 'this would send the form it came from again (a POST)', false, true);
  const secret = misplacedSecret(facts.secrets ?? []);
  if (secret) return ask(secret.rule, secret.reason, false, true);
  // Closing a tab gives its page no last word (it is silenced first; what it still sends is the backstop's to
  // judge): asking whether data may go to it would only let a human who approved "close" allow its site for good.
  const leak = facts.closesTab ? undefined : taintLeak(facts);
  if (leak) return ask('taint', leak.reason, false, true, leak.allows);
  if (kind === 'navigate') {
    // A recipe's goto to /orders/17/refund asks (and so is refused unmarked) as a click on a link there would.
    if (facts.policy === 'destructive-asks' && facts.looksDestructive && !facts.approveAll)
      return ask('destructive', `this reads as destructive: ${facts.looksDestructive}`, true, false);
    return { verdict: 'allow', reason: 'navigation to a page no rule marks sensitive' };
  }
  if (facts.external && kind === 'write' && !facts.approveAll) {
    const why = `${facts.tool} is another MCP server's tool that does not say it only reads`;
    return ask('external-tool', why, true, false);
  }
  if (facts.exportsLocalFiles && !facts.approveAll) {
    const where = facts.frames[0] ? originOf(facts.frames[0].url) : 'the page';
    return ask('local-files', `uploading local files hands them to ${where}`, true, false);
  }
  if (facts.site?.standingPermission) return standingSitePermission(facts.site);
  return ordinaryWrite(facts);
}

/**
 * Site calls (relay): a site tool runs the page's own code in the user's logged-in tab, so a document that a rule
 * marks sensitive asks for every call, read-only or not and whatever the human chose to "always allow"; the
 * frames are the document the extension says will run the call.
 */
function sensitiveSiteCall(facts: GuardFacts, rules: RuleSet): Decision | undefined {
  const hit = sensitiveFrame(facts, rules);
  if (!hit) return undefined;
  const why = `the document that would run it (${hit.where}) matches the sensitive rule ${hit.rule}: every call asks`;
  return ask(hit.rule, why, false, true);
}

/** Site calls that may change state run under a standing "always allow" for the tool, and ask otherwise. */
function standingSitePermission(site: SiteCallFact): Decision {
  if (site.standingPermission === 'always')
    return { verdict: 'allow', reason: 'the human chose "always allow" for this tool on this site' };
  const why = site.distrustedHint
    ? `${site.distrustedHint}: asked as a tool that may change state`
    : 'the site tool may change state (the page does not mark it read-only)';
  return ask('site-write', why, true, false);
}

/** Attaching to the user's own Chrome hands the agent their logins: a human says yes each time. */
function modeChange(facts: GuardFacts): Decision {
  if (!facts.attachesUserBrowser || facts.mode === 'shared') return { verdict: 'allow', reason: 'mode tool' };
  return ask(
    'use-your-chrome',
    'the agent asks to use your own Chrome and the logins in it, for every page it opens from now on (until you disconnect)',
    false,
    false,
  );
}

/** The start of the reason given when a site grant allowed a write (the call path audits the grant by it). */
export const coveredBySiteGrant = 'covered by a site grant';

function ordinaryWrite(facts: GuardFacts): Decision {
  if (facts.policy === 'sensitive-only')
    return { verdict: 'allow', reason: 'policy: only sensitive pages ask' };
  if (facts.policy === 'destructive-asks') {
    if (!facts.looksDestructive || facts.approveAll)
      return { verdict: 'allow', reason: 'policy: only writes that read as destructive ask' };
    return ask('destructive', `this reads as destructive: ${facts.looksDestructive}`, true, false);
  }
  if (facts.mode === 'isolated' && facts.policy === 'default') {
    return { verdict: 'allow', reason: 'isolated profile: no account to harm' };
  }
  if (facts.approveAll) return { verdict: 'allow', reason: 'covered by an approve-all grant' };
  if (facts.siteGrant) return { verdict: 'allow', reason: `${coveredBySiteGrant}: ${facts.siteGrant}` };
  const why =
    facts.mode === 'isolated' ? 'policy strict: every write asks' : `writes in ${facts.mode} mode ask`;
  return ask('write', why, true, false);
}

/** The first of target frame, ancestors and top page that a rule marks sensitive; opaque frames fail closed. */
/**
 * A path rule (github.com/settings/*) protects its pages from the rest of the origin too: a script the agent runs
 * on any page of that origin can fetch, frame or post to them with the user's session, so it is judged as if it
 * ran on them. The URL a page was loaded at counts as well as the one it shows.
 */
function sensitiveOrigin(facts: GuardFacts, rules: RuleSet): { rule: string; reason: string } | undefined {
  const frame = facts.frames[0];
  if (!frame) return undefined;
  const hit =
    rules.matchOrigin(frame.url, frame.creatorUrl) ??
    (frame.loadedUrl ? rules.matchOrigin(frame.loadedUrl) : undefined);
  if (!hit) return undefined;
  const origin = originOf(frame.url, frame.creatorUrl);
  return {
    rule: hit.rule,
    reason: `a script on any page of ${origin} can reach its sensitive pages (rule ${hit.rule}) with your session`,
  };
}

function sensitiveFrame(facts: GuardFacts, rules: RuleSet): { rule: string; where: string } | undefined {
  let embeddedInSensitive: { rule: string; where: string } | undefined;
  for (const [index, frame] of [...facts.frames].entries()) {
    const hit =
      rules.match(frame.url, frame.creatorUrl) ??
      (frame.loadedUrl ? rules.match(frame.loadedUrl) : undefined);
    if (hit) {
      const where = index === 0 ? originOf(frame.url) : `inside ${originOf(frame.url)}`;
      embeddedInSensitive ??= { rule: hit.rule, where };
    }
  }
  if (embeddedInSensitive) return embeddedInSensitive;
  const target = facts.frames[0];
  const parent = facts.frames[1];
  if (target && parent && isOpaqueUrl(target.url) && !target.creatorUrl) {
    const parentHit = facts.frames.slice(1).some((frame) => rules.match(frame.url, frame.creatorUrl));
    if (parentHit) return { rule: 'opaque-frame', where: 'an opaque frame inside a sensitive page' };
  }
  return undefined;
}

/** A click on a harmless page whose form posts to (or link leads to) a sensitive page acts on that page. */
function sensitiveEffect(facts: GuardFacts, rules: RuleSet): { rule: string; reason: string } | undefined {
  for (const effect of facts.effects ?? []) {
    const hit = rules.match(effect.url);
    if (hit) {
      const how = effect.submitsForm ? 'submits a form to' : 'leads to';
      return { rule: hit.rule, reason: `this ${how} the sensitive page ${originOf(effect.url)}` };
    }
  }
  return undefined;
}

/** A secret bound to other origins, or typed on an origin it has not been approved for yet. */
function misplacedSecret(uses: readonly SecretUse[]): { rule: string; reason: string } | undefined {
  for (const use of uses) {
    if (use.placement === 'bound-elsewhere') {
      const where = (use.boundTo ?? []).join(', ');
      return {
        rule: 'secret-origin',
        reason: `secret ${use.name} belongs to ${where}, not ${use.origin}`,
      };
    }
    if (use.placement === 'new-origin') {
      return {
        rule: 'secret-new-origin',
        reason: `secret ${use.name} has no origin bound to it and was never typed on ${use.origin}`,
      };
    }
  }
  return undefined;
}

/**
 * Once a sensitive page has been read, anything that can carry data to another origin asks: typing and scripts
 * in its frame, and every navigation, link or form toward another origin, whatever the URL looks like (a path or
 * a subdomain carries data as well as a query does).
 */
function taintLeak(facts: GuardFacts): { reason: string; allows: string[] } | undefined {
  if (facts.taintedOrigins.length === 0) return undefined;
  const targets = taintTargets(facts);
  const foreign = facts.taintedOrigins.filter((origin) => targets.some((target) => target !== origin));
  if (foreign.length === 0) return undefined;
  return taintQuestion(facts, foreign);
}

/**
 * The taint question's reason, and the origins its yes allows: only targets the question names, and it names only
 * what it can show whole. A form or link the "Sends:" line cut or left out (shownPlaces.ts) is not named, nor a
 * target past the reason line's room (approvalDisplay.ts cuts it at reasonMaxChars): a long list of sensitive sites
 * read, or long host names first, cannot push a host out of view and still have it allowed. The targets not named
 * stay not allowed, the line says how many, and the backstop holds what the page sends them (a question each).
 */
function taintQuestion(facts: GuardFacts, foreign: readonly string[]): { reason: string; allows: string[] } {
  const targets = [...new Set(taintTargets(facts))];
  const shown = [...new Set(taintTargets(facts, shownWhole(facts)))];
  const read = namedWithin(foreign, 120);
  const tail = (count: number, others: number) =>
    `; approving lets ${count === 1 ? 'that site' : 'those sites'} receive requests for the rest of this session${
      others > 0
        ? ` (${others} other place(s) it may send to not allowed: asked about if the page sends there)`
        : ''
    }`;
  const frame = `data read on sensitive ${read} could be sent to `;
  let room = reasonMaxChars - frame.length - tail(2, targets.length).length;
  const allows: string[] = [];
  for (const origin of shown) {
    const cost = origin.length + (allows.length > 0 ? 2 : 0);
    if (cost > room || !/^https?:\/\//.test(origin)) continue;
    allows.push(origin);
    room -= cost;
  }
  const to = allows.length > 0 ? allows.join(', ') : 'places this question cannot show';
  return { reason: `${frame}${to}${tail(allows.length, targets.length - allows.length)}`, allows };
}

/** Origins joined within about `max` characters; the rest counted ("a, b and 3 more"). */
function namedWithin(origins: readonly string[], max: number): string {
  const named: string[] = [];
  let used = 0;
  for (const origin of origins) {
    if (named.length > 0 && used + origin.length + 2 > max) break;
    named.push(origin);
    used += origin.length + 2;
  }
  const more = origins.length - named.length;
  return `${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/**
 * The origins an action could carry data to: a navigation's destination; the frame a write or a data-carrying
 * read acts in (a click, a hover or a resize on another site's page is judged like typing there); its links and
 * forms. A human who approves a taint question allows those it names for the session (taintQuestion; `shown`: only
 * the places the question shows whole).
 */
export function taintTargets(
  facts: Pick<GuardFacts, 'kind' | 'destination' | 'carriesData' | 'frames' | 'effects'>,
  shown: (url: string) => boolean = () => true,
): string[] {
  const targets: string[] = [];
  if (facts.kind === 'navigate' && facts.destination) {
    if (shown(facts.destination)) targets.push(originOf(facts.destination));
  } else if (facts.carriesData || facts.kind === 'write') {
    // The page acted in: the question's "Page:" line.
    const target = facts.frames[0]?.url;
    targets.push(target ? originOf(target, facts.frames[0]?.creatorUrl) : 'an unknown origin');
  }
  for (const effect of facts.effects ?? []) if (shown(effect.url)) targets.push(originOf(effect.url));
  return targets;
}

/** A URL with a query or fragment can carry data out to its host (a fact front ends report as carriesData). */
export function urlCarriesData(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.search.length > 1 || parsed.hash.length > 1;
  } catch {
    return false;
  }
}

export function originOf(url: string, creatorUrl?: string): string {
  const parsed = effectiveUrl(url, creatorUrl);
  if (!parsed || parsed.origin === 'null')
    return parsed ? `${parsed.protocol} document` : 'an unparsable URL';
  return parsed.origin;
}

function ask(
  rule: string,
  reason: string,
  approveAllAllowed: boolean,
  sensitive: boolean,
  taintAllows?: readonly string[],
): Decision {
  return {
    verdict: 'ask',
    reason,
    rule,
    sensitive,
    approveAllAllowed,
    ...(taintAllows ? { taintAllows } : {}),
  };
}

function block(rule: string, reason: string): Decision {
  return { verdict: 'block', reason, rule };
}
