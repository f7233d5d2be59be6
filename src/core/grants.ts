// Approval grants. Approve-all grants (one tool, or the whole server) expire and are cleared when the
// browser switches to the user's Chrome. A single approval is bound to one tab, one document, one origin and
// the exact action, and is spent by the call it was given for.

export type ApproveAllScope = { readonly kind: 'tool'; readonly tool: string } | { readonly kind: 'server' };

export interface ActionBinding {
  readonly tabId: string;
  /** Changes whenever the tab's top document changes (navigation, reload). */
  readonly documentId: string;
  readonly origin: string;
  /** The tool plus its canonical arguments. */
  readonly action: string;
}

export class ApproveAllGrants {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  grant(scope: ApproveAllScope): void {
    this.expiries.set(scopeKey(scope), this.now() + this.ttlMs);
  }

  covers(tool: string): boolean {
    return this.live(scopeKey({ kind: 'server' })) || this.live(scopeKey({ kind: 'tool', tool }));
  }

  clear(): void {
    this.expiries.clear();
  }

  /** Scopes in force, for status displays. */
  list(): string[] {
    return [...this.expiries.keys()].filter((key) => this.live(key));
  }

  private live(key: string): boolean {
    const expiry = this.expiries.get(key);
    if (expiry === undefined) return false;
    if (expiry > this.now()) return true;
    this.expiries.delete(key);
    return false;
  }
}

function scopeKey(scope: ApproveAllScope): string {
  return scope.kind === 'server' ? 'server' : `tool:${scope.tool}`;
}

/** A one-time approval. `spend` answers whether it covers the action about to run, and can answer yes once. */
export class SingleUseGrant {
  private spent = false;

  constructor(
    private readonly binding: ActionBinding,
    private readonly expiresAt: number,
    private readonly now: () => number = Date.now,
  ) {}

  spend(actual: ActionBinding): boolean {
    if (this.spent || this.now() >= this.expiresAt) return false;
    const same =
      actual.tabId === this.binding.tabId &&
      actual.documentId === this.binding.documentId &&
      actual.origin === this.binding.origin &&
      actual.action === this.binding.action;
    if (same) this.spent = true;
    return same;
  }
}

/** Stable text for a tool call, independent of key order. */
export function canonicalAction(tool: string, args: Readonly<Record<string, unknown>>): string {
  return `${tool}(${JSON.stringify(sortKeys(args))})`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, inner]) => [key, sortKeys(inner)]));
}
