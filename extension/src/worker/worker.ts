// The extension's service worker: keeps the list of documents exposing tools on shared sites, reports the
// shared sites to the relay, runs the relay's calls (calls.ts) and answers the popup. It trusts only what
// the browser says about a sender (sender.origin, sender.documentId, sender.tab), never what a page claims.

import type {
  ActivityEntry,
  PopupRequest,
  RelayToExtension,
  SharedSiteState,
  SiteTool,
  TabToWorker,
} from '../../../src/protocol/siteTools.ts';
import {
  askFromRelay,
  cancelApproval,
  decide,
  locate,
  pendingApprovals,
  runCall,
  useRelayRules,
} from './calls.ts';
import { announceDocument, documentsOf, forgetDocuments } from './documents.ts';
import type { PopupReply, PopupState } from './popupState.ts';
import { RelayLink } from './relayLink.ts';
import { forgetPairing, loadSettings, saveSettings } from './settings.ts';
import { injectIntoOpenTabs, isShareable, syncContentScripts } from './sharing.ts';

let activity: ActivityEntry[] = [];
const link = new RelayLink(onRelayMessage, () => void reportSites());

function onRelayMessage(message: RelayToExtension): void {
  if (message.t === 'welcome') {
    activity = [...message.activity];
    useRelayRules(message.rules ?? []);
  } else if (message.t === 'activity') activity = [...activity, message.entry].slice(-50);
  else if (message.t === 'cancel') cancelApproval(message.taskId);
  else if (message.t === 'locate')
    void locate(message).then((answer) => link.send({ t: 'located', taskId: message.taskId, ...answer }));
  else if (message.t === 'ask')
    void askFromRelay(message).then((decision) =>
      link.send({ t: 'decision', taskId: message.taskId, decision }),
    );
  else if (message.t === 'call')
    void runCall(message, (decision) => link.send({ t: 'decision', taskId: message.taskId, decision })).then(
      (outcome) => link.send({ t: 'outcome', taskId: message.taskId, outcome }),
    );
}

async function sharedSiteStates(): Promise<SharedSiteState[]> {
  const settings = await loadSettings();
  const states: SharedSiteState[] = [];
  for (const [origin, site] of Object.entries(settings.sites)) {
    const documents = await documentsOf(origin);
    states.push({
      origin,
      url: site.url,
      tools: site.tools,
      openTabs: new Set(documents.map((d) => d.tabId)).size,
    });
  }
  return states;
}

async function reportSites(): Promise<void> {
  link.send({ t: 'sites', sites: await sharedSiteStates() });
}

/** Connects while at least one site is shared, disconnects otherwise. */
async function ensureLink(): Promise<void> {
  const settings = await loadSettings();
  link.want(Object.keys(settings.sites).length > 0 && !!settings.credential);
}

/** A site's tools are those of its open documents; with none open, the last ones seen. */
async function refreshSiteTools(origin: string, url?: string): Promise<void> {
  const settings = await loadSettings();
  const site = settings.sites[origin];
  if (!site) return;
  const documents = await documentsOf(origin);
  if (documents.length) {
    const byName = new Map<string, SiteTool>();
    for (const document of documents) for (const tool of document.tools) byName.set(tool.name, tool);
    site.tools = [...byName.values()];
  }
  if (url) site.url = url;
  await saveSettings({ sites: settings.sites });
  await reportSites();
}

async function onTabMessage(message: TabToWorker, sender: chrome.runtime.MessageSender): Promise<void> {
  const origin = sender.origin;
  const settings = await loadSettings();
  if (
    !origin ||
    !settings.sites[origin] ||
    sender.frameId !== 0 ||
    !sender.documentId ||
    sender.tab?.id === undefined
  )
    return;
  if (message.type === 'tools' && Array.isArray(message.tools)) {
    await announceDocument({
      documentId: sender.documentId,
      tabId: sender.tab.id,
      origin,
      url: sender.url ?? origin,
      tools: withinLimits(message.tools),
    });
    await refreshSiteTools(origin, sender.url);
  } else if (message.type === 'gone') {
    await forgetDocuments((entry) => entry.documentId === sender.documentId);
    await refreshSiteTools(origin);
  }
  await ensureLink();
}

/** A page decides what it announces: keep it to what fits the relay's messages (oversized tools are dropped). */
function withinLimits(tools: readonly SiteTool[]): SiteTool[] {
  return tools.filter((tool) => JSON.stringify(tool).length <= maxToolBytes).slice(0, maxToolsPerPage);
}

const maxToolBytes = 16 * 1024;
const maxToolsPerPage = 50;

async function popupState(tabId: number | undefined): Promise<PopupState> {
  const settings = await loadSettings();
  const tab = tabId !== undefined ? await chrome.tabs.get(tabId).catch(() => undefined) : undefined;
  const origin = tab?.url && isShareable(tab.url) ? new URL(tab.url).origin : '';
  const sites = await sharedSiteStates();
  return {
    paired: !!settings.credential,
    relayUrl: settings.relayUrl ?? '',
    workspace: settings.workspace ?? '',
    link: { status: link.status, error: link.lastError },
    current:
      tab?.id !== undefined
        ? {
            tabId: tab.id,
            origin,
            shareable: !!origin,
            shared: !!settings.sites[origin],
            tools: settings.sites[origin]?.tools ?? [],
          }
        : undefined,
    sites: sites.map((s) => ({ origin: s.origin, tools: s.tools.length, openTabs: s.openTabs })),
    pending: pendingApprovals(),
    activity,
  };
}

async function onPopupRequest(request: PopupRequest): Promise<PopupState> {
  if (request.type === 'pair') await pairWith(request.relayUrl, request.code);
  if (request.type === 'unpair') {
    link.close();
    await forgetPairing();
  }
  if (request.type === 'share') await share(request.tabId);
  if (request.type === 'unshare') await unshare(request.origin);
  if (request.type === 'decide') decide(request.taskId, request.decision);
  await ensureLink();
  return popupState(request.type === 'state' || request.type === 'share' ? request.tabId : undefined);
}

async function pairWith(relayUrl: string, code: string): Promise<void> {
  const base = relayUrl.trim().replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+$/.test(base)) throw new Error('The relay URL looks like http://127.0.0.1:8787');
  const response = await fetch(`${base}/pair`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
    signal: AbortSignal.timeout(10_000),
  }).catch(() => {
    throw new Error(`No relay answers at ${base}: is \`tabward relay\` running?`);
  });
  const body = (await response.json().catch(() => ({}))) as {
    credential?: string;
    workspace?: string;
    error?: string;
  };
  if (!response.ok || !body.credential)
    throw new Error(body.error ?? `The relay answered ${response.status}.`);
  link.close();
  await saveSettings({ relayUrl: base, credential: body.credential, workspace: body.workspace ?? '' });
}

async function share(tabId: number): Promise<void> {
  const tab = await chrome.tabs.get(tabId);
  if (!isShareable(tab.url) || !tab.url) throw new Error('Only http and https pages can be shared.');
  const origin = new URL(tab.url).origin;
  const settings = await loadSettings();
  if (!settings.credential) throw new Error('Pair with a relay first.');
  settings.sites[origin] = { url: tab.url, tools: settings.sites[origin]?.tools ?? [] };
  await saveSettings({ sites: settings.sites });
  await syncContentScripts(Object.keys(settings.sites));
  await injectIntoOpenTabs(origin);
}

async function unshare(origin: string): Promise<void> {
  const settings = await loadSettings();
  delete settings.sites[origin];
  await saveSettings({ sites: settings.sites });
  await syncContentScripts(Object.keys(settings.sites));
  await forgetDocuments((entry) => entry.origin === origin);
  await reportSites();
}

function fromExtensionPage(sender: chrome.runtime.MessageSender): boolean {
  return sender.id === chrome.runtime.id && !!sender.url?.startsWith(chrome.runtime.getURL(''));
}

chrome.runtime.onMessage.addListener((message: unknown, sender, reply) => {
  if (fromExtensionPage(sender)) {
    onPopupRequest(message as PopupRequest).then(
      (state) => reply({ ok: true, state } satisfies PopupReply),
      (error: unknown) =>
        reply({
          ok: false,
          error: error instanceof Error ? error.message : String(error),
        } satisfies PopupReply),
    );
    return true;
  }
  if (sender.tab) void onTabMessage(message as TabToWorker, sender);
  return false;
});

// A new document in a tab retires the tab's other documents: one put in the back/forward cache cannot answer,
// and its "gone" sent during pagehide may never arrive. A restore commits its own documentId again and the
// bridge announces it on pageshow.
chrome.webNavigation.onCommitted.addListener((details) => {
  if (details.frameId !== 0) return;
  void forgetDocuments(
    (entry) => entry.tabId === details.tabId && entry.documentId !== details.documentId,
  ).then(() => reportSites());
});

chrome.tabs.onRemoved.addListener((tabId) => {
  void forgetDocuments((entry) => entry.tabId === tabId).then(() => reportSites());
});

chrome.alarms.create('tabward-keepalive', { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(() => void ensureLink());
void ensureLink();
