// Idempotency keys of site calls. An agent that may retry a call passes `idempotencyKey`; the relay never runs
// two calls with one key (per agent, for a day), and a key names one call: the same key with another site, tool or
// arguments is refused, saying so (its first call's outcome is never handed to another):
// - the earlier call is done: the retry gets its outcome again (ok or the error it got), nothing runs;
// - the earlier call is still running, or its outcome is unknown (it reached the page and no answer came back:
//   a dropped socket, a deadline, the relay stopping): the retry is refused, saying so, nothing runs. An outcome
//   that arrives late settles the key, and the next retry gets it;
// - the earlier call surely did not run (denied, refused, never reached the page) or the page said its tool
//   failed: the key is free, the retry runs.

import { createHash } from 'node:crypto';
import { TabwardError } from '../core/errors.ts';
import type { CallOutcome } from '../protocol/siteTools.ts';
import { callErrorCodes } from './extensionHub.ts';
import type { KeyRecord } from './relayStore.ts';

const maxKeyLength = 200;

/** The agent's key, checked: short printable text. */
export function keyArgument(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !value || value.length > maxKeyLength || /[\p{Cc}]/u.test(value))
    throw new TabwardError(
      'bad_input',
      `"idempotencyKey" must be a string of 1 to ${maxKeyLength} printable characters.`,
      'Use a fresh random id per intended action, and the same one when retrying it.',
    );
  return value;
}

/** What a key is bound to: the site, the tool and the arguments (object keys in any order), hashed. */
export function callHashOf(origin: string, tool: string, args: Readonly<Record<string, unknown>>): string {
  return createHash('sha256')
    .update(JSON.stringify([origin, tool, canonical(args)]))
    .digest('hex');
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, inner]) => [name, canonical(inner)]),
    );
  return value;
}

/** What the agent gets for a retry of a key already used: the earlier outcome, or a refusal. */
export function answerForEarlier(
  earlier: KeyRecord,
  key: string,
  callHash: string,
): { taskId: string; result: string } {
  const named = `The call with idempotency key "${key}" (${earlier.taskId})`;
  // A store from before keys were bound ('') cannot tell: refused too, as a key reused for another call would be.
  if (earlier.callHash !== callHash)
    throw new TabwardError(
      'bad_input',
      `The idempotency key "${key}" was given to another call (${earlier.taskId}: another site, tool or arguments); a key names one call. Nothing was run.`,
      'Use a new key for this call, and the same key only to retry the very same call.',
    );
  if (earlier.state === 'running')
    throw new TabwardError(
      'rejected',
      `${named} is still running; this retry was not run.`,
      'Wait for its answer instead of retrying.',
    );
  if (earlier.state === 'unknown')
    throw new TabwardError(
      'rejected',
      `${named} may or may not have run (${earlier.detail}); this retry was not run.`,
      'Check the site. Its outcome, if the browser sends it later, is given to the next retry with this key; to run the action again anyway, use a new key.',
    );
  const outcome = JSON.parse(earlier.detail) as CallOutcome;
  if (outcome.ok) return { taskId: earlier.taskId, result: outcome.result };
  throw new TabwardError(
    callErrorCodes[outcome.error.code],
    `${named} ran already and failed: ${outcome.error.message} Not run again.`,
  );
}

/** What an outcome means for the key of its task. */
export function keySettlement(outcome: CallOutcome): { state: 'done' | 'unknown' | 'free'; detail: string } {
  if (outcome.ok) return { state: 'done', detail: JSON.stringify(outcome) };
  if (outcome.error.unknownOutcome) return { state: 'unknown', detail: outcome.error.message };
  // It ran; only its answer did not fit: running it again would do it twice.
  if (outcome.error.code === 'too_large') return { state: 'done', detail: JSON.stringify(outcome) };
  return { state: 'free', detail: '' };
}
