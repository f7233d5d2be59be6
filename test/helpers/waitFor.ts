// The one wait-for-condition helper: polls until the probe returns something other than undefined/false, or
// fails after a bound with a message that says what never happened. No fixed sleeps in tests.

import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
}

/** Resolves with the probe's first usable value; rejects after `timeoutMs` (default 30 s) naming `what`. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(options.intervalMs ?? 50);
  }
  const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  throw new Error(`timed out waiting for ${what}${why}`);
}

/** `promise`, or a rejection naming `what` if it has not settled within `timeoutMs` (default 10 s). */
export async function within<T>(what: string, promise: Promise<T>, timeoutMs = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
