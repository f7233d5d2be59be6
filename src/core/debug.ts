// The debug channel: with TABWARD_DEBUG set, the places that swallow an error on purpose (a tab already closed, a
// CDP session already detached, a best-effort cleanup) say on stderr what they swallowed and why. TABWARD_DEBUG=1
// (or `all`, `*`, `true`) turns on every area; a comma list (`browser,cli`) only those. Unset (or empty, `0`), nothing
// is printed and the handlers do nothing but swallow. Areas are the source folders: browser, tools, cli.
// stderr only: on stdout `tabward mcp` speaks the protocol.

import { visibleLines } from '../protocol/displayText.ts';

export type DebugArea = 'browser' | 'tools' | 'cli';

/** Whether `area` is on for a TABWARD_DEBUG value. */
export function debugOn(area: string, setting: string | undefined = process.env.TABWARD_DEBUG): boolean {
  const value = setting?.trim().toLowerCase();
  if (!value || value === '0' || value === 'false') return false;
  const areas = value.split(',').map((each) => each.trim());
  return areas.some(
    (each) => each === area || each === '1' || each === 'all' || each === '*' || each === 'true',
  );
}

/** Says what was swallowed in `area` and why, when the channel is on for it. */
export function swallowed(area: DebugArea, why: string, error: unknown): void {
  if (!debugOn(area)) return;
  const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  // An error may quote a page (its exception, an endpoint's answer): marked, so the terminal runs none of it.
  process.stderr.write(`tabward debug [${area}] swallowed (${why}): ${visibleLines(what)}\n`);
}

/** A rejection handler that swallows the error, telling the debug channel: `.catch(swallow('browser', 'why'))`. */
export function swallow(area: DebugArea, why: string): (error: unknown) => undefined {
  return (error) => {
    swallowed(area, why, error);
    return undefined;
  };
}
