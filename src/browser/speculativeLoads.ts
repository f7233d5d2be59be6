// Speculative loads (speculation rules: prefetch, prerender) in a browser with no egress proxy (the user's Chrome,
// remote ones; docs/architecture.md "What holds in each mode"). Chrome's preloading service fetches them through
// loaders of its own that neither a tab's nor the browser's Fetch interception sees (measured on Chromium 156: a
// prefetch of the page's own site, and a cross-site one to a host the browser holds no cookies for), and no CDP
// command turns preloading off in a running browser. The tab's Preload domain reports each attempt as it starts,
// or (an about:blank popup's document: measured, no status at all) the attempts its rules asked for: one the choke
// point would have refused went past it. As a socket past the route (nativeSockets.ts), it cannot be
// called back; it is told (the audit says it left) and the tab is stopped, so that it sends nothing more.

import type { CDPSession } from 'playwright-core';

export type SpeculativeLoad = 'PREFETCH' | 'PRERENDER';

interface AttemptKey {
  readonly loaderId: string;
  readonly action: string;
  readonly url: string;
  readonly targetHint?: string;
}

/**
 * Watches the speculative loads of one tab or frame session: `verdict` says why a load of `url` may not go now
 * (undefined: it may); `bypassed` is told of each attempt, once, that went anyway. Resolves once the session reports
 * them (its Preload domain on).
 */
export async function watchSpeculativeLoads(
  cdp: CDPSession,
  verdict: (url: string) => string | undefined,
  bypassed: (what: SpeculativeLoad, url: string, reason: string) => void,
): Promise<void> {
  const judged = new Set<string>();
  // Judged at its first report (Pending comes before the fetch): later reports of the same attempt are its own.
  const attempt = (what: SpeculativeLoad, key: AttemptKey, url: string) => {
    const id = `${key.loaderId} ${key.action} ${key.url} ${key.targetHint ?? ''}`;
    if (judged.has(id)) return;
    judged.add(id);
    const reason = verdict(url);
    if (reason) bypassed(what, url, reason);
  };
  cdp.on('Preload.prefetchStatusUpdated', (event) => {
    const { key, prefetchUrl } = event as { key: AttemptKey; prefetchUrl: string };
    attempt('PREFETCH', key, prefetchUrl);
  });
  cdp.on('Preload.prerenderStatusUpdated', (event) => {
    const { key } = event as { key: AttemptKey };
    attempt('PRERENDER', key, key.url);
  });
  // Every attempt the document's rules ask for, as they change: for some documents the only report there is.
  cdp.on('Preload.preloadingAttemptSourcesUpdated', (event) => {
    const { preloadingAttemptSources } = event as { preloadingAttemptSources: { key: AttemptKey }[] };
    for (const { key } of preloadingAttemptSources)
      attempt(key.action === 'Prefetch' ? 'PREFETCH' : 'PRERENDER', key, key.url);
  });
  await cdp.send('Preload.enable' as 'Page.enable');
}
