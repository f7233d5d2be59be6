// Which tabs of the user's Chrome are which client's, when several MCP clients of one tabward each attach to it
// (docs/architecture.md "Several clients"). Each client's connection sees every tab of the profile; without this,
// one client's tabs would look to another like the user's own: listed, readable, and acted in with the user's
// protections only. A tab another client opened (or adopted as its popup) is not listed to this client, and no call
// of this client can name it. Tabs are told apart by their CDP target id, which every connection to one browser
// shares. A client that leaves leaves its tabs hidden until they close.

/** One client's view of its own tabs, as the others ask it. */
export interface TabOwner {
  /** Whether this client has the tab with this CDP target id as its own (opened or adopted). */
  ownsTarget(targetId: string): boolean;
  /** The CDP target ids of the tabs this client has as its own now (read as it leaves). */
  ownedTargets(): Iterable<string>;
}

export class ClientTabs {
  private readonly owners = new Set<TabOwner>();
  /**
   * Tabs of clients that left, until a client still here sees them close. A client leaves before its tabs are
   * closed (silenced first, up to seconds; a retired tab never is): meanwhile they are still the agent's pages,
   * not the user's, and no other client may list, read or act in them.
   */
  private readonly leftBehind = new Set<string>();

  /** Tabs being opened now (the browser asked for one, whose id its client does not know yet), by whom. */
  private readonly openings = new Map<symbol, TabOwner>();

  /**
   * A client asks the browser for a tab: until the function it gets back is called (the tab is known as its own,
   * or the opening failed), a tab another client first sees meanwhile may be this one, and is not listed there.
   */
  beginOpening(owner: TabOwner): () => void {
    const opening = Symbol('opening a tab');
    this.openings.set(opening, owner);
    return () => this.openings.delete(opening);
  }

  /** The openings by clients other than `asking` in progress now. */
  openingsBesides(asking: TabOwner): symbol[] {
    return [...this.openings].filter(([, owner]) => owner !== asking).map(([opening]) => opening);
  }

  /** Whether any of these openings is still in progress. */
  stillOpening(openings: readonly symbol[]): boolean {
    return openings.some((opening) => this.openings.has(opening));
  }

  /** A client joins; the function it gets back makes it leave (its tabs stay hidden until they close). */
  join(owner: TabOwner): () => void {
    this.owners.add(owner);
    return () => {
      if (!this.owners.delete(owner)) return;
      for (const targetId of owner.ownedTargets()) this.leftBehind.add(targetId);
    };
  }

  /** A client still here saw this tab close: a tab left behind by a client that left is gone. */
  closed(seenBy: TabOwner, targetId: string): void {
    if (this.owners.has(seenBy)) this.leftBehind.delete(targetId);
  }

  /** Whether a client other than `asking` has this tab as its own (or had it, and left before it closed). */
  ownedByAnother(asking: TabOwner, targetId: string): boolean {
    if (this.leftBehind.has(targetId)) return true;
    for (const owner of this.owners) if (owner !== asking && owner.ownsTarget(targetId)) return true;
    return false;
  }
}
