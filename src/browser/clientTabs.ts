// Which tabs of the user's Chrome are which client's, when several MCP clients of one tabward each attach to it
// (docs/architecture.md "Several clients"). Each client's connection sees every tab of the profile; without this,
// one client's tabs would look to another like the user's own: listed, readable, and acted in with the user's
// protections only. A tab another client opened (or adopted as its popup) is not listed to this client, and no call
// of this client can name it. Tabs are told apart by their CDP target id, which every connection to one browser
// shares.

/** One client's view of its own tabs, as the others ask it. */
export interface TabOwner {
  /** Whether this client has the tab with this CDP target id as its own (opened or adopted). */
  ownsTarget(targetId: string): boolean;
}

export class ClientTabs {
  private readonly owners = new Set<TabOwner>();

  /** A client joins; the function it gets back makes it leave (its tabs are then nobody's). */
  join(owner: TabOwner): () => void {
    this.owners.add(owner);
    return () => this.owners.delete(owner);
  }

  /** Whether a client other than `asking` has this tab as its own. */
  ownedByAnother(asking: TabOwner, targetId: string): boolean {
    for (const owner of this.owners) if (owner !== asking && owner.ownsTarget(targetId)) return true;
    return false;
  }
}
