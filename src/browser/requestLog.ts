// The stop log of the network backstop: one line for each request stopped, what the choke point let out that the
// audit names, and the sensitive pages read, each numbered in one sequence so that an action's marks tell what
// happened during it. Base of the judge (browser/requestJudge.ts).

import type { Page } from 'playwright-core';

export interface BlockedRequest {
  readonly seq: number;
  readonly page: Page | undefined;
  readonly method: string;
  readonly url: string;
  readonly reason: string;
}

/** A request the choke point let out that the audit names: a write into a sensitive page, a send after a read. */
export interface SentRequest {
  readonly seq: number;
  /** Told when it has been written out, then again when its answer came (a slow answer: after the action). */
  line: string;
  /** How much the audit needs it: 0 a write into a sensitive page, 1 a send to another host after a read, 2 the rest. */
  readonly rank: number;
}

export class RequestLog {
  protected readonly blocked: BlockedRequest[] = [];
  protected readonly sentLog: SentRequest[] = [];
  protected readonly reads: { seq: number; origin: string }[] = [];
  protected seq = 0;
  /** Which tab a page is, so that an approval's pass covers the tab it was given for and no other. */
  protected readonly scopes = new WeakMap<Page, string>();

  /** A marker: the blocks recorded after it are the ones an action caused. */
  mark(): number {
    return this.seq;
  }

  since(mark: number, scope?: string): BlockedRequest[] {
    return this.blocked.filter(
      (entry) =>
        entry.seq > mark &&
        (scope === undefined || (entry.page !== undefined && this.scopes.get(entry.page) === scope)),
    );
  }

  /**
   * The Backstop side of the call path: what was stopped since a mark (in one tab, when given), one line each; told
   * to an action of tab `teller`, a stop of another tab names it.
   */
  stoppedSince(mark: number, scope?: string, teller?: string): string[] {
    return this.since(mark, scope).map((entry) => {
      const tab = entry.page ? this.scopes.get(entry.page) : undefined;
      const where = teller !== undefined && tab !== undefined && tab !== teller ? `in tab ${tab}: ` : '';
      return `${where}${entry.method} ${entry.url}: ${entry.reason}`;
    });
  }

  /**
   * "METHOD URL: sent, answered N" for each such request that left since the mark: writes into sensitive pages
   * first, then sends to other hosts after a read, then the rest (a site's own posts after a read), so that a list
   * the audit cuts keeps what matters.
   */
  sentSince(mark: number): string[] {
    return this.sentLog
      .filter((entry) => entry.seq > mark)
      .sort((a, b) => a.rank - b.rank || a.seq - b.seq)
      .map((entry) => entry.line);
  }

  /** Origins of the sensitive pages requested since the mark. */
  sensitiveReadsSince(mark: number): string[] {
    return [...new Set(this.reads.filter((entry) => entry.seq > mark).map((entry) => entry.origin))];
  }

  protected record(page: Page | undefined, method: string, url: string, reason: string): void {
    this.blocked.push({ seq: ++this.seq, page, method, url, reason });
    if (this.blocked.length > 200) this.blocked.shift();
  }
}
