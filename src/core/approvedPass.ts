// The pass an approved action opens at the choke point (docs/architecture.md "Policy at the choke point", 2): which
// writes to sensitive pages and which navigations it lets through, predicted from the facts the human was shown;
// and how the requests the choke point stopped are told.

import { type PassSpec, writeTargetOf } from './actionPasses.ts';
import type { ToldLines } from './backstop.ts';
import type { ActionFacts } from './callTypes.ts';
import type { ShownForm } from './formBodies.ts';
import { type Decision, originOf } from './guard.ts';
import { shownWhole } from './shownPlaces.ts';

/** No request stopped. */
export const noStops: ToldLines = { lines: [], unkept: 0 };

/** How many requests a list of stops stands for: its lines, and those counted but not kept (a page's flood). */
export function stopsCount(stops: ToldLines): number {
  return stops.lines.length + stops.unkept;
}

/** Stops told together (those after the tab's last action, then the action's own), their counts added. */
export function joinStops(first: ToldLines, second: ToldLines): ToldLines {
  return {
    lines: [...first.lines, ...second.lines],
    unkept: first.unkept + second.unkept,
    atLeast: first.atLeast === true || second.atLeast === true,
  };
}

/** "at least " when so many were let go that even their count is a floor. */
const floorOf = (stops: ToldLines): string => (stops.atLeast ? 'at least ' : '');

export function stoppedSummary(stops: ToldLines): string {
  const total = stopsCount(stops);
  const shown = stops.lines.slice(0, 5);
  const more = total - shown.length > 0 ? ` (and ${total - shown.length} more)` : '';
  return `tabward stopped ${floorOf(stops)}${total} request(s)${more}:\n${shown.join('\n')}`;
}

/** At most `max` lines of a list of stops, for the audit record: the first ones, then how many more. */
export function shownStops(stops: ToldLines, max: number): string[] {
  const total = stopsCount(stops);
  if (total <= max) return [...stops.lines];
  const shown = stops.lines.slice(0, max - 1);
  return [...shown, `(and ${floorOf(stops)}${total - shown.length} more)`];
}

/**
 * The requests an approved action may send to sensitive pages: each form action the human saw, once, from the tab
 * and the document they were asked about; a top-level navigation to where they saw it lead (a link, the approved
 * destination: not a form's action, whose GET submission is asked on its own, showing its query), and a redirect
 * hop of one within those origins or the page's (a redirect after a post). A link opens no write: the human saw a
 * GET. An action with no predicted target (a script button, a script, a resize, a site tool) opens no write at all:
 * whatever it makes the page send to a sensitive page is held and asked as a question of its own, showing that
 * request (docs/architecture.md, "Passes").
 */
export function passFor(facts: ActionFacts, decision: Decision): PassSpec | undefined {
  if (decision.verdict !== 'ask' || !decision.sensitive) return undefined;
  const [elementFrame] = facts.frames;
  const frameOrigins = facts.frames.slice(0, 1).map((frame) => originOf(frame.url, frame.creatorUrl));
  // Only what the question showed whole: a place cut from the line is not the human's to have approved.
  const seen = shownWhole(facts);
  const effects = (facts.effects ?? []).filter((effect) => seen(effect.url));
  const destination = facts.destination && seen(facts.destination) ? facts.destination : undefined;
  const forms = effects.filter((effect) => effect.submitsForm);
  const links = effects.filter((effect) => !effect.submitsForm);
  // A navigation the human approved is a GET: it opens no write toward its destination (a page being left could
  // post there under its cover), and neither does a link.
  // Only a post whose fields were read and shown opens a write: one tabward could not read (its FormData threw)
  // is held and asked as it goes, its body shown.
  const writeTargets = forms
    .filter((effect) => effect.sendsAs !== undefined)
    .flatMap((effect) => writeTargetOf(effect.url) ?? []);
  // A form's post is covered with the fields the human was shown, and no others.
  const writeForms: Record<string, ShownForm[]> = {};
  for (const effect of forms) {
    const target = writeTargetOf(effect.url);
    if (target && effect.sendsAs !== undefined)
      writeForms[target] = [
        ...(writeForms[target] ?? []),
        {
          sendsAs: effect.sendsAs,
          fields: effect.fields ?? [],
          ...(effect.sealed ? { sealed: effect.sealed } : {}),
          ...(effect.charset ? { charset: effect.charset } : {}),
        },
      ];
  }
  // A form's address is no navigation of the pass: its POST is the write above, and a page answering it with a
  // GET to that address and a query of its own (?delete_account=yes) is not what the human saw.
  const navigationTargets = [destination, ...links.map((effect) => effect.url)].flatMap((url) =>
    url ? (writeTargetOf(url) ?? []) : [],
  );
  const navigationOrigins = [
    ...(destination ? [originOf(destination)] : []),
    ...effects.map((effect) => originOf(effect.url)),
    ...frameOrigins,
  ];
  // The document that holds the form: only its own submission spends the pass (an opaque one has no origin to match).
  const writeOrigin = elementFrame ? originOf(elementFrame.url, elementFrame.creatorUrl) : undefined;
  return {
    writeTargets,
    ...(Object.keys(writeForms).length > 0 ? { writeForms } : {}),
    ...(writeOrigin && /^https?:\/\//.test(writeOrigin) ? { writeOrigin } : {}),
    navigationTargets,
    navigationOrigins,
    topFrame: facts.frames.length <= 1,
    ...(facts.tab ? { scope: facts.tab.id } : {}),
  };
}
