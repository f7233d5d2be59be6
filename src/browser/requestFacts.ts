// Small facts about one request the backstop's verdict reads (browser/requestJudge.ts): whether its sender can read
// the answer, its port, whether its address parses.

import type { Page } from 'playwright-core';
import type { RequestFacts } from '../core/networkHolds.ts';

export const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether the page that sent a request can read its answer: a read (GET, HEAD, OPTIONS: counted as before,
 * whoever sent it), a document, or a write from the same origin. A write another site's page sent (a no-cors POST)
 * gets an opaque answer, unless the sensitive site allows that origin by CORS (not known here). With neither the
 * sender nor its tab known (a worker's request), readable: fail closed.
 */
export function answerReadable(facts: RequestFacts, page: Page | undefined): boolean {
  if (safeMethods.has(facts.method.toUpperCase()) || facts.document) return true;
  const sender = facts.frameUrl ?? page?.url();
  if (!sender) return true;
  try {
    return new URL(sender).origin === new URL(facts.url).origin;
  } catch {
    return true;
  }
}

export function portOf(url: string): number | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.port) return Number(parsed.port);
    if (parsed.protocol === 'http:' || parsed.protocol === 'ws:') return 80;
    if (parsed.protocol === 'https:' || parsed.protocol === 'wss:') return 443;
    return undefined;
  } catch {
    return undefined;
  }
}

export function parses(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}
