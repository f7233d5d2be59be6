// What the extension remembers: the pairing (relay URL, credential, workspace), the sites the human shares
// with their last known tools, and the "always allow" choices (chrome.storage.local, survives restarts). Read
// once per worker life and kept in memory, written through: every call reads them, and each storage read is a
// round trip to the browser process (the worker is the only writer; a change from elsewhere drops the copy).

import type { SiteTool } from '../../../src/protocol/siteTools.ts';

export interface SharedSite {
  url: string;
  tools: SiteTool[];
}

export interface Settings {
  relayUrl?: string;
  credential?: string;
  workspace?: string;
  /** The relay's id for this browser (`tabward relay browsers list`); absent in pairings made before it was kept. */
  browserId?: string;
  sites: Record<string, SharedSite>;
  /** "origin tool" pairs the human chose to always allow. */
  always: string[];
}

let cached: Promise<Settings> | undefined;

// Also after the worker's own writes: reading again then is correct, only slower, and writes are rare.
chrome.storage.onChanged.addListener((_changes, area) => {
  if (area === 'local') cached = undefined;
});

async function readStored(): Promise<Settings> {
  const stored = (await chrome.storage.local.get([
    'relayUrl',
    'credential',
    'workspace',
    'browserId',
    'sites',
    'always',
  ])) as Partial<Settings>;
  return { ...stored, sites: stored.sites ?? {}, always: stored.always ?? [] };
}

function current(): Promise<Settings> {
  cached ??= readStored();
  return cached;
}

/** A copy the caller may change (and save): the sites map and the list are its own. */
export async function loadSettings(): Promise<Settings> {
  const now = await current();
  return { ...now, sites: { ...now.sites }, always: [...now.always] };
}

export async function saveSettings(patch: Partial<Settings>): Promise<void> {
  const before = await current();
  cached = Promise.resolve({ ...before, ...patch });
  await chrome.storage.local.set(patch);
}

export async function forgetPairing(): Promise<void> {
  const {
    relayUrl: _url,
    credential: _credential,
    workspace: _workspace,
    browserId: _id,
    ...rest
  } = await current();
  cached = Promise.resolve(rest);
  await chrome.storage.local.remove(['relayUrl', 'credential', 'workspace', 'browserId']);
}
