// Taking a snapshot of a tab: Playwright's AI aria tree (refs resolve with page.getByRef), rendered compact,
// with the values of password fields removed and the refs remembered for stale-ref checks. The tree is read in
// Playwright's utility world; the password values beside it out of the page's reach too (the main document's,
// with its title, in tabward's own isolated world; other frames' through Playwright's locators), and masked in
// the tree itself, in every form the tree shows them, before it is rendered or its refs are remembered.

import type { Frame } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import { withDeadline } from './deadline.ts';
import type { TrackedPage } from './pages.ts';
import { type AriaNode, isActionable, renderSnapshot } from './snapshotFormat.ts';

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
    await tracked.snapshotPrepared;
    const read = await treeWithPasswords(tracked, options.timeoutMs);
    const forms = shownForms(rememberPasswords(tracked, read.passwords));
    const tree = maskTree(read.tree, forms);
    const title = maskText(read.title, forms);
    if (tracked.refsDocumentSeq !== tracked.documentSeq) {
      tracked.refs = new Map();
      tracked.shortRefs = new Map();
      tracked.handedOut = new Set();
      tracked.refsDocumentSeq = tracked.documentSeq;
    }
    const shortTree = shortenRefs(tree, tracked);
    for (const ref of shownRefs(shortTree, options.allRefs ?? false)) tracked.handedOut.add(ref);
    const text = renderSnapshot(shortTree, {
      pageUrl: page.url(),
      ...(options.ref ? { ref: options.ref } : {}),
      ...(options.query ? { query: options.query } : {}),
      ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
      ...(options.allRefs ? { allRefs: true } : {}),
      hide: options.redact ?? same,
    });
    return { text, title };
  };
  return withDeadline(work(), options.timeoutMs, 'take_snapshot', tracked.interrupted);
}

/** Reads of the tree and the values, each interrupted by a frame's navigation, before the snapshot gives up. */
const maxReads = 3;

/**
 * The aria tree and, beside it, the values in the password fields of the documents it was read from. A frame that
 * navigates while they are read (a frame loading, a page reloading itself) could give a tree of one document and
 * values of another: the pair is read again once the frames that navigated have their documents, and after
 * `maxReads` the snapshot fails rather than go out unchecked.
 */
async function treeWithPasswords(
  tracked: TrackedPage,
  timeoutMs: number,
): Promise<{ tree: AriaNode[]; title: string; passwords: string[] }> {
  const { page } = tracked;
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
    const reads = Promise.all([
      page.ariaSnapshotJSON({ mode: 'ai', timeout: timeoutMs }),
      passwordValues(tracked, timeoutMs),
    ]);
    // What a navigation interrupted is nobody's to wait for any more (a frame's read waits for its new document).
    reads.catch(() => undefined);
    try {
      const outcome = await Promise.race([reads.catch((error: unknown) => ({ error })), navigated]);
      if (outcome !== 'navigated') {
        if ('error' in outcome) throw outcome.error;
        const [json, { title, passwords }] = outcome;
        return { tree: json as unknown as AriaNode[], title, passwords };
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
    // The caller's deadline bounds this wait.
    await Promise.all(
      [...navigatedFrames].map((frame) =>
        frame.waitForLoadState('domcontentloaded', { timeout: timeoutMs }).catch(() => undefined),
      ),
    );
  }
}

/** Fields whose value is a password: type=password in any case, or one the page asks a password manager to fill. */
const passwordFieldSelector =
  'input[type=password i], input[autocomplete~=current-password i], input[autocomplete~=new-password i]';

/**
 * Values typed into password fields, in every frame and through open shadow roots (where the aria tree reaches
 * too), so that a snapshot can never show them; and the main document's title. Read out of the page's reach, as
 * the aria tree is (a page may lie to scripts in its own world about its fields): the main document in tabward's
 * own isolated world (browser/isolatedReads.ts), other frames through Playwright's locators, which run in its
 * utility world and reach out-of-process frames. A field that cannot be read fails the snapshot: it never goes
 * out unmasked.
 */
async function passwordValues(
  tracked: TrackedPage,
  timeoutMs: number,
): Promise<{ title: string; passwords: string[] }> {
  const { page } = tracked;
  const main = page.mainFrame();
  const inFrame = async (frame: Frame): Promise<string[]> => {
    const fields = frame.locator(passwordFieldSelector);
    const count = await fields.count();
    return Promise.all(
      Array.from({ length: count }, (_, i) => fields.nth(i).inputValue({ timeout: timeoutMs })),
    );
  };
  const unreadable = (error: unknown) => {
    throw new TabwardError(
      'blocked',
      `Could not read the page's password fields to mask them (${String(error).split('\n')[0]}); nothing was shown.`,
      'The page was probably changing: call take_snapshot again.',
    );
  };
  const [[title, mainValues], ...others] = await Promise.all([
    tracked.readInDocument<[string, string[]]>(readInFrame).catch(unreadable),
    ...page
      .frames()
      .filter((frame) => frame !== main)
      // A frame that went away while it was read shows nothing any more.
      .map((frame) =>
        inFrame(frame).catch((error: unknown) => (frame.isDetached() ? [] : unreadable(error))),
      ),
  ]);
  const passwords = [...mainValues, ...others.flat()].filter((value) => value.length > 0);
  return { title, passwords };
}

/**
 * Runs in the page (source text: the Node tsconfig has no DOM types). Returns [title, password values]. The
 * field's own type, not a selector: an XHTML document matches attribute values case-sensitively.
 */
const readInFrame = `(() => {
  const values = [];
  const isPassword = (input) =>
    input.type === 'password' ||
    (input.getAttribute('autocomplete') || '').toLowerCase().split(/\\s+/).some((token) => token === 'current-password' || token === 'new-password');
  const visit = (root) => {
    for (const input of root.querySelectorAll('input')) if (isPassword(input)) values.push(String(input.value));
    for (const host of root.querySelectorAll('*')) if (host.shadowRoot) visit(host.shadowRoot);
  };
  visit(document);
  return [document.title, values];
})()`;

/** The password values seen in each tab's current document: a field the page turns to type=text keeps its mask. */
const seenInDocument = new WeakMap<TrackedPage, { documentSeq: number; values: Set<string> }>();
const maxRemembered = 200;

function rememberPasswords(tracked: TrackedPage, values: readonly string[]): string[] {
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

/** Text as Playwright's tree shows it (its normalizeWhiteSpace): zero-width spaces and soft hyphens dropped, trimmed, whitespace runs collapsed. */
function shownByPlaywright(text: string): string {
  return text
    .replace(/[\u200b\u00ad]/g, '')
    .trim()
    .replace(/\s+/g, ' ');
}

/**
 * Each value as typed and as the tree shows it, longest first. A form of only whitespace is not one: it cannot be
 * told apart from the spaces around any word.
 */
function shownForms(values: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const value of values)
    for (const form of [value, shownByPlaywright(value)]) if (form.trim()) forms.add(form);
  return [...forms].sort((a, b) => b.length - a.length);
}

/** A URL's mask is ASCII: the bullets would come out percent-encoded, nine characters each. */
function maskText(text: string, forms: readonly string[], mask = '••••'): string {
  let output = text;
  for (const form of forms) output = output.split(form).join(mask);
  return output;
}

/**
 * The tree with the values masked in every string the page put there (names, text, placeholders, URLs), before
 * it is quoted for the agent or its names are remembered with the refs; the refs and roles are tabward's and
 * Playwright's, and stay whole whatever a value is (a one-digit code box would otherwise break every ref).
 */
function maskTree(nodes: readonly (AriaNode | string)[], forms: readonly string[]): AriaNode[] {
  if (forms.length === 0) return nodes as AriaNode[];
  const mask = (node: AriaNode | string): AriaNode | string => {
    if (typeof node === 'string') return maskText(node, forms);
    const masked: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'children' && Array.isArray(value)) masked[key] = value.map(mask);
      else if (key === 'url' && typeof value === 'string') masked[key] = maskText(value, forms, '****');
      else if (typeof value === 'string' && key !== 'role' && key !== 'ref' && key !== 'cursor')
        masked[key] = maskText(value, forms);
      else masked[key] = value;
    }
    return masked as AriaNode;
  };
  return nodes.map(mask) as AriaNode[];
}

/**
 * Gives every element with a ref a short one of tabward's own (Playwright's carry frame and generation prefixes
 * that cost the agent tokens). The same element keeps its short ref across snapshots of one document, so a ref
 * from an earlier snapshot never silently points at another element.
 */
function shortenRefs(nodes: readonly (AriaNode | string)[], tracked: TrackedPage): (AriaNode | string)[] {
  return nodes.map((node) => {
    if (typeof node === 'string') return node;
    let ref: string | undefined;
    if (node.ref) {
      ref = tracked.shortRefs.get(node.ref) ?? `e${tracked.shortRefs.size + 1}`;
      tracked.shortRefs.set(node.ref, ref);
      tracked.refs.set(ref, { role: node.role, name: node.name ?? node.text ?? '', target: node.ref });
    }
    const children = node.children ? shortenRefs(node.children, tracked) : undefined;
    return { ...node, ...(ref ? { ref } : {}), ...(children ? { children } : {}) };
  });
}

/** The refs the rendered snapshot shows: on elements an agent can act on, or on every element with allRefs. */
function shownRefs(nodes: readonly (AriaNode | string)[], allRefs: boolean): string[] {
  return nodes.flatMap((node) => {
    if (typeof node === 'string') return [];
    const own = node.ref && (allRefs || isActionable(node)) ? [node.ref] : [];
    return [...own, ...shownRefs(node.children ?? [], allRefs)];
  });
}
