// The pass an approved action opens at the choke point (docs/architecture.md "Policy at the choke point", 2): which
// writes to sensitive pages and which navigations it lets through, predicted from the facts the human was shown;
// and how the requests the choke point stopped are told.

import { navigationTarget, type PassSpec, writeTargetOf } from './actionPasses.ts';
import type { ActionFacts } from './callTypes.ts';
import { type Decision, originOf } from './guard.ts';
import { requestDestination } from './networkHolds.ts';

export function stoppedSummary(lines: readonly string[]): string {
  const more = lines.length > 5 ? ` (and ${lines.length - 5} more)` : '';
  return `tabward stopped ${lines.length} request(s) of this tab${more}:\n${lines.slice(0, 5).join('\n')}`;
}

/**
 * The requests an approved action may send to sensitive pages: each form action the human saw, once, from the tab
 * and the document they were asked about; a top-level navigation to where they saw it lead (a link, the approved
 * destination, a form's action), and a redirect hop of one within those origins or the page's (a redirect after a
 * post). A link opens no write: the human saw a GET. An action with no predicted target (a script button, a
 * script, a resize, a site tool) opens no write at all: whatever it makes the page send to a sensitive page is held
 * and asked as a question of its own, showing that request (docs/architecture.md, "Passes").
 */
export function passFor(facts: ActionFacts, decision: Decision): PassSpec | undefined {
  if (decision.verdict !== 'ask' || !decision.sensitive) return undefined;
  const [elementFrame] = facts.frames;
  const frameOrigins = facts.frames.slice(0, 1).map((frame) => originOf(frame.url, frame.creatorUrl));
  const effects = facts.effects ?? [];
  const forms = effects.filter((effect) => effect.submitsForm);
  const links = effects.filter((effect) => !effect.submitsForm);
  // A navigation the human approved is a GET: it opens no write toward its destination (a page being left could
  // post there under its cover), and neither does a link.
  const writeTargets = forms.flatMap((effect) => writeTargetOf(effect.url) ?? []);
  const navigationTargets = [
    ...[facts.destination, ...links.map((effect) => effect.url)].flatMap((url) =>
      url ? (navigationTarget(url, false) ?? []) : [],
    ),
    ...forms.flatMap((effect) => navigationTarget(effect.url, true) ?? []),
  ];
  const navigationOrigins = [
    ...(facts.destination ? [originOf(facts.destination)] : []),
    ...effects.map((effect) => originOf(effect.url)),
    ...frameOrigins,
  ];
  // The document that holds the form: only its own submission spends the pass (an opaque one has no origin to match).
  const writeOrigin = elementFrame ? originOf(elementFrame.url, elementFrame.creatorUrl) : undefined;
  return {
    writeTargets,
    ...(writeOrigin && /^https?:\/\//.test(writeOrigin) ? { writeOrigin } : {}),
    navigationTargets,
    navigationOrigins,
    topFrame: facts.frames.length <= 1,
    ...(facts.tab ? { scope: facts.tab.id } : {}),
  };
}

/**
 * Where the guard predicts the action sends, as the human is shown it: a navigation, and every form and link the
 * element has (a button inside a link submits its form, not the link): the pass opens each of them, so the question
 * names each. Forms first, so that the writes stay in view where a long line is cut for display.
 */
export function destinationOf(facts: ActionFacts): { destination?: string } {
  if (facts.destination) return { destination: requestDestination('GET', facts.destination, true) };
  const effects = facts.effects ?? [];
  const shown = [
    ...effects
      .filter((effect) => effect.submitsForm)
      .map((effect) => requestDestination('SUBMIT', effect.url, true).replace(/^SUBMIT/, 'form submit to')),
    ...effects
      .filter((effect) => !effect.submitsForm)
      .map((effect) => requestDestination('GET', effect.url, true)),
  ];
  const unique = [...new Set(shown)];
  return unique.length > 0 ? { destination: unique.join(', or ') } : {};
}
