// The extension side of the relay: the WebSockets of paired extensions, grouped by workspace. One call's messages
// (locate the document that would run it, ask the human in the popup, run it there) all go to the extension first
// picked for the task (the one with an open tab of the site first), each answer awaited under a deadline; the
// workspace's activity is broadcast to every connected extension. Whenever the relay stops waiting for a task
// (deadline, the agent cancelled, the relay stopping) it tells the extension, which withdraws the task's approval;
// an answer for a task nobody waits for any more is handed to `onLateAnswer`, never dropped silently.
// One socket speaks for one paired browser: a second socket with the same credential is refused while the first
// answers a ping (the first one's popup is told), and a browser revoked at the relay (here or by another
// process) loses its socket the moment it is routed to or speaks.

import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import { TabwardError } from '../core/errors.ts';
import {
  type ActivityEntry,
  type CallOutcome,
  type CallTarget,
  type CallTiming,
  type ExtensionToRelay,
  type RelayToExtension,
  relayCloseCodes,
  type SharedSiteState,
} from '../protocol/siteTools.ts';
import type { ExtensionRecord, RelayStore } from './relayStore.ts';

interface Connection {
  readonly socket: WebSocket;
  readonly extension: ExtensionRecord;
  sites: readonly SharedSiteState[];
  /** The documents it last located, by "site tool": a read-only call may go straight to one (see recentTarget). */
  readonly located: Map<string, { readonly target: CallTarget; readonly at: number }>;
  reportedAt: number;
  /** Answered the last WebSocket ping: a socket whose peer vanished (sleep, network change) is dropped. */
  alive: boolean;
}

const heartbeatMs = 30_000;
/** How soon a running relay drops the socket of a browser revoked from another process. */
const revocationSweepMs = 5_000;
/** How long a connected browser has to answer a ping when a second socket claims to be it. */
const claimProbeMs = 3000;
/** How long a located document is reused for read-only calls (any site report from the browser forgets it). */
const locatedReuseMs = 30_000;
/** How long activity lines wait to go out together (a human reads them; a call should not wait for them). */
const activityDelayMs = 50;

type Exchange = 'locate' | 'ask' | 'call';

/** The extension's answer, or why there is none. */
type Answer = ExtensionToRelay | 'closed' | 'timeout' | 'aborted' | 'stopping';

interface Waiter {
  readonly connection: Connection;
  readonly settle: (answer: Answer) => void;
}

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

export class ExtensionHub {
  private readonly connections = new Set<Connection>();
  private readonly waiting = new Map<string, Waiter>();
  /** The browser each task was routed to: an approval given in one popup never runs a call in another browser. */
  private readonly routed = new Map<string, Connection>();
  private readonly heartbeat: ReturnType<typeof setInterval>;
  private readonly revocationSweep: ReturnType<typeof setInterval>;
  private stopping: string | undefined;
  private readonly activity = new Map<string, ActivityEntry[]>();
  private activityTimer: ReturnType<typeof setTimeout> | undefined;
  /** Browsers whose second socket is being weighed: a third one meanwhile is refused. */
  private readonly admitting = new Set<string>();
  /**
   * Told about every answer nobody waits for from this browser (the relay logs and audits it): `waitedOn` names
   * the browser the relay does wait on for it, when another one does (then the answer is a forgery, not late).
   */
  onLateAnswer: (answer: LateAnswer, from: ExtensionRecord, waitedOn?: ExtensionRecord) => void = () =>
    undefined;
  /** Told when a socket is refused or closed for its pairing (the relay logs and audits it). */
  onPairingEvent: (extension: ExtensionRecord, what: string) => void = () => undefined;

  constructor(
    private readonly store: RelayStore,
    /** The relay's sensitive-page rules, sent to each extension on connect. */
    private readonly rules: readonly string[] = [],
  ) {
    this.heartbeat = setInterval(() => {
      for (const connection of this.connections) {
        if (!connection.alive) connection.socket.terminate();
        connection.alive = false;
        connection.socket.ping();
      }
    }, heartbeatMs);
    this.heartbeat.unref();
    // A browser revoked by another process (the CLI) whose socket never speaks is found out here, not only
    // when a call is routed to it or it speaks.
    this.revocationSweep = setInterval(() => {
      for (const connection of [...this.connections]) this.stillPaired(connection);
    }, revocationSweepMs);
    this.revocationSweep.unref();
  }

  attach(socket: WebSocket, extension: ExtensionRecord): void {
    // Checked again at the last moment: the browser may have been unpaired while its ticket's socket waited to
    // be admitted (a ping probe takes up to 3 s).
    if (this.store.isExtensionRevoked(extension.id)) {
      this.onPairingEvent(
        extension,
        'a connection was refused: the browser was unpaired while it was admitted',
      );
      socket.close(relayCloseCodes.revoked, 'this browser was unpaired at the relay');
      return;
    }
    const connection: Connection = {
      socket,
      extension,
      sites: [],
      located: new Map(),
      reportedAt: 0,
      alive: true,
    };
    this.connections.add(connection);
    socket.on('pong', () => {
      connection.alive = true;
    });
    socket.on('message', (data) => this.receive(connection, String(data)));
    socket.on('close', () => this.detach(connection));
    socket.on('error', () => socket.terminate());
    this.send(connection, {
      t: 'welcome',
      workspace: extension.workspace,
      activity: this.store.recentActivity(extension.workspace, 50),
      rules: this.rules,
    });
  }

  /**
   * May a new socket speak for this browser? Not while its current socket answers a ping: then someone else
   * holds the credential (or the browser opened a second link), and the connected browser's popup is told. A
   * current socket that does not answer (the laptop slept) is dropped and the new one admitted.
   */
  async admit(extension: ExtensionRecord): Promise<boolean> {
    const live = [...this.connections].find((c) => c.extension.id === extension.id);
    if (!live && !this.admitting.has(extension.id)) return true;
    if (!live || this.admitting.has(extension.id)) return this.refuseClaim(extension, live);
    this.admitting.add(extension.id);
    try {
      if (!(await answersPing(live.socket))) {
        // Said as it happened: whoever holds the credential now speaks for this browser.
        this.onPairingEvent(
          extension,
          `its socket did not answer a ping within ${claimProbeMs / 1000} s and gave way to a new connection with its credential`,
        );
        live.socket.terminate();
        this.detach(live);
        return true;
      }
      return this.refuseClaim(extension, live);
    } finally {
      this.admitting.delete(extension.id);
    }
  }

  private refuseClaim(extension: ExtensionRecord, live: Connection | undefined): false {
    const what = `a second connection claimed to be browser ${extension.id} while it is connected; it was refused`;
    this.onPairingEvent(extension, what);
    if (live)
      this.send(live, {
        t: 'alert',
        at: new Date().toISOString(),
        message:
          'Another connection to the relay used this browser’s pairing and was refused. If you did not open tabward in a second place, someone else has this browser’s credential: Unpair, then pair again.',
      });
    return false;
  }

  /** The browser was unpaired: its sockets close now (their calls fail at once), telling it why. */
  revoke(extensionId: string, why: string): void {
    for (const connection of [...this.connections])
      if (connection.extension.id === extensionId) this.dropRevoked(connection, why);
  }

  private dropRevoked(connection: Connection, why: string): void {
    this.onPairingEvent(connection.extension, `its socket was closed: ${why}`);
    connection.socket.close(relayCloseCodes.revoked, 'this browser was unpaired at the relay');
    this.detach(connection);
  }

  /** Still paired? A browser revoked by another process (the CLI) is found out here and dropped. */
  private stillPaired(connection: Connection): boolean {
    if (!this.store.isExtensionRevoked(connection.extension.id)) return true;
    this.dropRevoked(connection, 'the browser was revoked (tabward relay browsers revoke)');
    return false;
  }

  /** Asks the extension sharing the site which document (and URL) would run the call; nothing runs yet. */
  async locate(taskId: string, request: LocateRequest): Promise<Located> {
    const { workspace, ...message } = request;
    const connection = this.routed.get(taskId) ?? this.route(workspace, request.site);
    if (!connection || !this.connections.has(connection))
      throw new TabwardError(
        'browser_unavailable',
        `No browser of workspace "${workspace}" is connected with ${request.site} shared. Open Chrome with the tabward extension and share the site from its popup.`,
      );
    this.routed.set(taskId, connection);
    const sent = performance.now();
    const answer = await this.exchange(
      connection,
      taskId,
      'locate',
      { t: 'locate', taskId, ...message },
      request.deadlineMs,
    );
    if (answer === 'timeout')
      throw new TabwardError(
        'timeout',
        `The browser did not say within ${seconds(request.deadlineMs)} s which tab would run ${request.tool}.`,
      );
    if (answer === 'stopping') throw stoppingError('nothing was run');
    if (typeof answer === 'string' || answer.t !== 'located')
      throw new TabwardError(
        'browser_unavailable',
        `The browser disconnected during ${taskId}; nothing was run.`,
      );
    if ('error' in answer) throw new TabwardError(errorCodeOf(answer.error.code), answer.error.message);
    connection.located.set(`${request.site} ${request.tool}`, { target: answer.target, at: Date.now() });
    return { target: answer.target, roundTripMs: performance.now() - sent, workerMs: answer.spentMs ?? 0 };
  }

  /**
   * The document the browser last located for this site and tool, if recent: a read-only call may be judged on
   * it and sent straight there, saving a round trip. Safe because the browser runs a call only in the document
   * it names, still at the URL judged (else: "moved", nothing run, and the caller locates afresh).
   */
  recentTarget(taskId: string, workspace: string, site: string, tool: string): CallTarget | undefined {
    const connection = this.route(workspace, site);
    const entry = connection?.located.get(`${site} ${tool}`);
    if (!connection || !entry || Date.now() - entry.at > locatedReuseMs) return undefined;
    this.routed.set(taskId, connection);
    return entry.target;
  }

  /** A reused document turned out gone or moved: locate afresh from now on. */
  forgetTarget(taskId: string, site: string, tool: string): void {
    this.routed.get(taskId)?.located.delete(`${site} ${tool}`);
  }

  /** Shows the question in the popups of the browser the task was routed to; a withdrawn or unanswered one is denied. */
  async ask(taskId: string, request: AskRequest, signal?: AbortSignal): Promise<HumanDecision> {
    const connection = this.routed.get(taskId);
    if (!connection) return 'denied';
    const answer = await this.exchange(
      connection,
      taskId,
      'ask',
      { t: 'ask', taskId, ...request },
      request.deadlineMs,
      signal,
    );
    if (answer === 'stopping') throw stoppingError('nothing was run');
    if (answer === 'closed')
      throw new TabwardError(
        'browser_unavailable',
        `The browser disconnected while ${taskId} waited for approval; its question was withdrawn and nothing was run.`,
      );
    return typeof answer !== 'string' && answer.t === 'decision' ? answer.decision : 'denied';
  }

  /** Runs the call on the located document and resolves with its outcome; never rejects. */
  async call(taskId: string, request: CallRequest, signal?: AbortSignal): Promise<CallAnswer> {
    const connection = this.routed.get(taskId);
    const sent = performance.now();
    const answered = (outcome: CallOutcome, timing?: CallTiming): CallAnswer => ({
      outcome,
      roundTripMs: performance.now() - sent,
      ...(timing ? { timing } : {}),
    });
    if (!connection || !this.connections.has(connection))
      return answered(failed('not_connected', `The browser disconnected during ${taskId}; nothing was run.`));
    this.store.setTaskBrowser(taskId, connection.extension.id);
    const answer = await this.exchange(
      connection,
      taskId,
      'call',
      { t: 'call', taskId, ...request },
      request.deadlineMs,
      signal,
    );
    if (typeof answer !== 'string' && answer.t === 'outcome') return answered(answer.outcome, answer.timing);
    const why =
      answer === 'timeout'
        ? `No outcome within ${seconds(request.deadlineMs)} s (waiting for the human, or the page).`
        : answer === 'stopping'
          ? `The relay is stopping while ${taskId} runs in the browser.`
          : answer === 'aborted'
            ? `The call was cancelled while ${taskId} ran in the browser.`
            : `The browser disconnected during ${taskId}.`;
    return answered(unknownOutcome(answer === 'timeout' ? 'timeout' : 'not_connected', why));
  }

  /** The task is over: forget where it was routed. */
  finish(taskId: string): void {
    this.routed.delete(taskId);
  }

  /**
   * Adds a line to the workspace's activity feed. Lines are stored and sent together a moment later: a call's
   * own messages never wait behind them (each message wakes the browser's worker; each write costs time).
   */
  record(workspace: string, entry: ActivityEntry): void {
    const queued = this.activity.get(workspace) ?? [];
    queued.push(entry);
    this.activity.set(workspace, queued);
    this.activityTimer ??= setTimeout(() => this.flushActivity(), activityDelayMs);
  }

  private flushActivity(): void {
    clearTimeout(this.activityTimer);
    this.activityTimer = undefined;
    for (const [workspace, entries] of this.activity) {
      this.store.addActivity(workspace, entries);
      for (const connection of this.connections)
        if (connection.extension.workspace === workspace) this.send(connection, { t: 'activity', entries });
    }
    this.activity.clear();
  }

  /**
   * The relay is going down: every task still waited on is answered at once ('stopping'), and its browser told
   * to withdraw any question about it. Later calls are refused.
   */
  stop(reason: string): void {
    this.stopping = reason;
    for (const [key, waiter] of [...this.waiting]) {
      this.send(waiter.connection, { t: 'cancel', taskId: key.split(' ')[0] ?? '', reason });
      waiter.settle('stopping');
    }
  }

  closeAll(): void {
    this.flushActivity();
    clearInterval(this.heartbeat);
    clearInterval(this.revocationSweep);
    for (const connection of this.connections) connection.socket.close(1001, 'the relay is stopping');
    for (const connection of this.connections) connection.socket.terminate();
  }

  /** A connected browser of the workspace shares the site right now. */
  serves(workspace: string, site: string): boolean {
    return this.route(workspace, site) !== undefined;
  }

  private exchange(
    connection: Connection,
    taskId: string,
    kind: Exchange,
    message: RelayToExtension,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Answer> {
    const key = `${taskId} ${kind}`;
    if (this.stopping) return Promise.resolve('stopping');
    return new Promise((resolve) => {
      const finish = (answer: Answer): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.waiting.get(key)?.connection !== connection) return;
        this.waiting.delete(key);
        // The relay stops waiting: the browser must stop too (withdraw the question, never run it later).
        if (answer === 'timeout' || answer === 'aborted')
          this.send(connection, { t: 'cancel', taskId, reason: cancelReason(answer, kind, timeoutMs) });
        resolve(answer);
      };
      const onAbort = (): void => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), Math.max(0, timeoutMs));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(key, { connection, settle: finish });
      this.send(connection, message);
      if (signal?.aborted) finish('aborted');
    });
  }

  private route(workspace: string, site: string): Connection | undefined {
    const candidates = [...this.connections]
      .filter((c) => c.extension.workspace === workspace && this.stillPaired(c))
      .map((c) => ({ c, site: c.sites.find((s) => s.origin === site) }))
      .filter((entry) => entry.site !== undefined);
    candidates.sort(
      (a, b) =>
        Number((b.site?.openTabs ?? 0) > 0) - Number((a.site?.openTabs ?? 0) > 0) ||
        b.c.reportedAt - a.c.reportedAt,
    );
    return candidates[0]?.c;
  }

  private receive(connection: Connection, text: string): void {
    if (!this.connections.has(connection) || !this.stillPaired(connection)) return;
    let message: ExtensionToRelay;
    try {
      message = JSON.parse(text) as ExtensionToRelay;
    } catch {
      connection.socket.close(1003, 'messages are JSON');
      return;
    }
    if (message.t === 'sites' && Array.isArray(message.sites)) {
      connection.sites = message.sites;
      // Tabs opened, closed or navigated: which document would run a call is for the browser to say again.
      connection.located.clear();
      connection.reportedAt = Date.now();
      this.store.saveSites(connection.extension, message.sites);
      return;
    }
    const kind: Exchange | undefined =
      message.t === 'located'
        ? 'locate'
        : message.t === 'decision'
          ? 'ask'
          : message.t === 'outcome'
            ? 'call'
            : undefined;
    if (!kind || !('taskId' in message) || typeof message.taskId !== 'string') return;
    const waiter = this.waiting.get(`${message.taskId} ${kind}`);
    if (waiter?.connection === connection) waiter.settle(message);
    else this.onLateAnswer(message as LateAnswer, connection.extension, waiter?.connection.extension);
  }

  private detach(connection: Connection): void {
    this.connections.delete(connection);
    for (const waiter of [...this.waiting.values()])
      if (waiter.connection === connection) waiter.settle('closed');
  }

  /** Nothing reaches a socket whose browser was revoked (by this process or another): it is dropped instead. */
  private send(connection: Connection, message: RelayToExtension): void {
    if (connection.socket.readyState !== connection.socket.OPEN) return;
    if (this.connections.has(connection) && !this.stillPaired(connection)) return;
    connection.socket.send(JSON.stringify(message));
  }
}

/** Resolves true when the socket's peer answers a ping within claimProbeMs. */
function answersPing(socket: WebSocket): Promise<boolean> {
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

function failed(code: Extract<CallOutcome, { ok: false }>['error']['code'], message: string): CallOutcome {
  return { ok: false, error: { code, message } };
}

/** The call reached the browser and no answer came back: it may or may not have run. */
function unknownOutcome(code: 'timeout' | 'not_connected', why: string): CallOutcome {
  return {
    ok: false,
    error: {
      code,
      message: `${why} The outcome is unknown: the page may or may not have done it.`,
      unknownOutcome: true,
    },
  };
}

function stoppingError(what: string): TabwardError {
  return new TabwardError(
    'browser_unavailable',
    `The relay is stopping; ${what}.`,
    'Call again once it is back (a new session: the relay forgets sessions when it stops).',
  );
}

/** What the popup says about a question the relay stopped waiting for. */
function cancelReason(answer: 'timeout' | 'aborted', kind: Exchange, timeoutMs: number): string {
  if (answer === 'aborted') return 'the agent cancelled the call (or went away); nothing was run';
  return kind === 'ask'
    ? `no answer within the call's deadline (${seconds(timeoutMs)} s): the agent was told it failed; nothing was run`
    : `the relay stopped waiting after the call's deadline (${seconds(timeoutMs)} s)`;
}

function seconds(ms: number): number {
  return Math.round(ms / 1000);
}

function errorCodeOf(code: Extract<CallOutcome, { ok: false }>['error']['code']): TabwardError['code'] {
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
