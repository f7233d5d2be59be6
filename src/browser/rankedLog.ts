// A bounded log whose entries have a rank, how much the audit needs them (0 first): each rank keeps its own latest
// entries, so that a page's flood of one kind (its own posts, its refused requests) never pushes out another kind (a
// write into a sensitive page it was let to send), and what had to go for room is still counted, so that the audit
// says how many there were. A page decides how much it sends; the log's size must not decide what the audit says.

export interface Ranked {
  readonly seq: number;
  readonly rank: number;
}

export class RankedLog<T extends Ranked> {
  private readonly ranks = new Map<number, T[]>();
  /** Entries let go for room, oldest first: counted, never shown (bounded too: past it, the oldest go uncounted). */
  private readonly letGo: T[] = [];

  constructor(
    private readonly keptPerRank: number,
    private readonly countedPastIt = 50 * keptPerRank,
  ) {}

  add(entry: T): void {
    let kept = this.ranks.get(entry.rank);
    if (!kept) {
      kept = [];
      this.ranks.set(entry.rank, kept);
    }
    kept.push(entry);
    if (kept.length <= this.keptPerRank) return;
    this.letGo.push(kept.shift() as T);
    if (this.letGo.length > this.countedPastIt) this.letGo.shift();
  }

  /** The entries after `mark` that `wanted` takes, by rank then age, and how many more there were than are kept. */
  since(mark: number, wanted: (entry: T) => boolean = () => true): { kept: T[]; unkept: number } {
    const kept = [...this.ranks.values()]
      .flat()
      .filter((entry) => entry.seq > mark && wanted(entry))
      .sort((a, b) => a.rank - b.rank || a.seq - b.seq);
    let unkept = 0;
    for (const entry of this.letGo) if (entry.seq > mark && wanted(entry)) unkept++;
    return { kept, unkept };
  }
}
