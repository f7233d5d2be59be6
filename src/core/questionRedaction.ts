// Redacting a question before it leaves tabward (docs/architecture.md "Consent"): the approver is an MCP client's
// elicitation, a terminal, a page, a socket; every string in a question that the page or the agent chose passes
// the redactor, whichever part of the call path asks it.

import type { ApprovalRequest } from './approvals.ts';
import type { Redactor } from './redact.ts';

/**
 * A question as it may leave tabward: a URL the page put a secret into, an element named after it, the arguments,
 * all redacted. Only `bindsTo` (never shown) stays as it is. A literal the agent typed into a password field is
 * shown (`Redactor.forQuestions`), but where the action types it (ActionLook's questionArgs): the agent typed it and
 * the human is asked, and a page may have chosen it (told the agent what to type, or made a recipient's field a
 * password field as it was typed into), so masked it hid what a yes sent.
 */
export function redactQuestion(request: ApprovalRequest, redactor: Redactor): ApprovalRequest {
  const redact = redactor.forQuestions();
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
