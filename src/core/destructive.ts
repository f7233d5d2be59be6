// Does an action look destructive? Judged from what a person would read (the element's accessible name or text)
// and where it sends data (its form's action, its link), in English and Chinese. The guard turns the answer into
// a decision (rule 6 under --policy destructive-asks, the recipes' policy). The words are protocol/'s, shared
// with the relay and the extension's judgement of site tools.

import { destructiveWords } from '../protocol/destructiveWords.ts';

/**
 * Why an action reads as destructive, or undefined: the name a person reads on the element, or the path of a
 * URL it sends data to (a form action, a link). A fact for the guard, which decides what it means.
 */
export function destructiveReason(name: string, targetUrls: readonly string[]): string | undefined {
  if (destructiveWords.some((word) => word.test(name)))
    return `its label "${name.slice(0, 60)}" reads as destructive`;
  for (const url of targetUrls) {
    const path = safePath(url);
    if (destructiveWords.some((word) => word.test(path.replace(/[/_-]+/g, ' '))))
      return `it sends to ${path}`;
  }
  return undefined;
}

function safePath(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname);
  } catch {
    return url;
  }
}
