// The extension side of the relay: the WebSockets of paired extensions, grouped by workspace. One call's messages
// (locate the document that would run it, ask the human in the popup, run it there) all go to the extension first
// picked for the task (the one with an open tab of the site first), each answer awaited under a deadline; the
// workspace's activity is broadcast to every connected extension.

import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import { TabwardError } from '../core/errors.ts';
import type {
  ActivityEntry,
  CallOutcome,
  CallTarget,
  ExtensionToRelay,
  RelayToExtension,
  SharedSiteState,
} from '../protocol/siteTools.ts';
import type { ExtensionRecord, RelayStore } from './relayStore.ts';

interface Connection {
  readonly socket: WebSocket;
  readonly extension: ExtensionRecord;
  sites: readonly SharedSiteState[];
  reportedAt: number;
  /** Answered the last WebSocket ping: a socket whose peer vanished (sleep, network change) is dropped. */
  alive: boolean;
}

const heartbeatMs = 30_000;

type Exchange = 'locate' | 'ask' | 'call';

interface Waiter {
  readonly connection: Connection;
  /** The extension's answer, or undefined when its socket closed first. */
  readonly settle: (answer: ExtensionToRelay | undefined) => void;
}

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
  }

  attach(socket: WebSocket, extension: ExtensionRecord): void {
    const connection: Connection = { socket, extension, sites: [], reportedAt: 0, alive: true };
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

  /** Asks the extension sharing the site which document (and URL) would run the call; nothing runs yet. */
  async locate(taskId: string, request: LocateRequest): Promise<CallTarget> {
    const { workspace, ...message } = request;
    const connection = this.routed.get(taskId) ?? this.route(workspace, request.site);
    if (!connection || !this.connections.has(connection))
      throw new TabwardError(
        'browser_unavailable',
        `No browser of workspace "${workspace}" is connected with ${request.site} shared. Open Chrome with the tabward extension and share the site from its popup.`,
      );
    this.routed.set(taskId, connection);
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
    if (answer?.t !== 'located')
      throw new TabwardError(
        'browser_unavailable',
        `The browser disconnected during ${taskId}; nothing was run.`,
      );
    if ('error' in answer) throw new TabwardError(errorCodeOf(answer.error.code), answer.error.message);
    return answer.target;
  }

  /** Shows the question in the popups of the browser the task was routed to; a withdrawn or unanswered one is denied. */
  async ask(taskId: string, request: AskRequest, signal?: AbortSignal): Promise<HumanDecision> {
    const connection = this.routed.get(taskId);
    if (!connection) return 'denied';
    const onAbort = (): void => this.send(connection, { t: 'cancel', taskId, reason: 'withdrawn' });
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const answer = await this.exchange(
        connection,
        taskId,
        'ask',
        { t: 'ask', taskId, ...request },
        request.deadlineMs,
        signal,
      );
      if (answer === 'timeout') this.send(connection, { t: 'cancel', taskId, reason: 'deadline' });
      return answer !== 'timeout' && answer?.t === 'decision' ? answer.decision : 'denied';
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Runs the call on the located document and resolves with its outcome; never rejects. */
  async call(taskId: string, request: CallRequest): Promise<CallOutcome> {
    const connection = this.routed.get(taskId);
    if (!connection || !this.connections.has(connection))
      return failed('not_connected', `The browser disconnected during ${taskId}; nothing was run.`);
    const answer = await this.exchange(
      connection,
      taskId,
      'call',
      { t: 'call', taskId, ...request },
      request.deadlineMs,
    );
    if (answer === 'timeout') {
      this.send(connection, { t: 'cancel', taskId, reason: 'deadline' });
      return failed(
        'timeout',
        `No outcome within ${seconds(request.deadlineMs)} s (waiting for the human, or the page). The outcome is unknown.`,
      );
    }
    if (answer?.t === 'outcome') return answer.outcome;
    return failed('not_connected', `The browser disconnected during ${taskId}; the outcome is unknown.`);
  }

  /** The task is over: forget where it was routed. */
  finish(taskId: string): void {
    this.routed.delete(taskId);
  }

  record(workspace: string, entry: ActivityEntry): void {
    this.store.addActivity(workspace, entry);
    for (const connection of this.connections) {
      if (connection.extension.workspace === workspace) this.send(connection, { t: 'activity', entry });
    }
  }

  closeAll(): void {
    clearInterval(this.heartbeat);
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
  ): Promise<ExtensionToRelay | undefined | 'timeout'> {
    const key = `${taskId} ${kind}`;
    return new Promise((resolve) => {
      const finish = (answer: ExtensionToRelay | undefined | 'timeout'): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.waiting.get(key)?.connection !== connection) return;
        this.waiting.delete(key);
        resolve(answer);
      };
      const onAbort = (): void => finish(undefined);
      const timer = setTimeout(() => finish('timeout'), Math.max(0, timeoutMs));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(key, { connection, settle: finish });
      this.send(connection, message);
      if (signal?.aborted) finish(undefined);
    });
  }

  private route(workspace: string, site: string): Connection | undefined {
    const candidates = [...this.connections]
      .filter((c) => c.extension.workspace === workspace)
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
    let message: ExtensionToRelay;
    try {
      message = JSON.parse(text) as ExtensionToRelay;
    } catch {
      connection.socket.close(1003, 'messages are JSON');
      return;
    }
    if (message.t === 'sites' && Array.isArray(message.sites)) {
      connection.sites = message.sites;
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
  }

  private detach(connection: Connection): void {
    this.connections.delete(connection);
    for (const waiter of [...this.waiting.values()])
      if (waiter.connection === connection) waiter.settle(undefined);
  }

  private send(connection: Connection, message: RelayToExtension): void {
    if (connection.socket.readyState === connection.socket.OPEN)
      connection.socket.send(JSON.stringify(message));
  }
}

function failed(code: Extract<CallOutcome, { ok: false }>['error']['code'], message: string): CallOutcome {
  return { ok: false, error: { code, message } };
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
