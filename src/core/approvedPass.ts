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
  // Only what the question showed whole: a place cut from the line is not the human's to have approved.
  const places = shownPlaces(facts);
  const seen = (url: string) => places.get(url)?.whole === true;
  const effects = (facts.effects ?? []).filter((effect) => seen(effect.url));
  const destination = facts.destination && seen(facts.destination) ? facts.destination : undefined;
  const forms = effects.filter((effect) => effect.submitsForm);
  const links = effects.filter((effect) => !effect.submitsForm);
  // A navigation the human approved is a GET: it opens no write toward its destination (a page being left could
  // post there under its cover), and neither does a link.
  const writeTargets = forms.flatMap((effect) => writeTargetOf(effect.url) ?? []);
  const navigationTargets = [
    ...[destination, ...links.map((effect) => effect.url)].flatMap((url) =>
      url ? (navigationTarget(url, false) ?? []) : [],
    ),
    ...forms.flatMap((effect) => navigationTarget(effect.url, true) ?? []),
  ];
  const navigationOrigins = [
    ...(destination ? [originOf(destination)] : []),
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

/** The longest "Sends:" line a question shows (approvalDisplay.ts cuts there). */
export const destinationMaxChars = 1_000;

interface ShownPlace {
  readonly text: string;
  /** Shown whole: the pass may cover it. */
  readonly whole: boolean;
}

/**
 * Where the action goes, as the question shows it: a navigation's destination, or every form and link the element
 * has (a button inside a link submits its form, not the link), forms first, each with its query (a GET can write).
 * Within `destinationMaxChars`: a place that does not fit whole is named cut, and the pass does not cover it
 * (passFor), so a long first place cannot push a dangerous one out of view and still have it approved.
 */
function shownPlaces(facts: ActionFacts): Map<string, ShownPlace> {
  const wanted = facts.destination
    ? [{ url: facts.destination, text: requestDestination('GET', facts.destination, true) }]
    : [
        ...(facts.effects ?? [])
          .filter((effect) => effect.submitsForm)
          .map((effect) => ({
            url: effect.url,
            text: requestDestination('SUBMIT', effect.url, true).replace(/^SUBMIT/, 'form submit to'),
          })),
        ...(facts.effects ?? [])
          .filter((effect) => !effect.submitsForm)
          .map((effect) => ({ url: effect.url, text: requestDestination('GET', effect.url, true) })),
      ];
  const shown = new Map<string, ShownPlace>();
  // Room is kept for the note that says how many places were left out.
  let room = destinationMaxChars - leftOutNote(wanted.length).length;
  let leftOut = 0;
  for (const { url, text } of wanted) {
    if (shown.has(url)) continue;
    const separator = shown.size > 0 ? separatorText.length : 0;
    if (text.length + separator <= room) {
      shown.set(url, { text, whole: true });
      room -= separator + text.length;
    } else if (room - separator > cutNote.length + 20) {
      const fitted = `${text.slice(0, room - separator - cutNote.length)}${cutNote}`;
      shown.set(url, { text: fitted, whole: false });
      room -= separator + fitted.length;
    } else {
      shown.set(url, { text: '', whole: false });
      leftOut++;
    }
  }
  if (leftOut > 0) shown.set(noteKey, { text: leftOutNote(leftOut), whole: false });
  return shown;
}

const leftOutNote = (count: number) =>
  ` (and ${count} more place(s) not shown, not covered by this approval)`;
const separatorText = ', or ';
/** The key of the left-out note among the places (no URL is empty of a scheme). */
const noteKey = 'note:';
const cutNote = '… (cut: not covered by this approval)';

/** Where the guard predicts the action sends, as the human is shown it (shownPlaces). */
export function destinationOf(facts: ActionFacts): { destination?: string } {
  const places = shownPlaces(facts);
  const texts = [...places.entries()].flatMap(([url, place]) =>
    url !== noteKey && place.text ? [place.text] : [],
  );
  const note = places.get(noteKey)?.text ?? '';
  return texts.length > 0 ? { destination: `${texts.join(separatorText)}${note}` } : {};
}
