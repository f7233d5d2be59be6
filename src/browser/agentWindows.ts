// Which windows the agent's tabs opened, for the browser-wide gate (browser/browserFetchGate.ts): a recipe run's end
// and the gate's own closing close them, whether or not Playwright has told of them yet (it tells of a window once its
// first document commits, and not as a popup once its opener is gone).
//
// A window with an opener is known by it. A link activated with a modifier (ctrl, shift, the middle button; a page's
// synthetic click during the user activation an agent's click gave it included) opens a tab with no opener at all:
// the agent frame's session tells of that navigation, and its address, ~10 ms before the tab appears (measured on
// Chromium 156). A tab with no opener created within a moment of such a request is a candidate until its address is
// known: the agent's window when it is the address asked for, else the user's. A page that keeps asking for tabs
// Chromium never opens (no user activation) cannot claim the user's own new tabs.

import { withoutFragment } from './announcedRequests.ts';

/** How long after an agent frame asked for a new tab a tab with no opener may be that one. */
const expectedWindowMs = 2_000;

export class AgentWindows {
  /** Each window an agent tab (or a frame of it) opened: the tab it was opened from. */
  private readonly openedFrom = new Map<string, string>();
  /** New tabs agent frames asked for (no opener will name them): each its tab, when, and its address. */
  private readonly expected: { readonly tab: string; readonly at: number; readonly url: string }[] = [];
  /** Tabs with no opener created while a new tab was expected, their address not known yet. */
  private readonly candidates = new Set<string>();

  /** A window its opener names: opened from `tab`. */
  opened(windowId: string, tab: string): void {
    if (!this.openedFrom.has(windowId)) this.openedFrom.set(windowId, tab);
  }

  /** An agent frame of `tab` asked for a navigation to `url` in a new tab or window. */
  expect(tab: string, url: string): void {
    this.expected.push({ tab, at: Date.now(), url: withoutFragment(url) });
  }

  /**
   * A page target with no agent opener was created (or its address changed): the tab it was opened from, once it is
   * known to be a window an agent frame asked for.
   */
  noOpener(targetId: string, url: string, created: boolean): string | undefined {
    if (created) {
      const recent = Date.now() - expectedWindowMs;
      while ((this.expected[0]?.at ?? recent) < recent) this.expected.shift();
      if (this.expected.length === 0) return undefined;
      this.candidates.add(targetId);
    }
    // A new tab's first address is '' or about:blank until its navigation is known.
    if (!url || url === 'about:blank') return undefined;
    return this.decide(targetId, url);
  }

  /**
   * A candidate's first request: its document's address (`url`), or undefined for another request (a document that
   * loaded nothing from the network sending), taken as the oldest window asked for (fail closed). Returns the tab it
   * was opened from when it is an agent's window.
   */
  decide(targetId: string, url: string | undefined): string | undefined {
    if (!this.candidates.delete(targetId)) return undefined;
    const asked =
      url === undefined ? 0 : this.expected.findIndex((each) => each.url === withoutFragment(url));
    const [expected] = asked === -1 ? [] : this.expected.splice(asked, 1);
    if (!expected) return undefined;
    this.openedFrom.set(targetId, expected.tab);
    return expected.tab;
  }

  /** The windows `tabId` opened, and those they opened. */
  openedBy(tabId: string): string[] {
    const from = new Set([tabId]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [window, opener] of this.openedFrom)
        if (from.has(opener) && !from.has(window)) {
          from.add(window);
          grew = true;
        }
    }
    from.delete(tabId);
    return [...from];
  }

  /** Every window the agent's tabs opened. */
  all(): string[] {
    return [...this.openedFrom.keys()];
  }
}
