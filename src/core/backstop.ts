// The network backstop as the call path sees it (docs/architecture.md "The choke point"): passes an approved
// action opens, what it stopped and let out since a mark, the requests of an action's tab held for its human, and
// the session's taint both ways. browser/ implements it; core/ only calls it. Types only.

import type { PassSpec } from './actionPasses.ts';
import type { Attendant } from './networkHolds.ts';

/**
 * What the backstop tells since a mark: the lines it kept, what matters first (writes into sensitive pages), and how
 * many more there were than it keeps (a page's flood): the audit counts those too.
 */
export interface ToldLines {
  readonly lines: string[];
  readonly unkept: number;
  /** So many were let go that even their count is a floor: "at least N more". */
  readonly atLeast?: boolean;
}

/** The network backstop, as the call path uses it. */
export interface Backstop {
  open(spec: PassSpec, maxMs: number): { end(graceMs: number): void };
  mark(): number;
  /**
   * "METHOD URL: why", for each request stopped since the mark (of the tab `scope`, when given), writes into
   * sensitive pages first.
   */
  stoppedSince(mark: number, scope?: string, teller?: string): ToldLines;
  /** Origins of sensitive pages requested (and let through) since the mark: what the action could have read. */
  sensitiveReadsSince(mark: number): string[];
  /** While an action runs, the requests its tab makes that would be stopped are held and put to its human. */
  attend(attendant: Attendant): Attendance;
  /**
   * The session's taint both ways: what it has read and allowed, for requests no action answers for (a worker's, a
   * late timer's); and each sensitive page a request of the agent's pages read, told as it goes through. A read a
   * click set off after it returned, or one between two calls, taints like one during an action. Until the returned
   * function is called, with the origins whose workers may hold what the session read or typed (a recipe run's
   * sites): their service and shared workers stay held to the taint as it was then.
   */
  watchTaint(
    view: () => TaintView,
    recordRead: (origin: string) => void,
    recordUntied?: (stop: UntiedStop) => void,
    recordTypedSecret?: (origin: string) => void,
  ): (workerOrigins?: ReadonlySet<string>) => void;
  /** "METHOD URL: sent, answered N" for what the choke point let out since the mark that the audit names. */
  sentSince(mark: number): ToldLines;
  /**
   * A secret is about to be typed into a document of `origin`: every session watching is tainted by it, and the
   * choke points cut their open connections to the hosts it now covers, before the value is in the page.
   */
  secretTyped(origin: string): void;
}

/** A request the choke point stopped that no hook could tie to a tab (a frame tearing down, the browser's own). */
export interface UntiedStop {
  readonly method: string;
  readonly url: string;
  readonly reason: string;
  /** Judged refused, yet it went (a socket past the socket route, browser/nativeSockets.ts): the audit says so. */
  readonly sent?: boolean;
  /** The tab it came from, when a hook of that tab stopped it with no action of the agent's running there. */
  readonly tab?: string;
}

export interface TaintView {
  readonly tainted: readonly string[];
  readonly allowed: ReadonlySet<string>;
  /** Origins a secret was typed into (also in `tainted`): judged against `secretAllowed`, not `allowed`. */
  readonly secrets?: readonly string[];
  readonly secretAllowed?: ReadonlySet<string>;
}

export interface Attendance {
  /** Resolves once every question raised so far is answered (the action's result reports them). */
  settled(): Promise<void>;
  detach(): void;
}
