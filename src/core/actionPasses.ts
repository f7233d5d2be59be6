// Passes for the network backstop: a request that would change state on a sensitive page, or a top-level
// navigation into one, is let through only when a human approval covers it. An approval opens a pass for the
// requests its action causes, only toward what the human saw, from the tab they were asked about: each form action
// or link the action was predicted to send to, once and only while the action runs; navigations within the
// approved origins while it runs and for a short grace after (the redirect that answers a post).

export interface PassSpec {
  /**
   * The URLs (query included, fragment not) of the form submissions and link navigations the human saw, each let
   * go once, and only as the navigation of a document (a form submitting), never as a script's request.
   */
  readonly writeTargets: readonly string[];
  /** The approved action acts in the tab's top document: only its own navigations spend the write targets. */
  readonly topFrame?: boolean;
  /** Origins the tab may navigate to (the approved destination, the origin of the approved page). */
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
}

export interface PassHandle {
  /** The action is over: the pass lives on for `graceMs` (a redirect or a late submit), then lapses. */
  end(graceMs: number): void;
}

export class ActionPasses {
  private readonly passes = new Set<Pass>();

  constructor(private readonly now: () => number = Date.now) {}

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
      // A script's fetch to the same URL, or a frame's form, is not the submission the human saw.
      const ownNavigation = request.document && (pass.topFrame !== true || request.mainFrame);
      const write = pass.ended || !ownNavigation || !target ? -1 : pass.writesLeft.indexOf(target);
      if (kind === 'write' && write >= 0) {
        // Spent: the human saw one submission of this form, not a page posting it again and again.
        pass.writesLeft.splice(write, 1);
        return true;
      }
      if (kind === 'navigation' && pass.navigationOrigins.includes(parsed.origin)) return true;
    }
    return false;
  }

  clear(): void {
    this.passes.clear();
  }
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
