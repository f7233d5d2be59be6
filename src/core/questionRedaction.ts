// Redacting a question before it leaves tabward (docs/architecture.md "Consent"): the approver is an MCP client's
// elicitation, a terminal, a page, a socket; every string in a question that the page or the agent chose passes
// the redactor, whichever part of the call path asks it.

import type { ApprovalRequest } from './approvals.ts';
import type { Redactor } from './redact.ts';

/**
 * What part of a question holds, as a value of its own, a literal the agent typed into a password field
 * (Redactor.typedWhole), besides the value the action itself types into such a field (masked where it stands in its
 * arguments: ActionLook's questionArgs). A page may have chosen that text: told the agent what to type, or made a
 * recipient's field a password field as it was typed into. Shown «redacted» where it stands for a recipient or an
 * amount, it hid what a yes sends: such a question is not asked. Inside a longer value (an e-mail address that
 * holds the password) it is masked, the rest shown, as for a page's own password (docs/security.md).
 */
export function typedTextShown(request: ApprovalRequest, redact: Redactor): string | undefined {
  if (!redact.holdsTyped) return undefined;
  const parts: readonly (readonly [string, unknown])[] = [
    ['its arguments', request.args],
    ['the form data it sends', request.formData],
    ['where it sends', request.destination],
    ['the page address', [request.url, request.loadedFrom, request.origin]],
    ['the element', [request.element, request.dropOnto, request.fields]],
    ['the reason', request.reason],
  ];
  const typed = (value: unknown): boolean =>
    typeof value === 'string'
      ? valuesWithin(value).some((each) => redact.typedWhole(each))
      : Array.isArray(value)
        ? value.some(typed)
        : value !== null && typeof value === 'object' && Object.values(value).some(typed);
  return parts.find(([, value]) => typed(value))?.[0];
}

/**
 * The values a text carries on their own: itself, its lines and words, the parameters and path segments of an
 * address or a form body, the strings of a JSON body, a base64 word decoded. How a recipient or an amount travels in what a question shows.
 */
export function valuesWithin(text: string): string[] {
  const values = new Set([text]);
  const add = (value: string) => {
    if (value.trim()) values.add(value);
  };
  const words = text.split(/\s+/);
  for (const line of text.split(/\r?\n/)) add(line);
  for (const word of words) {
    add(word);
    const [path = '', query] = word.split(/\?(.*)/s);
    for (const segment of path.split('/')) add(safeDecode(segment));
    const params = query ?? (word.includes('=') ? word : undefined);
    if (params !== undefined) for (const [, value] of new URLSearchParams(params)) add(value);
  }
  // A value a page base64-encodes (the redactor knows the middle of such a form, not its padded ends).
  for (const word of words)
    if (word.length >= 8 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(word))
      add(Buffer.from(word, 'base64').toString('utf8'));
  if (/^\s*[[{"]/.test(text)) {
    try {
      const walk = (value: unknown): void => {
        if (typeof value === 'string') add(value);
        else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
      };
      walk(JSON.parse(text));
    } catch {
      // Not JSON: its words and parameters are read above.
    }
  }
  return [...values];
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The refusal's words, for a question typedTextShown found. */
export function typedTextRefusal(part: string): string {
  return `${part} would show text the agent typed into a password field, which a question hides (a page may have chosen it, to hide what a yes sends)`;
}

/**
 * A question as it may leave tabward: a URL the page put a typed secret into, an element named after it, the
 * arguments, all redacted. Only `bindsTo` (never shown) stays as it is.
 */
export function redactQuestion(request: ApprovalRequest, redact: Redactor): ApprovalRequest {
  return {
    ...request,
    reason: redact.text(request.reason),
    url: redact.text(request.url),
    ...(request.loadedFrom !== undefined ? { loadedFrom: redact.text(request.loadedFrom) } : {}),
    origin: redact.text(request.origin),
    ...(request.destination !== undefined ? { destination: redact.text(request.destination) } : {}),
    ...(request.element
      ? { element: { role: redact.text(request.element.role), name: redact.text(request.element.name) } }
      : {}),
    ...(request.formData
      ? { formData: redact.value(request.formData) as NonNullable<ApprovalRequest['formData']> }
      : {}),
    ...(request.dropOnto
      ? { dropOnto: { role: redact.text(request.dropOnto.role), name: redact.text(request.dropOnto.name) } }
      : {}),
    ...(request.fields
      ? {
          fields: request.fields.map((target) => ({
            field: redact.text(target.field),
            frame: redact.text(target.frame),
          })),
        }
      : {}),
    args: redact.value(request.args) as Record<string, unknown>,
    ...(request.siteGrant
      ? { siteGrant: { origin: redact.text(request.siteGrant.origin), tool: request.siteGrant.tool } }
      : {}),
    ...(request.siteGrantsInForce
      ? { siteGrantsInForce: request.siteGrantsInForce.map((line) => redact.text(line)) }
      : {}),
  };
}
