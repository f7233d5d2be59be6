// What the worker tells the relay about the shared sites, kept within bytes the relay accepts. A page decides
// what it announces, so every cap is on the encoded bytes that will be sent: a tool over 16 KiB, the tools of a
// site past 256 KiB, and the sites past the report's budget are left out, and the popup shows what was and why.
// A report the relay refused anyway (the socket closed with 1009, "too big") halves the budget: the next one is
// smaller, never the same one again.

import {
  encodedBytes,
  maxSiteReportBytes,
  maxSiteToolsBytes,
  maxToolBytes,
  maxToolsPerPage,
  type SharedSiteState,
  type SiteTool,
} from '../../../src/protocol/siteTools.ts';

/** Tools left out of what agents see, by origin, with the reason in words. */
export interface DroppedTools {
  readonly origin: string;
  readonly tools: readonly string[];
  readonly why: string;
}

const oversized = new Map<string, Set<string>>();
/** Tools of a site past its share of the report, by origin. */
const pastSiteCap = new Map<string, string[]>();
let reportBudget = maxSiteReportBytes;
let refusedNote = '';

/** A page's announced tools, each within the per-tool cap, at most 50; the others remembered for the popup. */
export function withinToolLimits(origin: string, tools: readonly SiteTool[]): SiteTool[] {
  const kept: SiteTool[] = [];
  const dropped = new Set<string>();
  for (const tool of tools) {
    if (kept.length < maxToolsPerPage && encodedBytes(tool) <= maxToolBytes) kept.push(tool);
    else dropped.add(String(tool.name));
  }
  // The page's latest announcement is what counts.
  if (dropped.size) oversized.set(origin, dropped);
  else oversized.delete(origin);
  return kept;
}

/** A site's tools within the per-site cap, in the page's order; the rest remembered for the popup. */
export function withinSiteCap(origin: string, tools: readonly SiteTool[]): SiteTool[] {
  const kept = upTo(maxSiteToolsBytes, tools);
  const cut = tools.slice(kept.length).map((t) => String(t.name));
  if (cut.length) pastSiteCap.set(origin, cut);
  else pastSiteCap.delete(origin);
  return kept;
}

/** The first tools whose encoded definitions fit in `budget` bytes. */
function upTo(budget: number, tools: readonly SiteTool[]): SiteTool[] {
  let bytes = 0;
  let count = 0;
  for (const tool of tools) {
    bytes += encodedBytes(tool) + 1;
    if (bytes > budget) break;
    count++;
  }
  return tools.slice(0, count);
}

/** The report as sent: sites in order, each site's tools as far as the budget goes (its origin always). */
export function cappedReport(states: readonly SharedSiteState[]): SharedSiteState[] {
  let bytes = 64;
  return states.map((state) => {
    const tools: SiteTool[] = [];
    bytes += encodedBytes({ ...state, tools: [] });
    for (const tool of upTo(maxSiteToolsBytes, state.tools)) {
      const cost = encodedBytes(tool) + 1;
      if (bytes + cost > reportBudget) break;
      bytes += cost;
      tools.push(tool);
    }
    return { ...state, tools };
  });
}

/** What the popup shows as left out of the report, per site. */
export function droppedTools(states: readonly SharedSiteState[]): DroppedTools[] {
  const sent = new Map(cappedReport(states).map((s) => [s.origin, new Set(s.tools.map((t) => t.name))]));
  const out: DroppedTools[] = [];
  for (const state of states) {
    const tooBig = [...(oversized.get(state.origin) ?? [])];
    if (tooBig.length)
      out.push({
        origin: state.origin,
        tools: tooBig,
        why: `over ${maxToolBytes / 1024} KiB each, or past ${maxToolsPerPage} tools on a page`,
      });
    const cut = [
      ...(pastSiteCap.get(state.origin) ?? []),
      ...state.tools.filter((t) => !sent.get(state.origin)?.has(t.name)).map((t) => t.name),
    ];
    if (cut.length)
      out.push({
        origin: state.origin,
        tools: cut,
        why: `past the ${maxSiteToolsBytes / 1024} KiB a site may report (${Math.floor(reportBudget / 1024)} KiB for all sites)`,
      });
  }
  return out;
}

/** The relay closed the socket as "message too big" after a report: send at most half as much from now on. */
export function reportRefused(sentBytes: number): void {
  reportBudget = Math.max(4 * 1024, Math.floor(Math.min(reportBudget, sentBytes) / 2));
  refusedNote = `The relay refused a site report of ${sentBytes} bytes; reports are now kept under ${Math.floor(reportBudget / 1024)} KiB.`;
}

export function reportNote(): string {
  return refusedNote;
}

/** Forgets what a site's pages announced over the cap (it is no longer shared). */
export function forgetSite(origin: string): void {
  oversized.delete(origin);
  pastSiteCap.delete(origin);
}
