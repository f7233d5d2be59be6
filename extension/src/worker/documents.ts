// The documents (tab + documentId) of shared sites that expose tools, kept in chrome.storage.session so a
// restarted service worker still knows them. Routing picks the most recently used document of the origin that
// has the tool; a cross-site navigation may announce the new document before the old one says it is gone,
// so entries are per document, never per tab.

import type { SiteTool } from '../../../src/protocol/siteTools.ts';

export interface DocumentEntry {
  readonly documentId: string;
  readonly tabId: number;
  readonly origin: string;
  readonly url: string;
  readonly tools: SiteTool[];
  lastUsed: number;
}

type Registry = Record<string, DocumentEntry>;

// Loaded once per worker life, then mutated in memory (one thread: no lost updates) and written through.
let loaded: Promise<Registry> | undefined;
function registry(): Promise<Registry> {
  loaded ??= chrome.storage.session
    .get('documents')
    .then((stored) => (stored.documents as Registry | undefined) ?? {});
  return loaded;
}

function persist(current: Registry): void {
  chrome.storage.session.set({ documents: current }).catch(() => undefined);
}

export async function announceDocument(entry: Omit<DocumentEntry, 'lastUsed'>): Promise<void> {
  const current = await registry();
  current[entry.documentId] = { ...entry, lastUsed: current[entry.documentId]?.lastUsed ?? Date.now() };
  persist(current);
}

export async function forgetDocuments(match: (entry: DocumentEntry) => boolean): Promise<void> {
  const current = await registry();
  for (const [id, entry] of Object.entries(current)) if (match(entry)) delete current[id];
  persist(current);
}

export async function documentsOf(origin: string): Promise<DocumentEntry[]> {
  return Object.values(await registry()).filter((entry) => entry.origin === origin);
}

export async function documentById(documentId: string): Promise<DocumentEntry | undefined> {
  return (await registry())[documentId];
}

/** The most recently used document of the origin exposing the tool. */
export async function routeTo(origin: string, tool: string): Promise<DocumentEntry | undefined> {
  const candidates = (await documentsOf(origin)).filter((entry) => entry.tools.some((t) => t.name === tool));
  candidates.sort((a, b) => b.lastUsed - a.lastUsed);
  return candidates[0];
}

/** Recency decides routing; written out a moment later, not on each call's path. */
export async function markUsed(documentId: string): Promise<void> {
  const current = await registry();
  const entry = current[documentId];
  if (!entry) return;
  entry.lastUsed = Date.now();
  if (persisting) return;
  persisting = true;
  setTimeout(() => {
    persisting = false;
    persist(current);
  }, 1000);
}

let persisting = false;
