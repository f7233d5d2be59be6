// Helpers the tool files share: finding the tab and element a call targets, running page work under a
// deadline, navigating with login-wall detection, and the short status line tools answer with.

import { z } from 'zod';
import { translateBrowserError, withDeadline } from '../browser/deadline.ts';
import { describeDownload } from '../browser/downloads.ts';
import {
  forgetLookups,
  frameChain,
  type KnownToAgent,
  type ResolvedElement,
  resolveRef,
  takeLookup,
} from '../browser/elements.ts';
import { collectLoginFacts } from '../browser/loginFacts.ts';
import type { TrackedPage } from '../browser/pages.ts';
import { swallow } from '../core/debug.ts';
import { destructiveReason } from '../core/destructive.ts';
import { quotedForDisplay } from '../core/displayText.ts';
import { TabwardError } from '../core/errors.ts';
import { classifyLoginWall } from '../core/loginWall.ts';
import type { ToolContext, ToolResult, ToolTarget } from './tool.ts';
import { text } from './tool.ts';

/**
 * The `snapshot` option of the tools after which an agent usually reads the page (see snapshotAfter in
 * tools/runner.ts): the tab's snapshot comes with the result, which saves the agent a turn.
 */
export const snapshotOption = () => z.boolean().optional().describe('also return the snapshot');

export async function pageTarget(context: ToolContext, pageId: string | undefined): Promise<ToolTarget> {
  const tab = await context.session.target(pageId);
  return { tab, frames: frameChain(tab.page.mainFrame()) };
}

export async function elementTarget(
  context: ToolContext,
  pageId: string | undefined,
  ref: string,
  keyPress = false,
): Promise<ToolTarget> {
  const tab = await context.session.target(pageId);
  const passwordsKnown = knownBy(context);
  const element = await resolveRef(tab, ref, context.timeoutMs, keyPress, passwordsKnown);
  return {
    tab,
    passwordsKnown,
    frames: element.frames,
    // The name the page shows now: the human judges what will be clicked, not what the snapshot said.
    element: { role: element.info.role, name: element.liveName },
    effects: element.effects,
    fingerprints: { [ref]: element.fingerprint },
    ...(element.frames[0] ? { refFrames: { [ref]: element.frames[0] } } : {}),
    ...(element.secretKind ? { secretFields: { [ref]: element.secretKind } } : {}),
  };
}

/** What the client's agent knows of a value (browser/elements.ts KnownToAgent): a literal it typed, a secret's. */
export function knownBy(context: ToolContext): KnownToAgent {
  return (value) =>
    context.secrets.typedHere(value) ? 'typed' : context.secrets.nameOf(value) ? 'declared' : undefined;
}

/**
 * A literal typed into a password or one-time-code field is a secret from the moment the call is judged: the
 * question, the audit record, its recipe and every later result show it masked, as a declared secret would be.
 */
export function literalIntoSecretField(
  context: ToolContext,
  target: ToolTarget,
  ref: string,
  value: string | undefined,
): void {
  if (value !== undefined && target.secretFields?.[ref]) context.secrets.redactTyped(value);
}

/** The placeholder a saved recipe types in a password field the agent filled with a literal. */
export function secretFieldPlaceholder(kind: string): string {
  return kind === 'one-time-code' ? 'ONE_TIME_CODE' : 'PASSWORD';
}

/** Roles of fields a key goes into: their label says what the value is, not what pressing there does. */
export const typingRoles = new Set(['textbox', 'searchbox', 'combobox', 'listbox', 'spinbutton']);

/**
 * The target with the guard's destructive fact: the label a person reads on what the action activates (none when
 * it types into a field) or a place it sends to that reads as delete, pay, refund... A site grant given for "Add
 * to cart" must not answer for "Delete my account" on the same origin.
 */
export function judgedDestructive(target: ToolTarget, label: string): ToolTarget {
  const reason = destructiveReason(label, target.effects ?? []);
  return reason ? { ...target, looksDestructive: reason } : target;
}

/**
 * The element the guard judged, checked to be still that element just before acting: same live name, tag, frame
 * and effects. A page that renamed the button or changed its form's action between the question and the click
 * gets nothing done. The call's last look (made after any approval) is used as it is when the tab has neither
 * navigated nor run an action since; otherwise the ref is looked up again and compared.
 */
export async function resolveJudged(
  tab: TrackedPage,
  ref: string,
  target: ToolTarget,
  timeoutMs: number,
  keyPress = false,
): Promise<ResolvedElement> {
  const judged = target.fingerprints?.[ref];
  const looked = takeLookup(tab, ref, judged, keyPress);
  if (looked) return looked;
  const element = await resolveRef(tab, ref, timeoutMs, keyPress, target.passwordsKnown);
  if (judged !== undefined && judged !== element.fingerprint) {
    throw new TabwardError(
      'rejected',
      `The element ${ref} changed after it was checked (now ${element.info.role} "${element.liveName}"); nothing was done.`,
      'Take a new snapshot and try again.',
    );
  }
  return element;
}

export function requireTab(target: ToolTarget): TrackedPage {
  if (!target.tab) throw new TabwardError('internal', 'This tool needs a tab but none was resolved.');
  return target.tab;
}

/**
 * Runs page work under the deadline. A dialog opened by the action is not a failure: the action happened,
 * and the agent is told to answer the dialog.
 */
export async function runOnPage(
  tab: TrackedPage,
  what: string,
  timeoutMs: number,
  work: () => Promise<unknown>,
): Promise<string> {
  const downloadsFrom = tab.downloads?.mark();
  const acted = tab.beginAction();
  try {
    const line = await workIn(tab, what, timeoutMs, work);
    acted();
    return withDownloads(line, tab, downloadsFrom, timeoutMs);
  } finally {
    acted();
  }
}

async function workIn(
  tab: TrackedPage,
  what: string,
  timeoutMs: number,
  work: () => Promise<unknown>,
): Promise<string> {
  tab.assertUsable();
  tab.stopIdleWork();
  forgetLookups(tab);
  try {
    await withDeadline(work(), timeoutMs, what, tab.interrupted);
    return statusLine(tab);
  } catch (error) {
    if (error instanceof TabwardError && error.code === 'dialog_open' && tab.dialog) {
      return `${what} done. ${error.message} Answer it with handle_dialog.`;
    }
    throw translateBrowserError(error, what);
  }
}

/** The line, then what the action downloaded (kept, or refused and why), once each file is complete; bounded. */
async function withDownloads(
  line: string,
  tab: TrackedPage,
  from: number | undefined,
  timeoutMs: number,
): Promise<string> {
  if (!tab.downloads || from === undefined) return line;
  const files = await tab.downloads.since(from, tab.id, timeoutMs);
  return [line, ...files.map(describeDownload)].join('\n');
}

/**
 * runOnPage for actions that may navigate: waits for a navigation they start to load. An action whose
 * navigation request went out but never finished was performed: it is reported as done with what is known (the
 * request sent, the URL now), never as a timeout that invites a retry (a second order, a second payment).
 */
export async function runAction(
  tab: TrackedPage,
  what: string,
  timeoutMs: number,
  work: () => Promise<unknown>,
): Promise<string> {
  const mark = tab.navigationSeq;
  const downloadsFrom = tab.downloads?.mark();
  // Before the action: what its renderer starts from here on is counted (settle skips its wait when nothing was).
  const marks = await tab.markAction();
  // The action runs until what it set off has settled: a download it started then is its own.
  const acted = tab.beginAction();
  try {
    let line: string;
    try {
      line = await workIn(tab, what, timeoutMs, work);
    } catch (error) {
      const sent = tab.navigationsSince(mark);
      if (sent.length > 0 && error instanceof TabwardError && error.code === 'timeout')
        return unsettledLine(tab, sent, timeoutMs);
      throw error;
    }
    if (tab.dialog) return line;
    await tab.settle(timeoutMs, marks);
    acted();
    const sent = tab.navigationsSince(mark);
    if (sent.some((navigation) => navigation.pending)) return unsettledLine(tab, sent, timeoutMs);
    return withDownloads(statusLine(tab), tab, downloadsFrom, timeoutMs);
  } finally {
    acted();
  }
}

function unsettledLine(
  tab: TrackedPage,
  sent: readonly { method: string; url: string; pending: boolean }[],
  timeoutMs: number,
): string {
  const requests = sent
    .map(
      (navigation) =>
        `${navigation.method} ${navigation.url} (${navigation.pending ? 'no answer yet' : 'answered'})`,
    )
    .join(', ');
  return (
    `The action was performed, but the page did not settle within ${timeoutMs} ms: it sent ${requests}. ` +
    `Now: ${statusLine(tab)}. Do not repeat the action unless you mean it to happen twice; ` +
    'use wait_for or take_snapshot to see where it got to.'
  );
}

export function statusLine(tab: TrackedPage): string {
  return `Tab ${tab.id}: ${tab.page.url()}`;
}

/** Navigates and reports where the tab landed, with a login-wall verdict when it looks like one. */
export async function navigateTab(tab: TrackedPage, url: string, context: ToolContext): Promise<ToolResult> {
  const timeoutMs = context.timeoutMs * 2;
  const line = await runOnPage(tab, `Opening ${url}`, timeoutMs, () =>
    tab.page.goto(url, { waitUntil: 'domcontentloaded', timeout: timeoutMs }),
  );
  if (tab.dialog) return { content: [text(line)], readFrom: [tab] };
  // One round trip reads the title and the login-wall facts together.
  const facts = await collectLoginFacts(tab, url, context.timeoutMs).catch(
    swallow('tools', 'common.navigateTab: collectLoginFacts(tab, url, context.timeoutMs)'),
  );
  const title =
    facts?.title ??
    (await withDeadline(tab.page.title(), context.timeoutMs, 'reading the title', tab.interrupted));
  const status = tab.status !== undefined ? ` (HTTP ${tab.status})` : '';
  const summary = `${line} ${shownTitle(title)}${status}`;
  const verdict = facts ? classifyLoginWall(facts) : undefined;
  // An agent acts on the page it opened next: Playwright's script is made ready while it thinks.
  tab.prepareActions();
  // The title is page content: reaching a sensitive page taints like reading it.
  if (!verdict?.isLoginWall) return { content: [text(summary)], readFrom: [tab] };
  return {
    content: [text(`${summary}\nLogin wall: ${verdict.evidence.join('; ')}.`)],
    loginWall: { url, verdict, tab },
    readFrom: [tab],
  };
}

export function checkUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!['http:', 'https:', 'about:', 'data:'].includes(parsed.protocol)) {
      throw new TabwardError('bad_input', `Refusing to open ${parsed.protocol} URLs.`, 'Use an http(s) URL.');
    }
    return parsed.href;
  } catch (error) {
    if (error instanceof TabwardError) throw error;
    throw new TabwardError(
      'bad_input',
      `"${url}" is not an absolute URL.`,
      'Include the scheme, e.g. https://example.com/.',
    );
  }
}

/**
 * A page's title as tool results show it, outside the untrusted block: quoted with its quotes escaped, on one line,
 * invisible and line-breaking characters shown as marks, so that a title cannot close its quotes and add a line
 * of its own (a forged `[agent]` tab, an instruction) to a list_pages result.
 */
export function shownTitle(title: string): string {
  return quotedForDisplay(title, maxTitleChars);
}

const maxTitleChars = 300;
