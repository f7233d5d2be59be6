// Selectors that find an element again after a reload, for recipes saved from an agent's browsing. A snapshot ref
// lives only as long as its document; a recipe needs what the page keeps from one load to the next: a test id, an
// id that does not look generated, a form field's name, or role and accessible name (Playwright's getByRole
// semantics, written as the `role=` selector that recipe steps accept). These are only candidates, best first:
// browser/ keeps the first that matches the element alone.

/** An attribute value, and whether a CSS selector for it finds this element alone in its document. */
export interface AttributeHook {
  readonly value: string;
  readonly unique: boolean;
}

/** What the page says about an element's attributes (browser/elementHooks.ts reads them). */
export interface ElementHooks {
  /** data-testid, data-test-id, data-test, data-qa or data-cy. */
  readonly testId?: AttributeHook & { readonly attribute: string };
  readonly id?: AttributeHook;
  /** The name attribute of a form field (input, select, textarea): what its form sends the value as. */
  readonly fieldName?: AttributeHook;
}

export interface SelectorFacts extends ElementHooks {
  readonly tag: string;
  /** ARIA role and accessible name, as the snapshot showed them. */
  readonly role: string;
  readonly name: string;
}

export interface SelectorCandidate {
  readonly selector: string;
  /** Already known to find the element alone; a role selector is checked by Playwright's own engine. */
  readonly checked: boolean;
}

/** Roles whose name says nothing a person would point at. */
const namelessRoles = new Set(['generic', 'none', 'presentation', 'text', 'paragraph', 'group']);

export function selectorCandidates(facts: SelectorFacts): SelectorCandidate[] {
  const out: SelectorCandidate[] = [];
  const { testId, id, fieldName } = facts;
  if (testId?.unique)
    out.push({ selector: `[${testId.attribute}=${cssString(testId.value)}]`, checked: true });
  if (id?.unique && !looksGenerated(id.value))
    out.push({ selector: `#${cssEscape(id.value)}`, checked: true });
  if (fieldName?.unique && !looksGenerated(fieldName.value))
    out.push({ selector: `${facts.tag.toLowerCase()}[name=${cssString(fieldName.value)}]`, checked: true });
  const role = roleSelector(facts.role, facts.name);
  if (role) out.push({ selector: role, checked: false });
  return out;
}

/** `role=button[name="Save"]`: Playwright's role engine, the whole name exactly (getByRole with exact: true). */
export function roleSelector(role: string, name: string): string | undefined {
  const normalized = name.replace(/\s+/g, ' ').trim();
  if (!/^[a-z]+$/.test(role) || namelessRoles.has(role)) return undefined;
  if (!normalized || normalized.length > 120) return undefined;
  return `role=${role}[name=${cssString(normalized)}]`;
}

/**
 * Ids and names frameworks make up per render or per build, which a reload changes: React's useId (`:r1:`, `«r1»`),
 * counters (`ember1234`, `input-1699`), hashes and uuids, and a few libraries' own prefixes.
 */
export function looksGenerated(value: string): boolean {
  if (/[:«»]/.test(value)) return true;
  if (/\d{3,}/.test(value)) return true;
  if ((value.match(/[0-9a-f]{6,}/gi) ?? []).some((run) => /\d/.test(run))) return true;
  return /^(radix-|headlessui-|mui-\d|react-select-\d|rc[-_]|yui_|ext-gen|gwt-uid|j_id|__)/i.test(value);
}

/** A CSS string literal, double-quoted. */
export function cssString(value: string): string {
  const escaped = [...value]
    .map((char) => {
      const code = char.codePointAt(0) ?? 0;
      if (char === '"' || char === '\\') return `\\${char}`;
      if (code < 0x20 || code === 0x7f) return `\\${code.toString(16)} `;
      return char;
    })
    .join('');
  return `"${escaped}"`;
}

/** An identifier as CSS needs it after `#` (CSSOM's CSS.escape, which Node lacks). */
export function cssEscape(ident: string): string {
  const chars = [...ident];
  return chars
    .map((char, index) => {
      const code = char.codePointAt(0) ?? 0;
      if (code === 0) return '\uFFFD';
      const digit = code >= 0x30 && code <= 0x39;
      if (
        (code >= 0x01 && code <= 0x1f) ||
        code === 0x7f ||
        (index === 0 && digit) ||
        (index === 1 && digit && chars[0] === '-')
      )
        return `\\${code.toString(16)} `;
      if (index === 0 && char === '-' && chars.length === 1) return '\\-';
      if (code >= 0x80 || /[-_0-9A-Za-z]/.test(char)) return char;
      return `\\${char}`;
    })
    .join('');
}
