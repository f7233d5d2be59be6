// What the extension remembers: the pairing (relay URL, credential, workspace), the sites the human shares
// with their last known tools, and the "always allow" choices (chrome.storage.local, survives restarts).

import type { SiteTool } from '../../../src/protocol/siteTools.ts';

export interface SharedSite {
  url: string;
  tools: SiteTool[];
}

export interface Settings {
  relayUrl?: string;
  credential?: string;
  workspace?: string;
  sites: Record<string, SharedSite>;
  /** "origin tool" pairs the human chose to always allow. */
  always: string[];
}

export async function loadSettings(): Promise<Settings> {
  const stored = (await chrome.storage.local.get([
    'relayUrl',
    'credential',
    'workspace',
    'sites',
    'always',
  ])) as Partial<Settings>;
  return { ...stored, sites: stored.sites ?? {}, always: stored.always ?? [] };
}

export async function saveSettings(patch: Partial<Settings>): Promise<void> {
  await chrome.storage.local.set(patch);
}

export async function forgetPairing(): Promise<void> {
  await chrome.storage.local.remove(['relayUrl', 'credential', 'workspace']);
}
