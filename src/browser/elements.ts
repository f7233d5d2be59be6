// Resolving a snapshot ref to an element, and the facts the guard needs about where that element lives:
// its frame, each ancestor frame, and the top document, as the browser reports them now.

import type { Frame, Locator } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import type { Effect, FrameFact } from '../core/guard.ts';
import { translateBrowserError, withDeadline } from './deadline.ts';
import type { RefInfo, TrackedPage } from './pages.ts';

export interface ResolvedElement {
  readonly locator: Locator;
  readonly frames: FrameFact[];
  readonly info: RefInfo;
  /** Where clicking it (or pressing a key in it) would send the browser. */
  readonly effects: Effect[];
}

/** The few DOM properties effectsOf reads; the Node tsconfig has no DOM types (DESIGN.md 6.3). */
interface DomElement {
  readonly tagName: string;
  readonly href?: string;
  readonly formAction?: string;
  readonly form?: { readonly action: string } | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  closest(selector: string): DomElement | null;
}

/**
 * Runs in the page: a link's target; a submit button's form action; with keyPress, also the form of a field,
 * which Enter submits. Self-contained, because Playwright sends its source text to the page.
 */
function effectsOf(node: unknown, keyPress: boolean): Effect[] {
  const el = node as DomElement;
  const out: Effect[] = [];
  const link = el.closest('a[href]');
  if (link?.href) out.push({ url: link.href, submitsForm: false });
  const form = el.form ?? (el.closest('form') as { action: string } | null);
  const type = (el.getAttribute('type') ?? '').toLowerCase();
  const isSubmit =
    (el.tagName === 'BUTTON' && (type || 'submit') === 'submit') ||
    (el.tagName === 'INPUT' && (type === 'submit' || type === 'image'));
  const isField = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
  if (form && (isSubmit || (keyPress && isField))) {
    const action = isSubmit && el.hasAttribute('formaction') && el.formAction ? el.formAction : form.action;
    out.push({ url: action, submitsForm: true });
  }
  return out;
}

export async function resolveRef(
  tracked: TrackedPage,
  ref: string,
  timeoutMs: number,
  keyPress = false,
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
  const locator = tracked.page.getByRef(info.target);
  const work = async () => {
    const handle = await locator.elementHandle({ timeout: timeoutMs });
    const frame = await handle.ownerFrame();
    const effects = await handle.evaluate(effectsOf, keyPress);
    await handle.dispose();
    if (!frame)
      throw new TabwardError('stale_ref', `Ref ${ref} is no longer in the page.`, 'Take a new snapshot.');
    return { frames: frameChain(frame), effects };
  };
  try {
    const { frames, effects } = await withDeadline(work(), timeoutMs, `finding ${ref}`, tracked.interrupted);
    return { locator, frames, info, effects };
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

/** The effects of a key press on whatever has the focus, for press_key without a ref. */
export async function focusedEffects(tracked: TrackedPage, timeoutMs: number): Promise<Effect[]> {
  const work = async () => {
    const focused = await tracked.page.$('*:focus');
    if (!focused) return [];
    const effects = await focused.evaluate(effectsOf, true);
    await focused.dispose();
    return effects;
  };
  return withDeadline(work(), timeoutMs, 'reading the focused element', tracked.interrupted);
}
