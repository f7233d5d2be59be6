// One taint for every client of this tabward attached to the user's Chrome (docs/architecture.md "Several clients").
// Their tabs share one profile: a page of one client's can hand what it read to a page of the same site in another
// client's tab (a BroadcastChannel, localStorage, a cookie), which that client's guard would otherwise let leave
// untainted. So a sensitive read by any of them taints them all, and a typed secret held by a tab of one counts
// for all, as it would in one shared session. Isolated clients have contexts of their own and do not join.
// What a page kept in the profile outlives the read and the reader: a client that joins later (a new MCP session,
// one switching in from the isolated browser with browser_connect) is tainted by every read made before it came.
// A read only a result showed (no request of the agent's fetched it) reaches no hook: each member's taint view
// therefore also asks the others' (taintedBesides), whatever made them tainted.

/** A client's guard as the group sees it. */
export interface TaintMember {
  /** Another member read a sensitive page of `origin`: taint this one as if it had. */
  taintFromPeer(origin: string): void;
  /** Another member typed a secret into a document of `origin`: protect it here as if this one had. */
  secretFromPeer(origin: string): void;
  /**
   * Origins this member's session is tainted by, however it learnt of them: a read its hooks saw, and a read only a
   * result showed (a snapshot of a sensitive tab already loaded, which no request of the agent's fetched).
   */
  ownTainted(): readonly string[];
}

export class SharedProfileTaint {
  private readonly members = new Set<TaintMember>();
  /** Every origin a member read a sensitive page of, for as long as the profile is shared (this process). */
  private readonly reads = new Set<string>();
  /** Every origin a member typed a secret into, kept as reads are. */
  private readonly secrets = new Set<string>();

  /** A member joins until the returned function is called, tainted at once by every read made before it. */
  join(member: TaintMember): () => void {
    this.members.add(member);
    for (const origin of this.reads) member.taintFromPeer(origin);
    for (const origin of this.secrets) member.secretFromPeer(origin);
    return () => {
      if (!this.members.delete(member)) return;
      // What it read stays in the profile after it leaves.
      for (const origin of member.ownTainted()) this.reads.add(origin);
    };
  }

  /** Every origin the profile is tainted by, but for what `asking` itself knows: the others' taint, and past reads. */
  taintedBesides(asking: TaintMember): string[] {
    const tainted = new Set(this.reads);
    for (const member of this.members)
      if (member !== asking) for (const origin of member.ownTainted()) tainted.add(origin);
    return [...tainted];
  }

  /**
   * `typist` typed a secret into a document of `origin`: every other member (and every later one) protects it as
   * its own typed secret, whose hosts allowed before it do not take it (core/guardState.ts recordTypedSecret).
   */
  secretTyped(typist: TaintMember, origin: string): void {
    this.reads.add(origin);
    this.secrets.add(origin);
    for (const member of this.members) if (member !== typist) member.secretFromPeer(origin);
  }

  /** `reader` read a sensitive page of `origin`: every other member is tainted by it too, and every later one. */
  read(reader: TaintMember, origin: string): void {
    this.reads.add(origin);
    for (const member of this.members) if (member !== reader) member.taintFromPeer(origin);
  }
}
