// Does an action look destructive? Judged from what a person would read (the element's accessible name or text)
// and where it sends data or goes (its form's action, its link, a recipe's goto), in English and Chinese. The guard
// turns the answer into a decision (rule 6 under --policy destructive-asks, the recipes' policy). The label words
// are protocol/'s, shared with the relay and the extension's judgement of site tools.

import { destructiveVerbs, destructiveWords, isVerbForm, wordsOf } from '../protocol/destructiveWords.ts';
import { quotedForDisplay } from './displayText.ts';

/** Where an action sends or goes: an address (a link, a goto), or a form it submits. */
export type Target = string | { readonly url: string; readonly submitsForm: boolean };

/**
 * Why an action reads as destructive, or undefined: the name a person reads on the element, an address it goes to
 * that names an action (destructiveAddress), or a form's address in any words a label could say it in
 * (`/orders/17/confirm-shipment`: a form is a write already, and its address says which). A fact for the guard,
 * which decides what it means.
 */
export function destructiveReason(name: string, targets: readonly Target[]): string | undefined {
  if (destructiveWords.some((word) => word.test(name)))
    return `its label ${quotedForDisplay(name, 60)} reads as destructive`;
  for (const target of targets) {
    const { url, submitsForm } = typeof target === 'string' ? { url: target, submitsForm: false } : target;
    const place = destructiveAddress(url) ?? (submitsForm ? formAddressInWords(url) : undefined);
    if (place) return `it sends to ${place.length > 120 ? `${place.slice(0, 117)}...` : place}`;
  }
  return undefined;
}

/** A form's path and query when label words are in them (`confirm shipment` in /orders/17/confirm-shipment). */
function formAddressInWords(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    const place = decoded(`${parsed.pathname}${parsed.search}`);
    return destructiveWords.some((word) => word.test(place.replace(/[/_\-?&=+.;]+/g, ' ')))
      ? place
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The verbs that make an address an action rather than a page (destructiveVerbs): `/orders/17/refund`,
 * `/posts/5/delete`, `?do=refund`. Labels are read as a person reads them (destructiveWords); an address is read by its words, where
 * nouns of the same stem are pages to read (`/transfers`, `/account/purchases`, `/reports/refunds.csv`, sorted
 * `?sort=reverse`, a search `?q=remove+stains`, `/shipping`) and only the verb itself is an action.
 */
/** The Chinese label words (destructiveWords' last): an address that spells one out reads as it. */
const chineseWords = destructiveWords.at(-1);

/**
 * The path and query of an http(s) address that reads as an action, or undefined: a path segment, or a query
 * parameter's name, whose first or last word is one of them (or its -ing form: `doRefund`, `refunding`,
 * `delete-account`, `revoke_all=1`), or a parameter whose whole value is one (`action=delete`). Percent-escapes are
 * decoded one run at a time, so that a stray `%` cannot keep `%72efund` from reading as refund.
 */
export function destructiveAddress(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const path = decoded(parsed.pathname);
  const query = parsed.search.slice(1);
  const place = `${path}${query ? `?${decoded(query)}` : ''}`;
  if (chineseWords?.test(place)) return place;
  const segments = path.split('/');
  const parameters = query
    .split('&')
    .map((pair) => pair.split('=').map((part) => decoded(part.replace(/\+/g, ' '))));
  const acts =
    segments.some((segment) => endsAreVerbs(wordsOf(segment))) ||
    parameters.some(([name = '', value = '']) => endsAreVerbs(wordsOf(name)) || isVerbAlone(wordsOf(value)));
  return acts ? place : undefined;
}

/** Each run of percent-escapes decoded on its own; one that is not UTF-8 is left as it is. */
function decoded(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

function isVerb(word: string | undefined): boolean {
  return word !== undefined && destructiveVerbs.some((verb) => isVerbForm(word, verb, false));
}

function endsAreVerbs(list: readonly string[]): boolean {
  return isVerb(list[0]) || isVerb(list.at(-1));
}

function isVerbAlone(list: readonly string[]): boolean {
  return list.length === 1 && isVerb(list[0]);
}
