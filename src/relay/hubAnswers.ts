// What goes between the relay and a paired browser's extension for one task, as relay/extensionHub.ts hands it
// on: the requests (locate, ask, call), the answers and their timings, an answer that came late, and how a missing
// or failed answer reads as one of tabward's errors.

import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import { TabwardError } from '../core/errors.ts';
import type {
  CallOutcome,
  CallTarget,
  CallTiming,
  ExtensionToRelay,
  RelayToExtension,
} from '../protocol/siteTools.ts';

/** The three exchanges of one task with the browser it was routed to. */
export type Exchange = 'locate' | 'ask' | 'call';

/** How long a connected browser has to answer a ping when a second socket claims to be it. */
export const claimProbeMs = 3000;

/** What the browser answered a `call`, and the time each side spent on it. */
export interface CallAnswer {
  readonly outcome: CallOutcome;
  /** Relay -> extension -> relay, from sending `call` to reading `outcome` (ms). */
  readonly roundTripMs: number;
  readonly timing?: CallTiming;
}

export interface Located {
  readonly target: CallTarget;
  readonly roundTripMs: number;
  /** The extension's own share of the round trip (ms). */
  readonly workerMs: number;
}

/** An answer that came when nobody waited for it any more (late outcome after a drop or a deadline). */
export type LateAnswer = Exclude<ExtensionToRelay, { t: 'sites' } | { t: 'ping' }>;

type Message<T extends RelayToExtension['t']> = Omit<Extract<RelayToExtension, { t: T }>, 't' | 'taskId'>;
export type LocateRequest = Message<'locate'> & { readonly workspace: string };
export type AskRequest = Message<'ask'>;
export type CallRequest = Message<'call'>;
export type HumanDecision = 'approved' | 'denied' | 'always';

export function newTaskId(): string {
  return `task-${randomBytes(5).toString('hex')}`;
}

/** Resolves true when the socket's peer answers a ping within claimProbeMs. */
export function answersPing(socket: WebSocket): Promise<boolean> {
  if (socket.readyState !== socket.OPEN) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (alive: boolean): void => {
      clearTimeout(timer);
      socket.off('pong', onPong);
      socket.off('close', onClose);
      resolve(alive);
    };
    const onPong = (): void => done(true);
    const onClose = (): void => done(false);
    const timer = setTimeout(() => done(false), claimProbeMs);
    socket.on('pong', onPong);
    socket.on('close', onClose);
    socket.ping();
  });
}

export function failed(
  code: Extract<CallOutcome, { ok: false }>['error']['code'],
  message: string,
): CallOutcome {
  return { ok: false, error: { code, message } };
}

/** The call reached the browser and no answer came back: it may or may not have run. */
export function unknownOutcome(code: 'timeout' | 'not_connected', why: string): CallOutcome {
  return {
    ok: false,
    error: {
      code,
      message: `${why} The outcome is unknown: the page may or may not have done it.`,
      unknownOutcome: true,
    },
  };
}

export function stoppingError(what: string): TabwardError {
  return new TabwardError(
    'browser_unavailable',
    `The relay is stopping; ${what}.`,
    'Call again once it is back (a new session: the relay forgets sessions when it stops).',
  );
}

/** What the popup says about a question the relay stopped waiting for. */
export function cancelReason(answer: 'timeout' | 'aborted', kind: Exchange, timeoutMs: number): string {
  if (answer === 'aborted') return 'the agent cancelled the call (or went away); nothing was run';
  return kind === 'ask'
    ? `no answer within the call's deadline (${seconds(timeoutMs)} s): the agent was told it failed; nothing was run`
    : `the relay stopped waiting after the call's deadline (${seconds(timeoutMs)} s)`;
}

export function seconds(ms: number): number {
  return Math.round(ms / 1000);
}

export function errorCodeOf(
  code: Extract<CallOutcome, { ok: false }>['error']['code'],
): TabwardError['code'] {
  return callErrorCodes[code];
}

/** How a failure the extension reports reads as one of tabward's error codes. */
export const callErrorCodes = {
  denied: 'rejected',
  timeout: 'timeout',
  unregistered: 'not_found',
  no_tab: 'browser_unavailable',
  no_tool: 'not_found',
  tool_failed: 'internal',
  too_large: 'bad_input',
  not_connected: 'browser_unavailable',
  not_shared: 'not_found',
  moved: 'rejected',
} as const satisfies Record<Extract<CallOutcome, { ok: false }>['error']['code'], TabwardError['code']>;
