// Stops told as audit events of their own (no action's record to carry them), at most once every few seconds per
// source: the first as it is, then, when the window ends, the last of those that came meanwhile and how many. A page
// that sends without end (varying its addresses, from a tab, a worker or a frame tearing down) cannot fill the audit
// log, and the log still says how many it refused (docs/architecture.md, "What left").

import type { UntiedStop } from '../core/backstop.ts';

/** How long a source's window lasts. */
export const stopWindowMs = 5_000;
/** How many sources are watched at once: past it the oldest is told and forgotten. */
const keptSources = 200;

interface Window {
  at: number;
  since: number;
  last?: UntiedStop | undefined;
  timer?: ReturnType<typeof setTimeout> | undefined;
  /** Words for the summary's count: "requests of this tab", "requests no tab sent to example.com". */
  readonly what: string;
}

export class StopsTold {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly tell: (stop: UntiedStop) => void) {}

  /** A stop from `source` (described by `what` in a summary): told now, or counted into its window's summary. */
  stop(source: string, what: string, stop: UntiedStop): void {
    const window = this.windows.get(source);
    if (window && Date.now() - window.at < stopWindowMs) {
      window.since++;
      window.last = stop;
      window.timer ??= setTimeout(() => this.summarise(source), window.at + stopWindowMs - Date.now());
      window.timer.unref?.();
      return;
    }
    this.summarise(source);
    this.windows.set(source, { at: Date.now(), since: 0, what });
    if (this.windows.size > keptSources) this.summarise(this.windows.keys().next().value as string, true);
    this.tell(stop);
  }

  /** The stops of a source held back by its window: told as one event, the last of them and how many. */
  summarise(source: string, forget = false): void {
    const window = this.windows.get(source);
    if (forget) this.windows.delete(source);
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
 * The site a stop went to, as its window's source: the host's last two labels (an IP address whole), so that a
 * page making up subdomains is one source. Names under a two-label suffix (example.co.uk) share a window: fewer
 * events, each still counted.
 */
export function siteOf(url: string): string {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return '(an unreadable address)';
  }
  if (/^[\d.]+$|^\[/.test(host)) return host;
  return host.split('.').slice(-2).join('.');
}
