// The relay's calls, as this browser runs them. `locate` names the document that would run a call (the most
// recently used one of the site that has the tool, reopening the site in a background tab when none is open) and
// its URL right now; `ask` puts the relay's question in the popup, bound to that document and URL; `call` runs it
// on exactly that document. Before running, the extension judges the call itself with the rules it ships plus the
// relay's: a document that moved since it was judged fails the call, and a call that needs approval (a sensitive
// page, or a tool that may change state without "always allow" here) runs only with an approval this popup gave
// for that very document and URL, or else asks here. Nothing here trusts what a page says about itself. A question
// the relay gave up on, or asked over a link that dropped, is withdrawn (the popup says why): an approval never
// outlives its call.

import { argsUnaskable, argsUnaskableHint } from '../../../src/protocol/shownArgs.ts';
import { distrustedHint, SiteRules, trustedReadOnly } from '../../../src/protocol/siteRules.ts';
import type {
  CallOutcome,
  CallTarget,
  CallTiming,
  RelayToExtension,
  WorkerToTab,
} from '../../../src/protocol/siteTools.ts';
import { type DocumentEntry, documentById, forgetDocuments, markUsed, routeTo } from './documents.ts';
import { loadSettings, saveSettings } from './settings.ts';
import { callDocument } from './tabPorts.ts';

type LocateMessage = Extract<RelayToExtension, { t: 'locate' }>;
type AskMessage = Extract<RelayToExtension, { t: 'ask' }>;
type CallMessage = Extract<RelayToExtension, { t: 'call' }>;
export type Decision = 'approved' | 'denied' | 'always';

export interface PendingApproval {
  readonly taskId: string;
  readonly agent: string;
  readonly site: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The document the call would run in, as judged. */
  readonly url: string;
  readonly reason: string;
  readonly sensitive: boolean;
  readonly approveAllAllowed: boolean;
  readonly since: number;
}

let rules = new SiteRules();

/** The relay's rules (sent on connect), added to the defaults this extension ships. */
export function useRelayRules(patterns: readonly string[]): void {
  rules = new SiteRules(Array.isArray(patterns) ? patterns.filter((p) => typeof p === 'string') : []);
}

/** A question taken back before the human answered it, and why: shown in the popup for a while. */
export interface WithdrawnApproval {
  readonly taskId: string;
  readonly agent: string;
  readonly site: string;
  readonly tool: string;
  readonly reason: string;
  readonly at: number;
}

const waiting = new Map<string, { approval: PendingApproval; decide: (decision: Decision) => void }>();
/** What the human approved here, by task: the call may run on this document at this URL only. */
const approvedHere = new Map<string, CallTarget>();
let withdrawn: WithdrawnApproval[] = [];

export function pendingApprovals(): PendingApproval[] {
  return [...waiting.values()].map((entry) => entry.approval);
}

export function withdrawnApprovals(): readonly WithdrawnApproval[] {
  return withdrawn;
}

export function decide(taskId: string, decision: Decision): boolean {
  const entry = waiting.get(taskId);
  if (!entry) return false;
  entry.decide(decision);
  return true;
}

/** The relay gave up on the task: its question is withdrawn (denied), and the popup says why. */
export function cancelApproval(taskId: string, reason: string): void {
  const entry = waiting.get(taskId);
  if (entry) remember(entry.approval, reason);
  decide(taskId, 'denied');
  approvedHere.delete(taskId);
}

/**
 * The link to the relay dropped: the relay answered every call of it already (failed), so no approval given
 * now may run one. Every question is withdrawn, and every approval not yet used forgotten.
 */
export function withdrawAll(reason: string): void {
  for (const [taskId, entry] of [...waiting]) {
    remember(entry.approval, reason);
    decide(taskId, 'denied');
  }
  approvedHere.clear();
}

function remember(approval: PendingApproval, reason: string): void {
  const { taskId, agent, site, tool } = approval;
  withdrawn = [...withdrawn, { taskId, agent, site, tool, reason: String(reason), at: Date.now() }].slice(
    -10,
  );
}

function showBadge(): void {
  const count = waiting.size;
  chrome.action.setBadgeText({ text: count ? String(count) : '' }).catch(() => undefined);
  chrome.action.setBadgeBackgroundColor({ color: '#b3261e' }).catch(() => undefined);
}

const failure = (
  code: Extract<CallOutcome, { ok: false }>['error']['code'],
  message: string,
): Extract<CallOutcome, { ok: false }> => ({ ok: false, error: { code, message } });

/** The document's URL now, or undefined when the tab shows another document (or is gone). */
async function liveUrl(entry: DocumentEntry): Promise<string | undefined> {
  const frame = await chrome.webNavigation
    .getFrame({ tabId: entry.tabId, frameId: 0 })
    .catch(() => undefined);
  if (!frame || frame.documentId !== entry.documentId) return undefined;
  return frame.url;
}

export async function locate(
  message: LocateMessage,
): Promise<{ target: CallTarget } | { error: Extract<CallOutcome, { ok: false }>['error'] }> {
  const settings = await loadSettings();
  const site = settings.sites[message.site];
  if (!site) return failure('not_shared', `${message.site} is not shared from this browser.`);
  const deadline = Date.now() + message.deadlineMs;
  for (let attempt = 0; attempt < 3; attempt++) {
    const entry =
      (await routeTo(message.site, message.tool)) ??
      (await reopen(message.site, site.url, message.tool, deadline));
    if (!entry)
      return failure(
        'no_tab',
        `No tab of ${message.site} offers "${message.tool}" (the site was reopened in the background and did not register it in time).`,
      );
    const url = await liveUrl(entry);
    if (url) return { target: { documentId: entry.documentId, url } };
    await forgetDocuments((known) => known.documentId === entry.documentId);
  }
  return failure('no_tab', `The tabs of ${message.site} went away before a call could be routed to them.`);
}

/** The relay's question, shown in the popup; an approval is remembered for that document and URL only. */
export async function askFromRelay(message: AskMessage): Promise<Decision> {
  // The relay asks only about arguments a question shows whole; one that did not is refused here as well.
  if (argsUnaskable(message.args)) return 'denied';
  const decision = await askHuman(message, message);
  if (decision !== 'denied') approvedHere.set(message.taskId, message.target);
  if (decision === 'always' && message.approveAllAllowed) await rememberAlways(message.site, message.tool);
  return decision;
}

function askHuman(
  message: CallMessage | AskMessage,
  why: Pick<PendingApproval, 'reason' | 'sensitive' | 'approveAllAllowed'>,
): Promise<Decision> {
  return new Promise<Decision>((resolve) => {
    const finish = (decision: Decision): void => {
      clearTimeout(timer);
      waiting.delete(message.taskId);
      showBadge();
      resolve(decision);
    };
    // The relay's own deadline withdraws the question (cancel, with its reason); this one, a little later, is
    // for a relay that went quiet: the question never outlives its call either way.
    const timer = setTimeout(() => {
      remember(
        approval,
        `the call's ${Math.round(message.deadlineMs / 1000)} s ran out here without word from the relay; nothing was run`,
      );
      finish('denied');
    }, message.deadlineMs + 2000);
    const approval: PendingApproval = {
      taskId: message.taskId,
      agent: message.agent,
      site: message.site,
      tool: message.tool,
      args: message.args,
      url: message.target.url,
      reason: why.reason,
      sensitive: why.sensitive,
      approveAllAllowed: why.approveAllAllowed,
      since: Date.now(),
    };
    waiting.get(message.taskId)?.decide('denied');
    waiting.set(message.taskId, { approval, decide: finish });
    showBadge();
  });
}

async function rememberAlways(site: string, tool: string): Promise<void> {
  const { always } = await loadSettings();
  const key = `${site} ${tool}`;
  if (!always.includes(key)) await saveSettings({ always: [...always, key] });
}

/** This extension's own verdict on running the call in that document: why it needs a human, if it does. */
async function ownVerdict(
  message: CallMessage,
  entry: DocumentEntry,
): Promise<{ reason: string; sensitive: boolean } | undefined> {
  const sensitiveRule = rules.match(message.target.url);
  if (sensitiveRule)
    return {
      reason: `the page matches the sensitive rule ${sensitiveRule}: every call asks`,
      sensitive: true,
    };
  const tool = entry.tools.find((t) => t.name === message.tool) ?? { name: message.tool, readOnly: false };
  if (trustedReadOnly(tool)) return undefined;
  const { always } = await loadSettings();
  if (always.includes(`${message.site} ${message.tool}`)) return undefined;
  const distrusted = distrustedHint(tool);
  return {
    reason: distrusted
      ? `${distrusted}: asked as a tool that may change state`
      : 'the site tool may change state (the page does not mark it read-only)',
    sensitive: false,
  };
}

/** What a call came to here, and where its time went. */
export interface CallResult {
  readonly outcome: CallOutcome;
  readonly timing: CallTiming;
}

export async function runCall(
  message: CallMessage,
  report: (decision: Decision) => void,
): Promise<CallResult> {
  const started = performance.now();
  const hops = { tabMs: 0, bridgeMs: 0, pageMs: 0 };
  const outcome = await judgeAndRun(message, report, hops);
  return { outcome, timing: { workerMs: performance.now() - started, ...hops } };
}

type Hops = { tabMs: number; bridgeMs: number; pageMs: number };

async function judgeAndRun(
  message: CallMessage,
  report: (decision: Decision) => void,
  hops: Hops,
): Promise<CallOutcome> {
  const approved = approvedHere.get(message.taskId);
  approvedHere.delete(message.taskId);
  const settings = await loadSettings();
  if (!settings.sites[message.site])
    return failure('not_shared', `${message.site} is not shared from this browser.`);
  const { target } = message;
  const entry = await documentById(target.documentId);
  // Whether the document is still at the URL judged is checked by the document itself as the call starts
  // (deliver): one round trip to the browser fewer, and no gap between the check and the run.
  if (!entry || entry.origin !== message.site)
    return failure(
      'moved',
      `The page judged for this call (${target.url}) is gone: the tab navigated or closed. Nothing was run; call again.`,
    );
  const verdict = await ownVerdict(message, entry);
  if (verdict && approved) {
    if (approved.documentId !== target.documentId || approved.url !== target.url)
      return failure(
        'moved',
        `The human approved this call for ${approved.url}, but it would run in ${target.url}. Nothing was run; call again.`,
      );
  } else if (verdict) {
    // The relay did not ask, but this browser's rules say a human must: ask here, about arguments shown whole.
    const tooLong = argsUnaskable(message.args);
    if (tooLong) return failure('too_large', `${tooLong} ${argsUnaskableHint}`);
    const decision = await askHuman(message, { ...verdict, approveAllAllowed: !verdict.sensitive });
    report(decision);
    if (decision === 'denied')
      return failure('denied', 'The human denied this call (or did not answer in time).');
    if (decision === 'always' && !verdict.sensitive) await rememberAlways(message.site, message.tool);
    const after = await liveUrl(entry);
    if (after !== target.url)
      return failure(
        'moved',
        `The tab moved to ${after ?? 'another page'} while the human decided. Nothing was run.`,
      );
  }
  void markUsed(target.documentId);
  const delivered = await deliver(entry, message, Date.now() + message.deadlineMs, hops);
  if (delivered !== 'not_delivered') return delivered;
  await forgetDocuments((known) => known.documentId === target.documentId);
  return failure(
    'no_tab',
    `The page at ${target.url} went away before the call reached it. Nothing was run.`,
  );
}

/** The page may have run the call: a retry could do it twice (the relay keeps the idempotency key blocked). */
const unknown = (
  code: Extract<CallOutcome, { ok: false }>['error']['code'],
  message: string,
): Extract<CallOutcome, { ok: false }> => ({ ok: false, error: { code, message, unknownOutcome: true } });

async function deliver(
  target: DocumentEntry,
  message: CallMessage,
  deadline: number,
  hops: Hops,
): Promise<CallOutcome | 'not_delivered'> {
  const request: WorkerToTab = {
    type: 'call',
    callId: message.taskId,
    name: message.tool,
    args: message.args,
    url: message.target.url,
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<CallOutcome>((resolve) => {
    timer = setTimeout(
      () => resolve(unknown('timeout', 'The page did not answer in time; the outcome is unknown.')),
      Math.max(0, deadline - Date.now()),
    );
  });
  const sent = performance.now();
  const answer = callDocument(target.tabId, target.documentId, request).then(
    (reply): CallOutcome | 'not_delivered' => {
      hops.tabMs = performance.now() - sent;
      if (reply === 'not_delivered') return reply;
      if (reply === 'gone')
        return unknown('no_tab', 'The page went away during the call; the outcome is unknown.');
      hops.bridgeMs = reply.bridgeMs;
      hops.pageMs = reply.pageMs;
      return reply.outcome;
    },
  );
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens the site in a background tab and waits until its page registers the tool. */
async function reopen(
  origin: string,
  url: string,
  tool: string,
  deadline: number,
): Promise<DocumentEntry | undefined> {
  const tab = await chrome.tabs.create({ url: url || `${origin}/`, active: false });
  const giveUp = Math.min(deadline, Date.now() + 20_000);
  while (Date.now() < giveUp) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const found = await routeTo(origin, tool);
    if (found && found.tabId === tab.id) return found;
  }
  return undefined;
}
