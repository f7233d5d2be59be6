// Stops told as audit events of their own (no action's record to carry them), at most once every few seconds per
// source: the first as it is, then, when the window ends (or the session that hears them leaves: flush), the last
// of those that came meanwhile and how many. A page that sends without end, from a tab, a worker or a frame tearing
// down, cannot fill the audit log, and the log still says how many it refused (docs/architecture.md, "What left").

import type { UntiedStop } from '../core/backstop.ts';

/** How long a source's window lasts. */
export const stopWindowMs = 5_000;
/** How many sources are watched at once: past it the oldest is told and forgotten. */
const keptSources = 200;
/**
 * How many new sources a group opens in one window's time: past it, its stops share one window ("other sites"), so
 * that a page varying its addresses (a new domain each request) opens no window, and no line, of its own.
 */
const newSourcesPerWindow = 10;

interface Window {
  at: number;
  since: number;
  last?: UntiedStop | undefined;
  timer?: ReturnType<typeof setTimeout> | undefined;
  /** Words for the summary's count: "requests of this tab", "requests no tab sent to example.com". */
  readonly what: string;
}

/** Where a stop is counted: its own source, within a group that may open only so many sources at a time. */
export interface StopSource {
  readonly group: string;
  readonly key: string;
  readonly what: string;
  /** The words for the group's shared window, once it has opened its share of sources. */
  readonly others: string;
}

export class StopsTold {
  private readonly windows = new Map<string, Window>();
  /** Sources each group opened lately, with when: counted against newSourcesPerWindow. */
  private readonly opened = new Map<string, number[]>();

  constructor(private readonly tell: (stop: UntiedStop) => void) {}

  /** A stop: told now, or counted into its source's window and told with the window's summary. */
  stop(source: StopSource, stop: UntiedStop): void {
    const key = this.keyFor(source);
    const what = key === source.key ? source.what : source.others;
    const window = this.windows.get(key);
    if (window && Date.now() - window.at < stopWindowMs) {
      window.since++;
      window.last = stop;
      window.timer ??= setTimeout(() => this.summarise(key), window.at + stopWindowMs - Date.now());
      window.timer.unref?.();
      return;
    }
    this.summarise(key);
    this.windows.delete(key);
    this.windows.set(key, { at: Date.now(), since: 0, what });
    if (this.windows.size > keptSources) this.summarise(this.windows.keys().next().value as string, true);
    this.tell(stop);
  }

  /** Every window's held-back stops told now (a session that hears them is leaving, tabward is stopping). */
  flush(): void {
    for (const key of [...this.windows.keys()]) this.summarise(key);
  }

  /** The source's own window, or its group's shared one once the group has opened its share lately. */
  private keyFor(source: StopSource): string {
    if (this.windows.has(source.key)) return source.key;
    const now = Date.now();
    const recent = (this.opened.get(source.group) ?? []).filter((at) => now - at < stopWindowMs);
    if (recent.length >= newSourcesPerWindow) {
      this.opened.set(source.group, recent);
      return `${source.group} (others)`;
    }
    recent.push(now);
    this.opened.set(source.group, recent);
    if (this.opened.size > keptSources) this.opened.delete(this.opened.keys().next().value as string);
    return source.key;
  }

  /** The stops of a source held back by its window: told as one event, the last of them and how many. */
  private summarise(key: string, forget = false): void {
    const window = this.windows.get(key);
    if (forget) this.windows.delete(key);
    if (!window) return;
    if (window.timer) clearTimeout(window.timer);
    window.timer = undefined;
    const { last, since } = window;
    if (!last || since === 0) return;
    window.since = 0;
    window.last = undefined;
    window.at = Date.now();
    this.tell({
      ...last,
      reason: `${last.reason} (the last of ${since} ${window.what} refused within ${stopWindowMs / 1000} s)`,
    });
  }
}

/**
 * The site a stop went to, as its window's source: the host's last two labels (an IP address whole, a final dot
 * dropped), so that a page making up subdomains is one source. Names under a two-label suffix (example.co.uk)
 * share a window: fewer events, each still counted.
 */
export function siteOf(url: string): string {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/\.$/, '');
  } catch {
    return '(an unreadable address)';
  }
  if (/^[\d.]+$|^\[/.test(host)) return host;
  return host.split('.').slice(-2).join('.');
}
