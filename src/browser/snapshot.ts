// Taking a snapshot of a tab: Playwright's AI aria tree (refs resolve with page.getByRef), rendered compact,
// with the values of password fields removed and the refs remembered for stale-ref checks. The tree is read in
// Playwright's utility world; the password values and the title come from one plain evaluate per frame (the main
// frame's in tabward's own isolated world, out of the page's reach), so that a fresh document pays for
// Playwright's injected script once (about 30 ms each on a busy 2-core machine), not twice.

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
    const [json, { title, passwords }] = await Promise.all([
      page.ariaSnapshotJSON({ mode: 'ai', timeout: options.timeoutMs }),
      passwordValues(tracked, options.timeoutMs),
    ]);
    const tree = json as unknown as AriaNode[];
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
      hide: (line) => (options.redact ?? same)(maskValues(line, passwords)),
    });
    return { text, title };
  };
  return withDeadline(work(), options.timeoutMs, 'take_snapshot', tracked.interrupted);
}

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
    const fields = frame.locator('input[type=password]');
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

/** Runs in the page (source text: the Node tsconfig has no DOM types). Returns [title, password values]. */
const readInFrame = `(() => {
  const values = [];
  const visit = (root) => {
    for (const input of root.querySelectorAll('input[type=password]')) values.push(String(input.value));
    for (const host of root.querySelectorAll('*')) if (host.shadowRoot) visit(host.shadowRoot);
  };
  visit(document);
  return [document.title, values];
})()`;

function maskValues(text: string, values: readonly string[]): string {
  let output = text;
  for (const value of [...values].sort((a, b) => b.length - a.length)) {
    output = output.split(JSON.stringify(value)).join('"••••"').split(value).join('••••');
  }
  return output;
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
