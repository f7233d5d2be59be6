// Redacting a question before it leaves tabward (docs/architecture.md "Consent"): the approver is an MCP client's
// elicitation, a terminal, a page, a socket; every string in a question that the page or the agent chose passes
// the redactor, whichever part of the call path asks it.

import type { ApprovalRequest } from './approvals.ts';
import type { Redactor } from './redact.ts';

/**
 * A question as it may leave tabward: a URL the page put a typed secret into, an element named after it, the
 * arguments, all redacted. Only `bindsTo` (never shown) stays as it is.
 */
export function redactQuestion(request: ApprovalRequest, redact: Redactor): ApprovalRequest {
  return {
    ...request,
    reason: redact.text(request.reason),
    url: redact.text(request.url),
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
