// Where an action goes, as a question shows it on its "Sends:" line: the places the human may approve, each shown
// whole or shown cut (docs/architecture.md "Policy at the choke point", 2). What a yes covers is decided from this
// same list, so that nothing the human did not see whole is covered: the pass (approvedPass.ts) and the hosts a
// yes to a taint question allows (guard.ts taintAllowance).

import type { Effect } from './guard.ts';
import { requestDestination } from './networkHolds.ts';

/** What shownPlaces reads of an action. */
export interface PlacesFacts {
  readonly destination?: string;
  readonly effects?: readonly Effect[];
}

/** The longest reason line a question shows (approvalDisplay.ts cuts there). */
export const reasonMaxChars = 300;

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
function shownPlaces(facts: PlacesFacts): Map<string, ShownPlace> {
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
export function destinationOf(facts: PlacesFacts): { destination?: string } {
  const places = shownPlaces(facts);
  const texts = [...places.entries()].flatMap(([url, place]) =>
    url !== noteKey && place.text ? [place.text] : [],
  );
  const note = places.get(noteKey)?.text ?? '';
  return texts.length > 0 ? { destination: `${texts.join(separatorText)}${note}` } : {};
}

/**
 * What each form the question names would send (its fields, as the page holds them now), for the human: a form
 * shown whole on the Sends line, in that order. The pass lets its write through with that body only (approvedPass.ts).
 */
export function formDataOf(facts: PlacesFacts): { formData?: (readonly (readonly [string, string])[])[] } {
  const seen = shownWhole(facts);
  const forms = (facts.effects ?? []).filter(
    (effect) => effect.submitsForm && effect.fields !== undefined && seen(effect.url),
  );
  return forms.length > 0 ? { formData: forms.map((effect) => effect.fields ?? []) } : {};
}

/** Whether a place (a URL of the action's destination or effects) is shown whole: only then may a yes cover it. */
export function shownWhole(facts: PlacesFacts): (url: string) => boolean {
  const places = shownPlaces(facts);
  return (url) => places.get(url)?.whole === true;
}
