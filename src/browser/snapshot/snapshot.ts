// Taking a snapshot of a tab: Chromium's accessibility tree of each of its documents (axRead.ts), rendered
// compact, with the values of password fields masked and the refs remembered for stale-ref checks and for
// resolving them to exactly the element shown (refLocators.ts). The tree comes from the browser, the password values
// beside it from tabward's own isolated world: both out of the page's reach. Values are masked in the tree itself,
// in every form the tree shows them, before it is rendered or its refs are remembered.

import { setTimeout as sleep } from 'node:timers/promises';
import type { Frame, Page } from 'playwright-core';
import { swallow } from '../../core/debug.ts';
import { TabwardError } from '../../core/errors.ts';
import { spellings } from '../../core/redact.ts';
import { withDeadline } from '../deadline.ts';
import { loadedUrlOf, navigationRequested } from '../loadedUrls.ts';
import type { TrackedPage } from '../pages.ts';
import { addressOf, readTab, type TabRead } from './axRead.ts';
import { normalized } from './axToAria.ts';
import { DocumentChanged } from './documentReads.ts';
import { FrameFinder, type FrameScope } from './frameScopes.ts';
import type { ReadSession } from './readSessions.ts';
import { type AriaNode, isActionable, refsIn, relativeUrl, renderSnapshot } from './snapshotFormat.ts';

export interface SnapshotOptions {
  readonly ref?: string;
  readonly query?: string;
  readonly maxTokens?: number;
  readonly allRefs?: boolean;
  readonly timeoutMs: number;
  /** Redacts secrets from the text (before a query is matched against it). */
  readonly redact?: (text: string) => string;
}

const same = (text: string) => text;

export interface Snapshot {
  readonly text: string;
  /** The main document's title, read in the same round trip as the password values. */
  readonly title: string;
}

export async function captureSnapshot(tracked: TrackedPage, options: SnapshotOptions): Promise<Snapshot> {
  tracked.assertUsable();
  const { page } = tracked;
  tracked.stopIdleWork();
  const work = async () => {
    const read = await treeWithPasswords(tracked, options.timeoutMs);
    const forms = shownForms(rememberPasswords(tracked, read.passwords), read.passwords);
    const tree = maskTree(read.tree, forms, page.url());
    const title = maskText(read.title, forms);
    if (tracked.refsDocumentSeq !== tracked.documentSeq) {
      tracked.refs = new Map();
      tracked.shortRefs = new Map();
      tracked.handedOut = new Set();
      tracked.refsDocumentSeq = tracked.documentSeq;
    }
    const shortTree = shortenRefs(tree, tracked, read.frames, options.allRefs ?? false);
    const text = renderSnapshot(shortTree, {
      pageUrl: page.url(),
      ...(options.ref ? { ref: options.ref } : {}),
      ...(options.query ? { query: options.query } : {}),
      ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
      ...(options.allRefs ? { allRefs: true } : {}),
      hide: options.redact ?? same,
    });
    // Only what the agent was shown may be acted on: a query, a subtree or a budget shows part of the tree.
    for (const ref of refsIn(text)) tracked.handedOut.add(ref);
    // The agent acts on what it has just read: Playwright's script is made ready while it thinks.
    tracked.prepareActions();
    return { text, title };
  };
  return withDeadline(work(), options.timeoutMs, 'take_snapshot', tracked.interrupted);
}

/** Reads of the tree and the values, each interrupted by a frame's navigation, before the snapshot gives up. */
const maxReads = 3;

/**
 * The accessibility tree of every document of the tab and, beside it, the values in their password fields. A
 * frame that navigates while they are read (a frame loading, a page reloading itself) could give a tree of one
 * document and values of another: the pair is read again once the frames that navigated have their documents, and
 * after `maxReads` the snapshot fails rather than go out unchecked.
 */
async function treeWithPasswords(tracked: TrackedPage, timeoutMs: number): Promise<TabRead> {
  const { page } = tracked;
  const session = await tracked.cdpSession();
  await framesLoaded(tracked, session, timeoutMs);
  for (let attempt = 1; ; attempt++) {
    const navigatedFrames = new Set<Frame>();
    let onNavigated: (frame: Frame) => void = () => undefined;
    const navigated = new Promise<'navigated'>((resolve) => {
      onNavigated = (frame) => {
        navigatedFrames.add(frame);
        resolve('navigated');
      };
    });
    page.on('framenavigated', onNavigated);
    const read = readTab(page, session, timeoutMs);
    // What a navigation interrupted is nobody's to wait for any more.
    read.catch(swallow('browser', 'snapshot.treeWithPasswords: a read a navigation interrupted'));
    try {
      const outcome = await Promise.race([read.catch((error: unknown) => ({ error })), navigated]);
      if (outcome !== 'navigated') {
        if (!('error' in outcome)) return outcome;
        // A document was replaced while it was read (or a frame failed, loading) before Playwright told of it: as
        // a navigation of every frame.
        if (!(outcome.error instanceof DocumentChanged)) throw outcome.error;
        for (const frame of page.frames()) navigatedFrames.add(frame);
      }
    } finally {
      page.off('framenavigated', onNavigated);
    }
    if (attempt === maxReads)
      throw new TabwardError(
        'blocked',
        'The page kept navigating while the snapshot was taken, so its password fields could not be read beside the tree; nothing was shown.',
        'Wait until the page settles (wait_for), then call take_snapshot again.',
      );
    // The caller's deadline bounds this wait. A frame whose new document has not committed yet still reports the
    // old one's load state: a pause, longer each time, gives it the time to.
    await Promise.all([
      sleep(100 * attempt),
      ...[...navigatedFrames].map((frame) =>
        frame
          .waitForLoadState('domcontentloaded', { timeout: timeoutMs })
          .catch(
            swallow(
              'browser',
              'snapshot.treeWithPasswords: frame.waitForLoadState("domcontentloaded", { timeout: timeoutMs })',
            ),
          ),
      ),
    ]);
  }
}

/** How long the first snapshot of a document waits for a frame whose server has not answered (one that never does). */
const frameAnswerWaitMs = 1000;
/**
 * How long it waits for a frame whose server has answered: only the browser's work is left (a renderer process to
 * start for a cross-site frame, the commit), which a loaded machine stretches to seconds.
 */
const frameCommitWaitMs = 3000;
/** The document of each tab whose frames were waited for: a frame that never loads costs the wait once. */
const framesWaitedIn = new WeakMap<TrackedPage, number>();

/**
 * Waits (bounded, once a document) for the frames of the tab that have not parsed a document yet. A snapshot taken
 * right after a navigation (which ends when the main document is parsed) otherwise reads while the frames commit
 * theirs, and each commit interrupts the read: it is read again after a pause (treeWithPasswords), which failed a
 * page of eight cross-site frames ("kept navigating") and read others empty. A frame with no URL has not committed
 * its first document: it is waited for until it has one if it asked for one (a lazy frame out of view has not:
 * waiting for it cost every such page 500 ms), the longer once its server has answered (a commit 60-340 ms after the
 * response on an idle machine, 1.1 s for the eighth of eight sites: a renderer process is started for each).
 */
async function framesLoaded(tracked: TrackedPage, session: ReadSession, timeoutMs: number): Promise<void> {
  if (framesWaitedIn.get(tracked) === tracked.documentSeq) return;
  framesWaitedIn.set(tracked, tracked.documentSeq);
  const { page } = tracked;
  const started = Date.now();
  const children = () => page.frames().filter((frame) => frame !== page.mainFrame() && !frame.isDetached());
  if (children().length === 0) return;
  let waitMs = 0;
  for (;;) {
    const loading = children().filter((frame) => frame.url() === '' && navigationRequested(frame));
    if (loading.length === 0) break;
    const answered = loading.some((frame) => loadedUrlOf(frame) !== undefined);
    waitMs = Math.max(waitMs, Math.min(answered ? frameCommitWaitMs : frameAnswerWaitMs, timeoutMs / 3));
    if (Date.now() - started >= waitMs) break;
    await sleep(15);
  }
  const left = started + Math.max(waitMs, Math.min(frameAnswerWaitMs, timeoutMs / 3)) - Date.now();
  if (left <= 0) return;
  // The sessions of the out-of-process frames, which the read opens otherwise, are opened meanwhile (kept per frame).
  // A tab closed meanwhile fails it: read as no frames, as the read itself does (an unhandled failure here was
  // an "internal error" line in the CLI, and failed a test under load).
  void new FrameFinder(page, session)
    .outOfProcess()
    .catch(swallow('browser', 'snapshot.framesLoaded: the frames’ sessions (the tab went away)'));
  // A frame with no document yet has no load state to wait for (a lazy frame's wait lasted until the deadline).
  const committed = children().filter((frame) => frame.url() !== '');
  await Promise.all(
    committed.map((frame) =>
      frame
        .waitForLoadState('domcontentloaded', { timeout: left })
        .catch(swallow('browser', 'snapshot.framesLoaded: a frame still loading when the wait ended')),
    ),
  );
}

/** The password values seen in each tab's current document: a field the page turns to type=text keeps its mask. */
const seenInDocument = new WeakMap<TrackedPage, { documentSeq: number; values: Set<string> }>();
const maxRemembered = 200;
/** Password values a snapshot masks in every form the redactor knows, not only as they are (shownForms). */
const maxSpelledOut = 12;

function rememberPasswords(tracked: TrackedPage, values: readonly string[]): string[] {
  trackedOf.set(tracked.page, tracked);
  let seen = seenInDocument.get(tracked);
  if (seen?.documentSeq !== tracked.documentSeq) {
    seen = { documentSeq: tracked.documentSeq, values: new Set() };
    seenInDocument.set(tracked, seen);
  }
  for (const value of values) {
    seen.values.delete(value);
    seen.values.add(value);
  }
  // A page that keeps writing new values into a field does not grow this without bound; the newest stay.
  for (const oldest of seen.values) {
    if (seen.values.size <= maxRemembered) break;
    seen.values.delete(oldest);
  }
  return [...seen.values];
}

/** The password values the tab's snapshots of its current document read (in every frame and shadow root). */
export function passwordsSeen(tracked: TrackedPage): string[] {
  const seen = seenInDocument.get(tracked);
  return seen?.documentSeq === tracked.documentSeq ? [...seen.values] : [];
}

/** The same, by the tab's Playwright page (the network hooks know a request's page, not its TrackedPage). */
const trackedOf = new WeakMap<Page, TrackedPage>();
export function passwordsSeenOn(page: Page | undefined): string[] {
  const tracked = page ? trackedOf.get(page) : undefined;
  return tracked ? passwordsSeen(tracked) : [];
}

/**
 * Each value as typed and as the tree shows it, longest first, in any case (a page's style can show text in capitals:
 * text-transform). A form of only whitespace is not one: it cannot be told apart from the spaces around any word.
 */
function shownForms(values: readonly string[], readNow: readonly string[]): RegExp[] {
  const forms = new Set<string>();
  const patterns: RegExp[] = [];
  for (const value of values) for (const form of [value, normalized(value)]) if (form.trim()) forms.add(form);
  // And as the redactor hides a secret (reversed, spaced out, base64, hex, percent-encoded): a page holding an
  // autofilled password showed it to the agent so (an attack review). Each value's forms cost a dozen passes over
  // every string of the tree: a page of 200 password fields made a snapshot take 12 s, so only the first values of
  // this read, then the newest remembered, are spelled out (docs/security.md).
  const spelledOut = [...new Set([...readNow, ...[...values].reverse()])].slice(0, maxSpelledOut);
  for (const value of spelledOut) {
    const spelled = spellings(value);
    for (const form of spelled.texts) if (form.trim()) forms.add(form);
    patterns.push(...spelled.patterns);
  }
  return [
    ...[...forms]
      .sort((a, b) => b.length - a.length)
      .map((form) => new RegExp(form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi')),
    ...patterns,
  ];
}

/** A URL's mask is ASCII: the bullets would come out percent-encoded, nine characters each. */
function maskText(text: string, forms: readonly RegExp[], mask = '••••'): string {
  let output = text;
  for (const form of forms) output = output.replace(form, mask);
  return output;
}

/**
 * The tree with the values masked in every string the page put there (names, text, placeholders, URLs), before
 * it is quoted for the agent or its names are remembered with the refs; the refs and roles are tabward's and
 * Playwright's, and stay whole whatever a value is (a one-digit code box would otherwise break every ref).
 */
function maskTree(
  nodes: readonly (AriaNode | string)[],
  forms: readonly RegExp[],
  pageUrl: string,
): AriaNode[] {
  if (forms.length === 0) return nodes as AriaNode[];
  const mask = (node: AriaNode | string): AriaNode | string => {
    if (typeof node === 'string') return maskText(node, forms);
    const masked: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'children' && Array.isArray(value)) masked[key] = value.map(mask);
      // A link on the page's own origin is shown by its path: only that is the page's to fill.
      else if (key === 'url' && typeof value === 'string')
        masked[key] = maskText(relativeUrl(value, pageUrl), forms, '****');
      else if (typeof value === 'string' && key !== 'role' && key !== 'ref' && key !== 'cursor')
        masked[key] = maskText(value, forms);
      else masked[key] = value;
    }
    return masked as AriaNode;
  };
  return nodes.map(mask) as AriaNode[];
}

/**
 * Gives the elements a snapshot can show with a ref a short one of tabward's own (the keys carry a frame id and a
 * node id that would cost the agent tokens), and remembers where each element is. The same element keeps its short
 * ref across snapshots of one document, so a ref from an earlier snapshot never silently points at another element.
 * Only those elements are numbered (the ones an agent acts on; every element with `allRefs`; one numbered before):
 * numbering every box of a large page made the refs shown long (@e11234) and the map of them large.
 */
function shortenRefs(
  nodes: readonly (AriaNode | string)[],
  tracked: TrackedPage,
  frames: ReadonlyMap<string, FrameScope>,
  allRefs: boolean,
): (AriaNode | string)[] {
  return nodes.map((node) => {
    if (typeof node === 'string') return node;
    let ref: string | undefined;
    const key = node.ref;
    const numbered = key !== undefined && (allRefs || isActionable(node) || tracked.shortRefs.has(key));
    const target = key && numbered ? addressOf(key, frames) : undefined;
    if (key && target) {
      ref = tracked.shortRefs.get(key) ?? `e${tracked.shortRefs.size + 1}`;
      tracked.shortRefs.set(key, ref);
      tracked.refs.set(ref, { role: node.role, name: node.name ?? node.text ?? '', target });
    }
    const children = node.children ? shortenRefs(node.children, tracked, frames, allRefs) : undefined;
    const { ref: _key, ...rest } = node;
    return { ...rest, ...(ref ? { ref } : {}), ...(children ? { children } : {}) };
  });
}
