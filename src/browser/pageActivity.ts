// What a tab is doing on the network, for settling after an action: the requests in flight, each numbered in the
// order it started, and a wake-up for whoever waits for that to change. Event-driven: nothing here polls or
// sleeps, so a settle after an action that set nothing off costs one round trip, not a fixed delay.
// A passive load (an image, a font, a video, a beacon) changes nothing an agent reads: settling waits for it only
// until the network backstop has decided it (let go or stopped, so that a stop is told with the action that set it
// off), not for its bytes; a screenshot waits for its bytes (docs/architecture.md, "Settling").

import type { Page, Request } from 'playwright-core';
import { withoutFragment } from './announcedRequests.ts';
import { Wakeups } from './wakeups.ts';

/** Methods that only read: anything else may change state on the server. */
const readingMethods = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How many of the latest state-changing requests are remembered (an action asks about its own, just sent). */
const keptWrites = 20;
/** How many of the latest requests are remembered by address (an action asks about its own, just sent). */
const keptReported = 200;
/** How many actions' first writes are kept at once (watchWrites): the latest, one action each. */
const keptWatches = 32;

export class PageActivity {
  private seq = 0;
  /** Requests started that are not passive loads: what a quiet window watches for (activeMark). */
  private activeSeq = 0;
  private readonly inFlight = new Map<Request, InFlight>();
  private readonly wakeups = new Wakeups();
  private readonly writes: { readonly seq: number; readonly what: string }[] = [];
  /**
   * The first write after each watched mark: kept whatever the page sends after it. Only the latest writes were
   * kept, so a page that posted twenty times after the action's own form post had the audit name one of its posts
   * as what the action issued (an attack review).
   */
  private readonly firstWrites = new Map<number, { first?: string; navigation?: string }>();
  /** The latest requests reported, for "has this announced request reached Playwright yet" (sawSince). */
  private readonly reported: { readonly seq: number; readonly method: string; readonly url: string }[] = [];

  constructor(page: Page) {
    activities.set(page, this);
    page.on('request', (request) => {
      const passive = passiveTypes.has(request.resourceType());
      if (!passive) this.activeSeq++;
      this.inFlight.set(request, { seq: ++this.seq, passive, decided: passive && atSight.has(page) });
      this.reported.push({ seq: this.seq, method: request.method(), url: withoutFragment(request.url()) });
      if (this.reported.length > keptReported) this.reported.shift();
      if (!readingMethods.has(request.method())) {
        const what = `${request.method()} ${withoutQuery(request.url())}`;
        this.writes.push({ seq: this.seq, what });
        if (this.writes.length > keptWrites) this.writes.shift();
        const navigation = request.isNavigationRequest() && isMainFrame(page, request);
        for (const watched of this.firstWrites.values()) {
          watched.first ??= what;
          if (navigation) watched.navigation ??= what;
        }
      }
      this.wake();
    });
    const done = (request: Request) => {
      if (this.inFlight.delete(request)) this.wake();
    };
    page.on('requestfinished', done);
    page.on('requestfailed', done);
    const wake = () => this.wake();
    page.on('framenavigated', wake);
    page.on('domcontentloaded', wake);
    page.on('dialog', wake);
    page.on('crash', wake);
    page.on('close', wake);
  }

  /** A marker: the requests started after it are the ones an action sent. */
  mark(): number {
    return this.seq;
  }

  /**
   * A marker that moves only when a request other than a passive load starts: a page still fetching its images is
   * not a page still acting, so a quiet window waits for this one (browser/pageSettle.ts).
   */
  activeMark(): number {
    return this.activeSeq;
  }

  /** A mark (as `mark`) whose first writes writeSince tells whatever the page sends after them. */
  watchWrites(): number {
    const mark = this.seq;
    if (!this.firstWrites.has(mark)) this.firstWrites.set(mark, {});
    if (this.firstWrites.size > keptWatches)
      this.firstWrites.delete(this.firstWrites.keys().next().value as number);
    return mark;
  }

  /**
   * The first request started after `mark` that may change state (a form's POST, a fetch PUT...), as "METHOD
   * origin/path": what a saved recipe marks as a write, whatever the element's label says. A form the action
   * submitted in the tab's main frame comes first: a script's posts in the same turn may leave before the form's
   * navigation starts, and the audit then named one of them as what the action issued (an attack review); a
   * frame's form is the page's, and may not stand in for the action's first write.
   */
  writeSince(mark: number): string | undefined {
    const watched = this.firstWrites.get(mark);
    if (watched) return watched.navigation ?? watched.first;
    return this.writes.find((write) => write.seq > mark)?.what;
  }

  /** Whether a request to `url` (of `method`, when given; fragments ignored) was reported after `mark`. */
  sawSince(mark: number, method: string | undefined, url: string): boolean {
    return this.reported.some(
      (seen) => seen.seq > mark && seen.url === url && (method === undefined || seen.method === method),
    );
  }

  /**
   * How many requests started after `mark` an action still waits for: unanswered ones, but a passive load only
   * until the backstop decided it.
   */
  pendingSince(mark: number): number {
    let count = 0;
    for (const { seq, passive, decided } of this.inFlight.values())
      if (seq > mark && !(passive && decided)) count++;
    return count;
  }

  /** How many passive loads (images, fonts, media) are unanswered: what a screenshot waits for. */
  passiveLoads(): number {
    let count = 0;
    for (const { passive } of this.inFlight.values()) if (passive) count++;
    return count;
  }

  /** The backstop let this request go or stopped it. */
  decided(request: Request): void {
    const entry = this.inFlight.get(request);
    if (!entry || entry.decided) return;
    entry.decided = true;
    if (entry.passive) this.wake();
  }

  /** Resolves on the next request, answer, navigation or interruption of the tab, or after `ms`. */
  changed(ms: number): Promise<void> {
    return this.wakeups.next(ms);
  }

  private wake(): void {
    this.wakeups.wake();
  }
}

interface InFlight {
  readonly seq: number;
  /** A load whose answer changes nothing an agent reads (passiveTypes). */
  readonly passive: boolean;
  /** The backstop let it go or stopped it. */
  decided: boolean;
}

/**
 * Playwright's resource types whose answer changes no text, control or state of the page: an image, a font, a
 * video, a subtitle track, a manifest, a beacon, a CSP report, a prefetch. A stylesheet is not one (it can hide
 * text), nor a script, a fetch or a document.
 */
const passiveTypes = new Set([
  'image',
  'media',
  'font',
  'texttrack',
  'manifest',
  'ping',
  'cspviolationreport',
  'prefetch',
]);

const activities = new WeakMap<Page, PageActivity>();
/** Tabs whose passive loads no route decides (behind the egress proxy): decided as soon as they are seen. */
const atSight = new WeakSet<Page>();

/**
 * The tab's passive loads are judged where no action waits for them (the egress proxy, or a hook that records what
 * it stops before it answers): a settle does not wait for them (browser/networkGuard.ts).
 */
export function decidedAtSight(page: Page): void {
  atSight.add(page);
}

/** Tells the activity of the request's tab that the backstop decided the request (browser/networkGuard.ts). */
export function requestDecided(request: Request): void {
  let page: Page | undefined;
  try {
    page = request.frame().page();
  } catch {
    return;
  }
  activities.get(page)?.decided(request);
}

/** A URL without its query and fragment: where a request went, without what it carried. */
function withoutQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url.replace(/[?#].*$/s, '');
  }
}

/** Whether a request is the tab's own main frame's (a service worker's has no frame: Playwright throws). */
function isMainFrame(page: Page, request: Request): boolean {
  try {
    return request.frame() === page.mainFrame();
  } catch {
    return false;
  }
}
