// The stop log of the network backstop: one line for each request stopped, what the choke point let out that the
// audit names, and the sensitive pages read, each numbered in one sequence so that an action's marks tell what
// happened during it. Base of the judge (browser/requestJudge.ts).

import type { Page } from 'playwright-core';
import type { ToldLines } from '../core/backstop.ts';
import { RankedLog } from './rankedLog.ts';

/** How many lines of each rank are kept (a page's flood of one rank never pushes out another's). */
const keptPerRank = 200;

export interface BlockedRequest {
  readonly seq: number;
  /** 0 a write into a sensitive page, 1 the rest (RequestJudge.stopRank). */
  readonly rank: number;
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
  protected readonly blocked = new RankedLog<BlockedRequest>(keptPerRank, (entry) =>
    entry.page ? this.scopes.get(entry.page) : undefined,
  );
  protected readonly sentLog = new RankedLog<SentRequest>(keptPerRank);
  /** Each sensitive origin requested, with its latest read: a flood of reads of one never pushes out another's. */
  protected readonly reads = new Map<string, number>();
  protected seq = 0;
  /** Which tab a page is, so that an approval's pass covers the tab it was given for and no other. */
  protected readonly scopes = new WeakMap<Page, string>();

  /** A marker: the blocks recorded after it are the ones an action caused. */
  mark(): number {
    return this.seq;
  }

  /**
   * The Backstop side of the call path: what was stopped since a mark (in one tab, when given), one line each; told
   * to an action of tab `teller`, a stop of another tab names it.
   */
  stoppedSince(mark: number, scope?: string, teller?: string): ToldLines {
    const { kept, unkept, atLeast } = this.blocked.since(mark, scope);
    const lines = kept.map((entry) => {
      const tab = entry.page ? this.scopes.get(entry.page) : undefined;
      const where = teller !== undefined && tab !== undefined && tab !== teller ? `in tab ${tab}: ` : '';
      return `${where}${entry.method} ${entry.url}: ${entry.reason}`;
    });
    return { lines, unkept, atLeast };
  }

  /**
   * "METHOD URL: sent, answered N" for each such request that left since the mark: writes into sensitive pages
   * first, then sends to other hosts after a read, then the rest (a site's own posts after a read), so that a list
   * the audit cuts keeps what matters.
   */
  sentSince(mark: number): ToldLines {
    const { kept, unkept, atLeast } = this.sentLog.since(mark);
    return { lines: kept.map((entry) => entry.line), unkept, atLeast };
  }

  /** Origins of the sensitive pages requested since the mark. */
  sensitiveReadsSince(mark: number): string[] {
    return [...this.reads].filter(([, seq]) => seq > mark).map(([origin]) => origin);
  }

  protected record(page: Page | undefined, method: string, url: string, reason: string): void {
    this.blocked.add({ seq: ++this.seq, rank: this.stopRank(method, url), page, method, url, reason });
  }

  /** How much the audit needs a stop: 0 a write into a sensitive page (the judge knows the rules), 1 the rest. */
  protected stopRank(_method: string, _url: string): number {
    return 1;
  }
}
