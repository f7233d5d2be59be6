// Deadlines for browser work: nothing the browser does may hang a caller. A call races its own work against
// a timer and against the page's interruptions (a dialog opening, a crash, the tab closing).

import { swallow } from '../core/debug.ts';
import { TabwardError } from '../core/errors.ts';

export async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  what: string,
  interrupt?: Promise<never>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new TabwardError(
            'timeout',
            `${what} did not finish within ${ms} ms.`,
            'The page may be busy; try again or wait_for something first.',
          ),
        ),
      ms,
    );
  });
  // The losing work may still reject later; that outcome is no longer anyone's to handle (a failure that won the race
  // is the caller's, and is not told to the debug channel).
  let raced = false;
  const late = swallow(
    'browser',
    'deadline.withDeadline: the work failed after its deadline or an interruption',
  );
  work.catch((error: unknown) => (raced ? late(error) : undefined));
  try {
    return await Promise.race(interrupt ? [work, timeout, interrupt] : [work, timeout]);
  } finally {
    raced = true;
    clearTimeout(timer);
  }
}

/**
 * Waits for `work` to settle, at most `ms`; what it resolved to, else `undefined` (a failure counts as settled).
 * The timer goes with the wait: a bounded wait that ended early must not keep a finished CLI run alive.
 */
export async function settledWithin<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([
      work.catch(swallow('browser', 'deadline.settledWithin: the work failed, read as no answer')),
      elapsed,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Translates Playwright's failures into tabward's error codes, once, here. */
export function translateBrowserError(error: unknown, what: string): TabwardError {
  if (error instanceof TabwardError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError') return new TabwardError('timeout', `${what} timed out: ${firstLine(message)}`);
  if (/Target page, context or browser has been closed|Target closed|has been closed/i.test(message)) {
    return new TabwardError(
      'page_closed',
      `${what} failed: the tab or browser has been closed.`,
      'Use list_pages.',
    );
  }
  if (/crash/i.test(message))
    return new TabwardError(
      'page_crashed',
      `${what} failed: the tab crashed.`,
      'Open it again with new_page.',
    );
  return (
    translateKnownMessage(message, what) ??
    new TabwardError('internal', `${what} failed: ${firstLine(message)}`)
  );
}

/**
 * Playwright's other failures say in words what happened; each known kind gets the code the agent can act on
 * (a new snapshot, a fixed script, another URL, answering a dialog) instead of "internal".
 */
const knownMessages: readonly { pattern: RegExp; code: TabwardError['code']; hint: string }[] = [
  {
    pattern:
      /Execution context was destroyed|frame was detached|Frame has been detached|navigating and changing the content/i,
    code: 'stale_ref',
    hint: 'The page navigated meanwhile; take a new snapshot.',
  },
  {
    pattern:
      /not attached to the DOM|Node is detached|strict mode violation|No node found|Unable to adopt element/i,
    code: 'stale_ref',
    hint: 'The element changed; take a new snapshot.',
  },
  {
    pattern: /JavaScript dialog/i,
    code: 'dialog_open',
    hint: 'Answer it with handle_dialog.',
  },
  {
    // The site could not be reached at all (refused, reset, DNS, TLS): the address or the network, not the page.
    pattern:
      /net::ERR_(CONNECTION_|NAME_|ADDRESS_|INTERNET_DISCONNECTED|NETWORK_|TIMED_OUT|EMPTY_RESPONSE|SSL_|CERT_|BAD_SSL|TUNNEL_|PROXY_|SOCKS_)/,
    code: 'network',
    hint: "The site could not be reached: check the address, that the site is up, and this machine's network.",
  },
  {
    pattern: /net::ERR_|NS_ERROR_|Cannot navigate to invalid URL/,
    code: 'not_found',
    hint: 'The page could not be loaded; check the URL, or that the site is up.',
  },
  {
    // Only what a page script threw (a bug of tabward's own stays "internal").
    pattern: /^\w+\.evaluate(Handle)?: |Evaluation failed/,
    code: 'bad_input',
    hint: 'The script failed in the page; fix it and try again.',
  },
];

function translateKnownMessage(message: string, what: string): TabwardError | undefined {
  const known = knownMessages.find((entry) => entry.pattern.test(message));
  return known
    ? new TabwardError(known.code, `${what} failed: ${firstLine(message)}`, known.hint)
    : undefined;
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.slice(0, 300) ?? '';
}
