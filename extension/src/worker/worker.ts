// The extension's service worker: keeps the list of documents exposing tools on shared sites, reports the
// shared sites to the relay, runs the relay's calls (calls.ts) and answers the popup. It trusts only what
// the browser says about a sender (sender.origin, sender.documentId, sender.tab), never what a page claims.
// When the link drops, every approval pending is withdrawn (the relay failed those calls already), and an outcome
// that could not be sent is sent on the next link, marked late, for the relay to log.

import {
  type ActivityEntry,
  type ExtensionToRelay,
  encodedBytes,
  maxSocketMessageBytes,
  type PopupRequest,
  type RelayToExtension,
  type SharedSiteState,
  type SiteTool,
  type TabToWorker,
  tooLargeOutcome,
} from '../../../src/protocol/siteTools.ts';
import {
  askFromRelay,
  cancelApproval,
  decide,
  locate,
  pendingApprovals,
  runCall,
  useRelayRules,
  withdrawAll,
  withdrawnApprovals,
} from './calls.ts';
import { announceDocument, documentsOf, forgetDocuments } from './documents.ts';
import type { PopupReply, PopupState } from './popupState.ts';
import { RelayLink } from './relayLink.ts';
import { forgetPairing, loadSettings, saveSettings } from './settings.ts';
import { injectIntoOpenTabs, isShareable, syncContentScripts } from './sharing.ts';
import {
  cappedReport,
  droppedTools,
  forgetSite,
  reportNote,
  reportRefused,
  withinSiteCap,
  withinToolLimits,
} from './siteReport.ts';

let activity: ActivityEntry[] = [];
/** What the human must read about this browser's pairing, newest last (kept for this worker's life). */
let alerts: { at: string; message: string }[] = [];
const link = new RelayLink(onRelayMessage, onLinkOpen, onLinkDrop, (message) =>
  addAlert(new Date().toISOString(), message),
);

function addAlert(at: string, message: string): void {
  alerts = [...alerts, { at, message }].slice(-5);
}
/** Counts the links opened: an outcome of a call that came over an earlier one is late. */
let linkGeneration = 0;
/** Outcomes that found no link: sent on the next one (the relay logs them; an idempotency key learns them). */
let unsent: ExtensionToRelay[] = [];
/** The size of the last site report sent, to know what a "too big" close refused. */
let lastReport = { bytes: 0, generation: -1 };

function onRelayMessage(message: RelayToExtension): void {
  if (message.t === 'welcome') {
    activity = [...message.activity];
    useRelayRules(message.rules ?? []);
  } else if (message.t === 'activity' && Array.isArray(message.entries))
    activity = [...activity, ...message.entries].slice(-50);
  else if (message.t === 'cancel') cancelApproval(message.taskId, message.reason);
  else if (message.t === 'alert') addAlert(String(message.at), String(message.message));
  else if (message.t === 'locate') {
    const started = performance.now();
    void locate(message).then((answer) =>
      link.send({ t: 'located', taskId: message.taskId, ...answer, spentMs: performance.now() - started }),
    );
  } else if (message.t === 'ask')
    void askFromRelay(message).then((decision) =>
      link.send({ t: 'decision', taskId: message.taskId, decision }),
    );
  else if (message.t === 'call') {
    const generation = linkGeneration;
    void runCall(message, (decision) => link.send({ t: 'decision', taskId: message.taskId, decision })).then(
      ({ outcome, timing }) =>
        sendOutcome({
          t: 'outcome',
          taskId: message.taskId,
          outcome,
          timing,
          ...(generation === linkGeneration ? {} : { late: true }),
        }),
    );
  }
}

/** Sends an outcome that fits a message (else says it did not), or keeps it for the next link. */
function sendOutcome(message: Extract<ExtensionToRelay, { t: 'outcome' }>): void {
  const fitting =
    encodedBytes(message) <= maxSocketMessageBytes - 1024
      ? message
      : { ...message, outcome: tooLargeOutcome(encodedBytes(message.outcome)) };
  if (link.send(fitting)) return;
  unsent = [...unsent, { ...fitting, late: true }].slice(-20);
}

function onLinkOpen(): void {
  linkGeneration++;
  void reportSites().then(() => {
    const queued = unsent;
    unsent = [];
    for (const message of queued) if (!link.send(message)) unsent.push(message);
  });
}

/** The relay failed every call of the dropped link: none of their questions may be approved now. */
function onLinkDrop(closeCode: number): void {
  linkGeneration++;
  withdrawAll(
    'the connection to the relay dropped, so the agent was told this call failed; nothing was run. The agent may call again.',
  );
  if (closeCode === 1009 && lastReport.generation === linkGeneration - 1) reportRefused(lastReport.bytes);
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
  const message: ExtensionToRelay = { t: 'sites', sites: cappedReport(await sharedSiteStates()) };
  if (link.send(message)) lastReport = { bytes: encodedBytes(message), generation: linkGeneration };
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
    site.tools = withinSiteCap(origin, [...byName.values()]);
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
      tools: withinToolLimits(origin, message.tools),
    });
    await refreshSiteTools(origin, sender.url);
  } else if (message.type === 'gone') {
    await forgetDocuments((entry) => entry.documentId === sender.documentId);
    await refreshSiteTools(origin);
  }
  await ensureLink();
}

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
    alerts,
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
    withdrawn: withdrawnApprovals(),
    dropped: droppedTools(sites),
    reportNote: reportNote(),
    activity,
  };
}

async function onPopupRequest(request: PopupRequest): Promise<PopupState> {
  if (request.type === 'pair') await pairWith(request.relayUrl, request.code);
  if (request.type === 'unpair') await unpair();
  if (request.type === 'share') await share(request.tabId);
  if (request.type === 'unshare') await unshare(request.origin);
  if (request.type === 'decide') decide(request.taskId, request.decision);
  await ensureLink();
  return popupState(request.type === 'state' || request.type === 'share' ? request.tabId : undefined);
}

/**
 * Unpairs at the relay first (the credential dies there: nobody holding a copy gets tickets any more), then
 * forgets it here. A relay that cannot be told still loses this browser's copy; the human is told how to revoke
 * it at the relay.
 */
async function unpair(): Promise<void> {
  const settings = await loadSettings();
  link.reset();
  alerts = [];
  let refusal: string | undefined;
  if (settings.relayUrl && settings.credential) {
    const response = await fetch(`${settings.relayUrl}/unpair`, {
      method: 'POST',
      headers: { authorization: `Bearer ${settings.credential}` },
      signal: AbortSignal.timeout(10_000),
    }).catch(() => undefined);
    // 401: the relay does not know the credential (revoked already, or another relay's database).
    if (!response || (!response.ok && response.status !== 401))
      refusal = response ? `it answered ${response.status}` : 'it did not answer';
  }
  await forgetPairing();
  if (refusal)
    throw new Error(
      `Unpaired here, but the relay at ${settings.relayUrl} could not be told (${refusal}): its copy of this browser's credential still works. Revoke it there: tabward relay browsers revoke ${settings.browserId ?? 'ID'}${settings.browserId ? '' : ' (the id from tabward relay browsers list)'}.`,
    );
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
    browser?: string;
    error?: string;
  };
  if (!response.ok || !body.credential)
    throw new Error(body.error ?? `The relay answered ${response.status}.`);
  link.reset();
  alerts = [];
  await saveSettings({
    relayUrl: base,
    credential: body.credential,
    workspace: body.workspace ?? '',
    ...(body.browser ? { browserId: body.browser } : {}),
  });
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
  forgetSite(origin);
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
