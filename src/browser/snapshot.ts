// Taking a snapshot of a tab: Playwright's AI aria tree (refs resolve with page.getByRef), rendered compact,
// with the values of password fields removed and the refs remembered for stale-ref checks.

import type { Page } from 'playwright-core';
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

export async function captureSnapshot(tracked: TrackedPage, options: SnapshotOptions): Promise<string> {
  tracked.assertUsable();
  const { page } = tracked;
  const work = async () => {
    const [json, passwords] = await Promise.all([
      page.ariaSnapshotJSON({ mode: 'ai', timeout: options.timeoutMs }),
      passwordValues(page),
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
    return text;
  };
  return withDeadline(work(), options.timeoutMs, 'take_snapshot', tracked.interrupted);
}

/** Values typed into password fields, in every frame, so that a snapshot can never show them. */
async function passwordValues(page: Page): Promise<string[]> {
  const values: string[] = [];
  for (const frame of page.frames()) {
    const found = await frame
      .$$eval('input[type=password]', (inputs) =>
        inputs.map((input) => (input as unknown as { value: string }).value),
      )
      .catch(() => [] as string[]);
    values.push(...found.filter((value) => value.length > 0));
  }
  return values;
}

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
