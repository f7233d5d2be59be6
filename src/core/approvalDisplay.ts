// An approval request as a human may see it: every string a page or the agent could have chosen (element role
// and name, URL, origin, reason, rule, argument keys and values) passed through the display sanitiser, so no
// approver can forget one. Approvers show this copy; the guard and the runner keep the original.

import { shownArgsLine, visibleArgs } from '../protocol/shownArgs.ts';
import type { ApprovalRequest } from './approvals.ts';
import {
  forDisplay,
  hasMixedScripts,
  mixedScriptsWarning,
  quotedForDisplay,
  visibleText,
} from './displayText.ts';
import { internationalName } from './networkHolds.ts';
import { destinationMaxChars, reasonMaxChars } from './shownPlaces.ts';

const limits = {
  name: 120,
  url: 300,
  destination: destinationMaxChars,
  reason: reasonMaxChars,
} as const;

/** A copy of `request` safe to show: same shape, sanitised strings. */
export function displayRequest(request: ApprovalRequest): ApprovalRequest {
  return {
    ...request,
    tool: forDisplay(request.tool, limits.name),
    kind: forDisplay(request.kind, limits.name),
    reason: forDisplay(request.reason, limits.reason),
    rule: forDisplay(request.rule, limits.reason),
    // The address the page shows is its own to choose (history.replaceState): every channel shows where it came from.
    url:
      shownAddress(request.url) +
      (request.loadedFrom ? ` (its document was loaded from ${shownAddress(request.loadedFrom)})` : ''),
    origin: forDisplay(request.origin, limits.url),
    ...(request.destination !== undefined
      ? { destination: forDisplay(request.destination, limits.destination) }
      : {}),
    ...(request.fields
      ? {
          fields: request.fields.map((target) => ({
            field: forDisplay(target.field, limits.name),
            frame: forDisplay(target.frame, limits.url),
          })),
        }
      : {}),
    ...(request.element
      ? {
          element: {
            role: forDisplay(request.element.role, limits.name),
            name: forDisplay(request.element.name, limits.name),
          },
        }
      : {}),
    ...(request.dropOnto
      ? {
          dropOnto: {
            role: forDisplay(request.dropOnto.role, limits.name),
            name: forDisplay(request.dropOnto.name, limits.name),
          },
        }
      : {}),
    ...(request.client !== undefined ? { client: forDisplay(request.client, limits.name) } : {}),
    // Whole: a question is asked only when its arguments fit (protocol/shownArgs.ts), never cut to fit.
    args: visibleArgs(request.args) as Record<string, unknown>,
    ...(request.siteGrant
      ? {
          siteGrant: {
            origin: forDisplay(request.siteGrant.origin, limits.url),
            tool: forDisplay(request.siteGrant.tool, limits.name),
          },
        }
      : {}),
    ...(request.siteGrantsInForce
      ? { siteGrantsInForce: request.siteGrantsInForce.map((line) => forDisplay(line, limits.url)) }
      : {}),
  };
}

/**
 * A page's address as the human reads it: a user name before the host (`https://github.com@bank.test/`, which
 * reads as github.com) is taken out and named, and an international host (xn--…) flagged, as on the Sends line.
 */
export function shownAddress(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return forDisplay(url, limits.url);
  }
  if (!/^(https?|wss?):$/.test(parsed.protocol)) return forDisplay(url, limits.url);
  const international = internationalName(parsed.hostname).trim();
  // Shown as written when there is nothing to say (written, not as parsed: a mark shows an invisible character).
  if (!parsed.username && !parsed.password && !international) return forDisplay(url, limits.url);
  let userinfo = parsed.username || (parsed.password ? ':' : '');
  try {
    userinfo = decodeURIComponent(userinfo);
  } catch {
    // shown as it was written
  }
  parsed.username = '';
  parsed.password = '';
  const flags = [
    ...(userinfo
      ? [`⚠ a user name (${visibleText(userinfo, 40)}@) stood before the host: the site is ${parsed.host}`]
      : []),
    international,
  ].filter(Boolean);
  return `${forDisplay(parsed.href, limits.url)}${flags.length ? ` ${flags.join(' ')}` : ''}`;
}

/** ` on button "Save"`, or nothing when no element is involved; the name quoted so a page cannot close it. */
export function elementPhrase(request: ApprovalRequest): string {
  if (!request.element) return '';
  return ` on ${forDisplay(request.element.role, limits.name)} ${quotedForDisplay(request.element.name, limits.name)}`;
}

/**
 * The lines that say where the action really goes, for every approver alike: `Sends: POST host/path` and, for
 * an action writing several values, which field and frame each one goes to.
 */
export function whereLines(request: ApprovalRequest): string[] {
  const shown = displayRequest(request);
  const lines = shown.destination ? [`Sends: ${shown.destination}`] : [];
  if (request.dropOnto)
    lines.push(
      `Drops onto: ${forDisplay(request.dropOnto.role, limits.name)} ${quotedForDisplay(request.dropOnto.name, limits.name)}`,
    );
  // Each form's fields whole and exactly, as the Sends line names the forms (the pass lets that body only).
  for (const [index, fields] of (request.formData ?? []).entries())
    lines.push(
      `${(request.formData?.length ?? 0) > 1 ? `Form ${index + 1} sends` : 'Form sends'}: ${shownArgsLine(fields)}`,
    );
  for (const [index, target] of (shown.fields ?? []).entries())
    lines.push(`Value ${index + 1} goes to: ${target.field} in ${target.frame}`);
  return lines;
}

/**
 * The guard's own reasons to ask about a page no rule marks sensitive, by exact name. Every other rule of a
 * sensitive request is a pattern from a rules file, which always has a scheme (`*://`, `https://`): it never
 * takes one of these names, however it is spelled (`*://secrets.example.com/*` is a sensitive page).
 */
const notAPage = new Map([
  ['taint', 'CARRIES DATA FROM A SENSITIVE PAGE'],
  // A request the backstop held after a sensitive read or a typed secret (core/networkHolds.ts taintReason).
  ['network-taint', 'MAY CARRY SENSITIVE DATA'],
  ['typed-secret', 'A SECRET'],
  ['secret-origin', 'A SECRET'],
  ['secret-new-origin', 'A SECRET'],
  ['form-resubmission', 'SENDS A FORM AGAIN'],
]);

/**
 * What a request that needs its own approval is about, named for what it is: a human told "sensitive page" on a
 * plain page (the guard asks because of data read elsewhere, a secret, a form sent again) learns to ignore it.
 */
export function warningOf(request: ApprovalRequest): string | undefined {
  if (!request.sensitive) return undefined;
  return notAPage.get(request.rule) ?? 'SENSITIVE PAGE';
}

/**
 * Why there is no approve-all choice, for every approver alike: on a sensitive page each action needs its own
 * yes (docs/architecture.md "The guard's rules", rule 3), and a human looking for the usual button should be told so rather than left to wonder.
 */
export function approveAllNote(request: ApprovalRequest): string | undefined {
  if (request.approveAllAllowed) return undefined;
  return warningOf(request) === 'SENSITIVE PAGE'
    ? 'Approve-all is not available on sensitive pages: each action here needs its own approval.'
    : 'Approve-all is not available for this action: it needs its own approval.';
}

/** The arguments as one JSON line, whole, flagged once if any value mixes scripts. */
export function argsLine(request: ApprovalRequest): string {
  return `${shownArgsLine(request.args)}${argsFlag(request) ? mixedScriptsWarning : ''}`;
}

/** The warning for arguments that mix scripts (a look-alike letter), where a channel shows them apart. */
export function argsFlag(request: ApprovalRequest): string | undefined {
  return hasMixedScripts(JSON.stringify(request.args) ?? '') ? mixedScriptsWarning.trim() : undefined;
}

/**
 * What a site grant would allow, where one is offered, and the grants already in force (which the human may
 * revoke), for every approver alike.
 */
export function siteGrantLines(request: ApprovalRequest): string[] {
  const lines: string[] = [];
  const { siteGrant, siteGrantsInForce = [] } = displayRequest(request);
  if (siteGrant)
    lines.push(
      `Site grant available: ${siteGrant.tool} on ${siteGrant.origin} unasked for 15 min or 1 h (this tool, this exact origin; sensitive pages still ask).`,
    );
  if (siteGrantsInForce.length > 0) lines.push(`Site grants in force: ${siteGrantsInForce.join('; ')}`);
  return lines;
}

/**
 * The question in the words every channel uses (elicitation, `tabward approvals`, the notification, the page's
 * title): what, where it sends, why asked, with which arguments, and what approving more would allow.
 */
export function questionLines(request: ApprovalRequest): string[] {
  const shown = displayRequest(request);
  const warning = warningOf(request);
  const note = approveAllNote(request);
  return [
    `tabward: ${shown.tool}${elementPhrase(request)}${warning ? ` — ${warning}` : ''}`,
    ...(shown.client ? [`Asked by: ${shown.client}`] : []),
    `Page: ${shown.url || '(none)'}`,
    ...whereLines(request),
    `Why asked: ${shown.reason} (rule ${shown.rule})`,
    `Arguments: ${argsLine(request)}`,
    ...(note ? [note] : []),
    ...siteGrantLines(request),
  ];
}
