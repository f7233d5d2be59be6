// Passes for the network backstop: a request that would change state on a sensitive page, or a top-level
// navigation into one, is let through only when a human approval covers it. An approval opens a pass for the
// requests its action causes, only toward what the human saw, from the tab and the document they were asked about:
// each form action the action was predicted to submit to, once, sent by the document holding the form, and only
// while the action runs; a top-level navigation only to an address the human saw whole (a link, navigate_page's
// destination: never a form's action, whose GET carries fields the question did not show), and a redirect hop of
// one within the approved origins, while the action runs and for a short grace after (the redirect that answers a
// post).

import { carriesShownForm, type Seal, type ShownForm } from './formBodies.ts';

export interface PassSpec {
  /**
   * The URLs (query included, fragment not) of the form submissions the human saw, each let go once, and only as
   * the navigation of a document (a form submitting), never as a script's request. A link the human saw as a GET
   * opens none: a page could post to its address under its cover.
   */
  readonly writeTargets: readonly string[];
  /**
   * For a target whose form posts what its question showed (Effect.sendsAs, Effect.fields): its write is covered
   * only with a body carrying those fields (formBodies.ts). A page that changes a field after the question (its
   * submit or formdata handler) sends another body, which no pass covers: it is held and asked, shown whole.
   */
  readonly writeForms?: Readonly<Record<string, readonly ShownForm[]>>;
  /**
   * The origin of the document holding the approved element: a write spends a target only when it comes from a
   * document of that origin (its Origin header), not from another frame of the page submitting a form of its own
   * to the same address. Absent: no write is covered.
   */
  readonly writeOrigin?: string;
  /** The approved action acts in the tab's top document: only its own navigations spend the write targets. */
  readonly topFrame?: boolean;
  /**
   * Where the human saw the action lead (writeTargetOf keys: whole addresses, query included): a top-level
   * navigation that is not a redirect hop is covered only toward one of them, not toward any page of their site a
   * script sends the tab to, nor toward a form's address with a query of the page's (a form the human approved as
   * a POST opens no GET to its address).
   */
  readonly navigationTargets: readonly string[];
  /** Origins a redirect hop of a covered navigation or submission may land in (the approved destination's, the page's). */
  readonly navigationOrigins: readonly string[];
  /**
   * The tab the approved action acts in: requests of other tabs are not covered. Absent (new_page, whose tab has
   * no id yet; a recipe's one page): pages that are no known tab, and tabs that appeared after the pass opened.
   */
  readonly scope?: string;
}

interface Pass extends PassSpec {
  expiresAt: number;
  /** Write targets still unspent. */
  readonly writesLeft: string[];
  /** Set when the action returned: from then on the pass opens navigations only. */
  ended: boolean;
  /** The backstop's sequence number when the pass opened: a scope-less pass covers only tabs seen after it. */
  readonly openedAt: number;
}

/** How the backstop saw the request it asks a pass about. */
export interface PassedRequest {
  /** A document request (a navigation of the tab or of a frame in it). */
  readonly document: boolean;
  /** A document request of the tab's top frame. */
  readonly mainFrame: boolean;
  /** A redirect hop of an earlier request. */
  readonly hop?: boolean;
  /** Its Origin header: the origin of the document that sent it (writes carry one; "null" from an opaque one). */
  readonly origin?: string;
  /** The id its redirect hops share with it (CDP's network id), when the hook knows it. */
  readonly chain?: string;
  /** Its method, when the hook knows it: a form's submission (a POST) begins a chain toward its own address only. */
  readonly method?: string;
  /** What it carries, when the hook read it (none: an empty body): a form's write is covered only with its fields. */
  readonly body?: string;
  /** It carries a body the hook could not read: no form's fields can be matched in it. */
  readonly bodyUnread?: boolean;
}

/** How many redirect chains begun under a pass are remembered (a tab's navigations, a few at a time). */
const maxChains = 200;

export interface PassHandle {
  /** The action is over: the pass lives on for `graceMs` (a redirect or a late submit), then lapses. */
  end(graceMs: number): void;
}

export class ActionPasses {
  private readonly passes = new Set<Pass>();
  /**
   * Redirect chains a pass began (a navigation it covered or that went to an address it names, a write it
   * covered), by the id their hops share: only their hops are the pass's. A page that sends the tab to a redirector
   * of its own (another site, no rule) begins no chain, so the hop it lands on in the approved site is not covered.
   */
  private readonly chains = new Map<string, Pass>();

  /** `seal`: how a form's password values were sealed (browser/passwordSeals.ts); without it none is let through. */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly seal?: Seal,
  ) {}

  open(spec: PassSpec, maxMs: number, openedAt = 0): PassHandle {
    const pass: Pass = {
      ...spec,
      expiresAt: this.now() + maxMs,
      openedAt,
      writesLeft: [...spec.writeTargets],
      ended: false,
    };
    this.passes.add(pass);
    return {
      end: (graceMs) => {
        pass.ended = true;
        pass.expiresAt = Math.min(pass.expiresAt, this.now() + graceMs);
      },
    };
  }

  /**
   * Whether a live pass covers this request, made by the tab `scope` (undefined: a tab tabward does not know),
   * first seen at `seenAt` (the backstop's sequence number): a scope-less pass never covers another known tab. A
   * write it covers spends its target.
   */
  covers(
    url: string,
    kind: 'write' | 'navigation',
    scope?: string,
    seenAt?: number,
    request: PassedRequest = { document: true, mainFrame: true },
  ): boolean {
    const parsed = safeUrl(url);
    if (!parsed) return false;
    const target = writeTargetOf(url);
    for (const pass of [...this.passes]) {
      if (pass.expiresAt <= this.now()) {
        this.passes.delete(pass);
        continue;
      }
      if (pass.scope !== undefined && pass.scope !== scope) continue;
      const newTab = seenAt !== undefined && seenAt > pass.openedAt;
      if (pass.scope === undefined && scope !== undefined && !newTab) continue;
      // A script's fetch to the same URL, or a frame's form, is not the submission the human saw; nor is a form
      // another document of the page (another origin's frame, an opaque one) submits to the same address.
      const ownNavigation =
        request.document &&
        (pass.topFrame !== true || request.mainFrame) &&
        pass.writeOrigin !== undefined &&
        request.origin === pass.writeOrigin;
      const forms = target ? pass.writeForms?.[target] : undefined;
      const sent = request.bodyUnread ? undefined : (request.body ?? '');
      const bodyShown = forms === undefined || forms.some((form) => carriesShownForm(form, sent, this.seal));
      const write =
        pass.ended || !ownNavigation || !target || !bodyShown ? -1 : pass.writesLeft.indexOf(target);
      if (kind === 'write' && write >= 0) {
        // Spent: the human saw one submission of this form, not a page posting it again and again.
        pass.writesLeft.splice(write, 1);
        this.chainOf(request, pass);
        return true;
      }
      if (kind !== 'navigation') continue;
      // A redirect answers what went before it (a post, a link the human saw): it may land anywhere in the approved
      // origins, if its chain began under this pass. A navigation of its own goes only where the human saw the
      // action lead.
      const chained = request.chain !== undefined && this.chains.get(request.chain) === pass;
      if (request.hop === true && chained && pass.navigationOrigins.includes(parsed.origin)) return true;
      // (Its chain was begun by beginChain, which the judge calls for every top-level navigation first.)
      if (request.hop !== true && leadsTo(pass, target)) return true;
    }
    return false;
  }

  /**
   * A top-level navigation, sensitive or not: one to an address a live pass names (in its tab) begins a chain whose
   * redirect hops are that pass's (the approved navigate_page to a login page that redirects into settings); so does
   * the approved form's own submission to an address no rule matches (a sign-in form that redirects into settings).
   */
  beginChain(url: string, scope: string | undefined, request: PassedRequest): void {
    if (request.hop === true || request.chain === undefined) return;
    const target = writeTargetOf(url);
    const submission =
      request.method !== undefined && !['GET', 'HEAD'].includes(request.method.toUpperCase());
    for (const pass of this.passes) {
      if (pass.expiresAt <= this.now() || (pass.scope !== undefined && pass.scope !== scope)) continue;
      const ownSubmission =
        submission &&
        !pass.ended &&
        target !== undefined &&
        pass.writeTargets.includes(target) &&
        pass.writeOrigin !== undefined &&
        request.origin === pass.writeOrigin;
      if (ownSubmission || leadsTo(pass, target)) this.chainOf(request, pass);
    }
  }

  clear(): void {
    this.passes.clear();
    this.chains.clear();
  }

  private chainOf(request: PassedRequest, pass: Pass): void {
    if (request.chain === undefined) return;
    this.chains.delete(request.chain);
    this.chains.set(request.chain, pass);
    if (this.chains.size > maxChains) this.chains.delete(this.chains.keys().next().value as string);
  }
}

/**
 * Whether a navigation (its writeTargetOf key) goes where the pass's human saw the action lead: a link's or a
 * destination's whole address. A form's action is none: submitted by GET it carries the form's fields in its query,
 * which the question did not show (that navigation is asked on its own, showing its address), and submitted by POST
 * it leads nowhere but by its redirect, a hop of the chain its submission began.
 */
function leadsTo(pass: PassSpec, destination: string | undefined): boolean {
  return destination !== undefined && pass.navigationTargets.includes(destination);
}

/** A URL as write targets are compared: origin, path and query, no fragment; undefined when it does not parse. */
export function writeTargetOf(url: string): string | undefined {
  const parsed = safeUrl(url);
  return parsed && parsed.origin !== 'null'
    ? `${parsed.origin}${parsed.pathname}${parsed.search}`
    : undefined;
}

function safeUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
