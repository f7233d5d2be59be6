// Deadlines for browser work: nothing the browser does may hang a caller. A call races its own work against
// a timer and against the page's interruptions (a dialog opening, a crash, the tab closing).

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
  try {
    return await Promise.race(interrupt ? [work, timeout, interrupt] : [work, timeout]);
  } finally {
    clearTimeout(timer);
    // The losing work may still reject later; that outcome is no longer anyone's to handle.
    work.catch(() => undefined);
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
  return new TabwardError('internal', `${what} failed: ${firstLine(message)}`);
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.slice(0, 300) ?? '';
}
