// Which pages get the bridge and the observer: only the sites the human shares (dynamic content scripts,
// ids sorted so the bridge runs before the observer), and the tabs of a site already open when it is shared.

const bridgeId = 'a-bridge';
const observerId = 'b-observer';

/** A match pattern for exactly this origin's host and port. */
export function matchPattern(origin: string): string {
  const url = new URL(origin);
  return `${url.protocol}//${url.host}/*`;
}

export function isShareable(url: string | undefined): boolean {
  return !!url && /^https?:\/\//.test(url);
}

export async function syncContentScripts(origins: readonly string[]): Promise<void> {
  const existing = await chrome.scripting.getRegisteredContentScripts({ ids: [bridgeId, observerId] });
  if (existing.length) await chrome.scripting.unregisterContentScripts({ ids: existing.map((s) => s.id) });
  if (!origins.length) return;
  const matches = origins.map(matchPattern);
  await chrome.scripting.registerContentScripts([
    {
      id: bridgeId,
      matches,
      js: ['bridge.js'],
      runAt: 'document_start',
      world: 'ISOLATED',
      persistAcrossSessions: true,
    },
    {
      id: observerId,
      matches,
      js: ['observer.js'],
      runAt: 'document_start',
      world: 'MAIN',
      persistAcrossSessions: true,
    },
  ]);
}

/**
 * Puts the bridge into the open tabs of a newly shared site, marked late: it uses native WebMCP only. The
 * MAIN-world observer is never injected late, since page scripts that already ran could have patched what it
 * relies on; those pages expose their tools from the next load on.
 */
export async function injectIntoOpenTabs(origin: string): Promise<void> {
  const tabs = await chrome.tabs.query({ url: matchPattern(origin) });
  for (const tab of tabs) {
    if (tab.id === undefined) continue;
    const target = { tabId: tab.id };
    try {
      await chrome.scripting.executeScript({
        target,
        world: 'ISOLATED',
        func: () => {
          (globalThis as { __tabwardLate?: boolean }).__tabwardLate = true;
        },
      });
      await chrome.scripting.executeScript({ target, files: ['bridge.js'], world: 'ISOLATED' });
    } catch {}
  }
}
