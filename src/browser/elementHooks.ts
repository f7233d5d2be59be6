// Runs in the page, beside the live facts of a ref's lookup (elements.ts): what a selector that survives a reload
// can be made of — the element's test id, id and form field name — and whether each finds this element alone in
// its document, so that a saved recipe's CSS selector needs no further round trip to be checked (docs/architecture.md "Audit records").

import type { ElementHooks } from '../core/durableSelectors.ts';

/** The few DOM properties hooksOf reads; the Node tsconfig has no DOM types (docs/architecture.md "Source text run in pages"). */
interface HookElement {
  readonly tagName: string;
  readonly ownerDocument: { querySelectorAll(selector: string): ArrayLike<unknown> };
  getAttribute(name: string): string | null;
  getRootNode(): unknown;
}

/**
 * Self-contained: Playwright sends its source text to the page (no helper functions inside either: the bundler
 * would name them through a helper the page does not have). An element inside a shadow root gets no unique CSS
 * hook (a document-wide query would not see it); its role and name are checked by Playwright instead.
 */
export function hooksOf(node: unknown): ElementHooks {
  const el = node as HookElement;
  const doc = el.ownerDocument;
  const css = (globalThis as { CSS?: { escape(value: string): string } }).CSS;
  const tag = el.tagName.toLowerCase();
  const testIdAttribute = ['data-testid', 'data-test-id', 'data-test', 'data-qa', 'data-cy'].find(
    (attribute) => (el.getAttribute(attribute) ?? '') !== '',
  );
  const isField = tag === 'input' || tag === 'select' || tag === 'textarea';
  const wanted: [key: keyof ElementHooks, attribute: string | undefined, value: string, selector: string][] =
    [
      [
        'testId',
        testIdAttribute,
        testIdAttribute ? (el.getAttribute(testIdAttribute) ?? '') : '',
        `[${testIdAttribute}=`,
      ],
      ['id', undefined, el.getAttribute('id') ?? '', '[id='],
      ['fieldName', undefined, isField ? (el.getAttribute('name') ?? '') : '', `${tag}[name=`],
    ];
  const hooks: Record<string, { attribute?: string; value: string; unique: boolean }> = {};
  for (const [key, attribute, value, selector] of wanted) {
    if (!value) continue;
    let unique = false;
    if (css && el.getRootNode() === doc) {
      try {
        const matches = doc.querySelectorAll(`${selector}"${css.escape(value)}"]`);
        unique = matches.length === 1 && matches[0] === el;
      } catch {
        unique = false;
      }
    }
    hooks[key] = { ...(attribute ? { attribute } : {}), value, unique };
  }
  return hooks as ElementHooks;
}
