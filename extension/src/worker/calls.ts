// Runs one call the relay sends: asks the human when needed (the relay's verdict, and independently this
// extension's own rule: a tool not marked read-only asks unless the human chose "always allow" here), routes
// it to the most recently used document of the site that has the tool, reopening the site in a background
// tab when none is open, and returns the page's outcome. Nothing here trusts what a page says about itself.

import type { CallOutcome, RelayToExtension } from '../../../src/protocol/siteTools.ts';
import { type DocumentEntry, forgetDocuments, markUsed, routeTo } from './documents.ts';
import { loadSettings, saveSettings } from './settings.ts';

type CallMessage = Extract<RelayToExtension, { t: 'call' }>;
export type Decision = 'approved' | 'denied' | 'always';

export interface PendingApproval {
  readonly taskId: string;
  readonly agent: string;
  readonly site: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly since: number;
}

const waiting = new Map<string, { approval: PendingApproval; decide: (decision: Decision) => void }>();

export function pendingApprovals(): PendingApproval[] {
  return [...waiting.values()].map((entry) => entry.approval);
}

export function decide(taskId: string, decision: Decision): boolean {
  const entry = waiting.get(taskId);
  if (!entry) return false;
  entry.decide(decision);
  return true;
}

function showBadge(): void {
  const count = waiting.size;
  chrome.action.setBadgeText({ text: count ? String(count) : '' }).catch(() => undefined);
  chrome.action.setBadgeBackgroundColor({ color: '#b3261e' }).catch(() => undefined);
}

function askHuman(message: CallMessage): Promise<Decision> {
  return new Promise<Decision>((resolve) => {
    const finish = (decision: Decision): void => {
      clearTimeout(timer);
      waiting.delete(message.taskId);
      showBadge();
      resolve(decision);
    };
    const timer = setTimeout(() => finish('denied'), message.deadlineMs);
    const approval = {
      taskId: message.taskId,
      agent: message.agent,
      site: message.site,
      tool: message.tool,
      args: message.args,
      since: Date.now(),
    };
    waiting.set(message.taskId, { approval, decide: finish });
    showBadge();
  });
}

export function cancelApproval(taskId: string): void {
  decide(taskId, 'denied');
}

const failure = (
  code: Extract<CallOutcome, { ok: false }>['error']['code'],
  message: string,
): CallOutcome => ({
  ok: false,
  error: { code, message },
});

export async function runCall(
  message: CallMessage,
  report: (decision: Decision) => void,
): Promise<CallOutcome> {
  const settings = await loadSettings();
  const site = settings.sites[message.site];
  if (!site) return failure('not_shared', `${message.site} is not shared from this browser.`);
  const tool = site.tools.find((t) => t.name === message.tool);
  const alwaysHere = settings.always.includes(`${message.site} ${message.tool}`);
  if (message.ask || (!tool?.readOnly && !alwaysHere)) {
    const decision = await askHuman(message);
    report(decision);
    if (decision === 'denied')
      return failure('denied', 'The human denied this call (or did not answer in time).');
    if (decision === 'always' && !alwaysHere)
      await saveSettings({ always: [...(await loadSettings()).always, `${message.site} ${message.tool}`] });
  }
  const deadline = Date.now() + message.deadlineMs;
  for (let attempt = 0; attempt < 2; attempt++) {
    const target =
      (await routeTo(message.site, message.tool)) ??
      (await reopen(message.site, site.url, message.tool, deadline));
    if (!target)
      return failure(
        'no_tab',
        `No tab of ${message.site} offers "${message.tool}" (the site was reopened in the background and did not register it in time).`,
      );
    await markUsed(target.documentId);
    const delivered = await deliver(target, message, deadline);
    if (delivered !== 'not_delivered') return delivered;
    await forgetDocuments((entry) => entry.documentId === target.documentId);
  }
  return failure('no_tab', `The tabs of ${message.site} went away before the call reached them.`);
}

async function deliver(
  target: DocumentEntry,
  message: CallMessage,
  deadline: number,
): Promise<CallOutcome | 'not_delivered'> {
  const request = { type: 'call' as const, callId: message.taskId, name: message.tool, args: message.args };
  const timeout = new Promise<CallOutcome>((resolve) =>
    setTimeout(
      () => resolve(failure('timeout', 'The page did not answer in time; the outcome is unknown.')),
      Math.max(0, deadline - Date.now()),
    ),
  );
  const answer = chrome.tabs
    .sendMessage(target.tabId, request, { documentId: target.documentId })
    .then(
      (outcome: CallOutcome | undefined) =>
        outcome ?? failure('no_tab', 'The page went away during the call; the outcome is unknown.'),
    )
    .catch((error: unknown): CallOutcome | 'not_delivered' => {
      const text = String(error);
      // Nothing received the message: safe to try another tab. Otherwise the page may have run it.
      if (/Receiving end does not exist|No tab with id|Invalid document/i.test(text)) return 'not_delivered';
      return failure('no_tab', `The page went away during the call (${text}); the outcome is unknown.`);
    });
  return Promise.race([answer, timeout]);
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
