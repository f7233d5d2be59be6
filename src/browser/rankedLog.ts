// A bounded log whose entries have a rank, how much the audit needs them (0 first): each rank keeps its own latest
// entries, so that a page's flood of one kind (its own posts, its refused requests) never pushes out another kind (a
// write into a sensitive page it was let to send), and what had to go for room is still counted, so that the audit
// says how many there were. A page decides how much it sends; the log's size must not decide what the audit says.

export interface Ranked {
  readonly seq: number;
  readonly rank: number;
}

/** What the log tells since a mark. */
export interface RankedSince<T> {
  /** The entries kept, by rank then age. */
  readonly kept: T[];
  /** How many more there were, let go for room. */
  readonly unkept: number;
  /** Past `countedPastIt` let-go entries even those counts were let go: `unkept` is then a floor ("at least"). */
  readonly atLeast: boolean;
}

export class RankedLog<T extends Ranked> {
  private readonly ranks = new Map<number, T[]>();
  /** Entries let go for room, oldest first: only their number and scope, to be counted (never their text). */
  private readonly letGo: { readonly seq: number; readonly scope: string | undefined }[] = [];
  /** The newest let-go entry whose count was let go too: counts after a mark before it are floors. */
  private forgotten = 0;

  constructor(
    private readonly keptPerRank: number,
    /** Whose an entry is (its tab), so that a count of one scope's let-go entries can be given. */
    private readonly scopeOf: (entry: T) => string | undefined = () => undefined,
    private readonly countedPastIt = 100_000,
  ) {}

  add(entry: T): void {
    let kept = this.ranks.get(entry.rank);
    if (!kept) {
      kept = [];
      this.ranks.set(entry.rank, kept);
    }
    kept.push(entry);
    if (kept.length <= this.keptPerRank) return;
    const gone = kept.shift() as T;
    this.letGo.push({ seq: gone.seq, scope: this.scopeOf(gone) });
    if (this.letGo.length > this.countedPastIt) this.forgotten = this.letGo.shift()?.seq ?? this.forgotten;
  }

  /** The entries after `mark` (of `scope` alone, when given), by rank then age, and how many more there were. */
  since(mark: number, scope?: string): RankedSince<T> {
    const ours = (entryScope: string | undefined) => scope === undefined || entryScope === scope;
    const kept = [...this.ranks.values()]
      .flat()
      .filter((entry) => entry.seq > mark && ours(this.scopeOf(entry)))
      .sort((a, b) => a.rank - b.rank || a.seq - b.seq);
    let unkept = 0;
    for (const gone of this.letGo) if (gone.seq > mark && ours(gone.scope)) unkept++;
    return { kept, unkept, atLeast: this.forgotten > mark };
  }
}
