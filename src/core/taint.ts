// Taint: once the agent has read a sensitive page, that page's origin is remembered, so that data-carrying
// actions toward any other origin need a human yes (DESIGN.md 3.3 rule 5).

export class Taint {
  private readonly origins = new Set<string>();

  /** Records a read of a page; only pages a rule marks sensitive taint the session. */
  recordRead(origin: string, sensitive: boolean): void {
    if (sensitive) this.origins.add(origin);
  }

  list(): string[] {
    return [...this.origins];
  }

  clear(): void {
    this.origins.clear();
  }
}
