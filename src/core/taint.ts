// Taint: once the agent has read a sensitive page, that page's origin is remembered, so that data-carrying
// actions toward any other origin need a human yes (docs/architecture.md "The guard's rules", rule 5). Each origin keeps how it was read: a
// tool result showed it, or only the browser did (a page's fetch, a navigation an action caused; the network
// backstop saw it), which the agent is told once, so that the questions that follow do not come out of nowhere.

/** How a sensitive origin was read: a tool result showed it, or only the browser did (the backstop saw it go). */
export type ReadHow = 'shown' | 'background';

export class Taint {
  private readonly origins = new Map<string, ReadHow>();
  /** Origins read only in the background that the agent has not been told of yet. */
  private readonly untold = new Set<string>();

  /** Records a read of a page; only pages a rule marks sensitive taint the session. */
  recordRead(origin: string, sensitive: boolean, how: ReadHow = 'shown'): void {
    if (!sensitive) return;
    if (how === 'shown') {
      this.origins.set(origin, 'shown');
      // A result shows the page itself (a navigation's own document is also a request the backstop saw).
      this.untold.delete(origin);
    } else if (!this.origins.has(origin)) {
      this.origins.set(origin, 'background');
      this.untold.add(origin);
    }
  }

  list(): string[] {
    return [...this.origins.keys()];
  }

  /** Each origin with how it was read, for browser_status. */
  describe(): string[] {
    return [...this.origins].map(([origin, how]) =>
      how === 'shown'
        ? origin
        : `${origin} (loaded or fetched by the browser, not a page a tool result showed)`,
    );
  }

  /** Origins read only in the background since the agent was last told; told once. */
  takeUntold(): string[] {
    const taken = [...this.untold];
    this.untold.clear();
    return taken;
  }

  clear(): void {
    this.origins.clear();
    this.untold.clear();
  }
}
