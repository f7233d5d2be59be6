// Resolving a snapshot ref to an element, and the facts the guard needs about where that element lives:
// its frame, each ancestor frame, and the top document, as the browser reports them now.

import type { Frame, Locator } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import type { FrameFact } from '../core/guard.ts';
import { translateBrowserError, withDeadline } from './deadline.ts';
import type { RefInfo, TrackedPage } from './pages.ts';

export interface ResolvedElement {
  readonly locator: Locator;
  readonly frames: FrameFact[];
  readonly info: RefInfo;
}

export async function resolveRef(
  tracked: TrackedPage,
  ref: string,
  timeoutMs: number,
): Promise<ResolvedElement> {
  tracked.assertUsable();
  if (tracked.refsDocumentSeq !== tracked.documentSeq) {
    throw new TabwardError(
      'stale_ref',
      `Ref ${ref} is stale: tab ${tracked.id} has navigated since the last snapshot.`,
      'Take a new snapshot.',
    );
  }
  const info = tracked.refs.get(ref);
  if (!info) {
    throw new TabwardError(
      'stale_ref',
      `No element with ref ${ref} in tab ${tracked.id}'s last snapshot.`,
      'Take a new snapshot.',
    );
  }
  const locator = tracked.page.getByRef(ref);
  const work = async () => {
    const handle = await locator.elementHandle({ timeout: timeoutMs });
    const frame = await handle.ownerFrame();
    await handle.dispose();
    if (!frame)
      throw new TabwardError('stale_ref', `Ref ${ref} is no longer in the page.`, 'Take a new snapshot.');
    return frameChain(frame);
  };
  try {
    const frames = await withDeadline(work(), timeoutMs, `finding ${ref}`, tracked.interrupted);
    return { locator, frames, info };
  } catch (error) {
    if (error instanceof TabwardError) throw error;
    throw new TabwardError(
      'stale_ref',
      `Ref ${ref} no longer resolves (${translateBrowserError(error, 'lookup').message}).`,
      'Take a new snapshot.',
    );
  }
}

/** The frame, then its ancestors up to the top document. about:blank/srcdoc frames inherit their parent's origin. */
export function frameChain(frame: Frame): FrameFact[] {
  const chain: FrameFact[] = [];
  let current: Frame | null = frame;
  while (current) {
    const url = current.url();
    const parent: Frame | null = current.parentFrame();
    const inherits = url.startsWith('about:') && parent !== null;
    chain.push(inherits && parent ? { url, creatorUrl: parent.url() } : { url });
    current = parent;
  }
  return chain;
}
