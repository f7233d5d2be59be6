// Does an action look destructive? Judged from what a person would read (the element's accessible name or text)
// and where it sends data (its form's action, its link), in English and Chinese. The guard turns the answer into
// a decision (rule 6 under --policy destructive-asks, the recipes' policy). The words are protocol/'s, shared
// with the relay and the extension's judgement of site tools.

import { destructiveWords } from '../protocol/destructiveWords.ts';

/**
 * Why an action reads as destructive, or undefined: the name a person reads on the element, or the path and query
 * of a URL it sends data to or goes to (a form action, a link, a recipe's goto): `/orders/17?do=refund` refunds as
 * surely as `/orders/17/refund`. A fact for the guard, which decides what it means.
 */
export function destructiveReason(name: string, targetUrls: readonly string[]): string | undefined {
  if (destructiveWords.some((word) => word.test(name)))
    return `its label "${name.slice(0, 60)}" reads as destructive`;
  for (const url of targetUrls) {
    const place = pathAndQuery(url);
    if (destructiveWords.some((word) => word.test(place.replace(/[/_\-?&=+]+/g, ' '))))
      return `it sends to ${place.length > 120 ? `${place.slice(0, 117)}...` : place}`;
  }
  return undefined;
}

function pathAndQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return decodeURIComponent(`${parsed.pathname}${parsed.search}`);
  } catch {
    return url;
  }
}
