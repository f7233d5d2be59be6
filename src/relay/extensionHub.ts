// The extension side of the relay: the WebSockets of paired extensions, grouped by workspace. One call's messages
// (locate the document that would run it, ask the human in the popup, run it there) all go to the extension first
// picked for the task (the one with an open tab of the site first), each answer awaited under a deadline; the
// workspace's activity is broadcast to every connected extension. Whenever the relay stops waiting for a task
// (deadline, the agent cancelled, the relay stopping) it tells the extension, which withdraws the task's approval;
// an answer for a task nobody waits for any more is handed to `onLateAnswer`, never dropped silently.
// One socket speaks for one paired browser (socketClaims.ts); a browser revoked at the relay (here or by another
// process) loses its socket the moment it is routed to or speaks. The messages and how a missing or failed answer
// reads: hubAnswers.ts; the activity feed: activityFeed.ts.

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
  type SiteTool,
  siteToolNamePattern,
} from '../protocol/siteTools.ts';
import { ActivityFeed } from './activityFeed.ts';
import {
  type AskRequest,
  type CallAnswer,
  type CallRequest,
  cancelReason,
  type Exchange,
  errorCodeOf,
  failed,
  type HumanDecision,
  type LateAnswer,
  type Located,
  type LocateRequest,
  seconds,
  stoppingError,
  unknownOutcome,
} from './hubAnswers.ts';
import type { Answer, Connection, Waiter } from './hubConnection.ts';
import type { ExtensionRecord, RelayStore } from './relayStore.ts';
import { SocketClaims } from './socketClaims.ts';

export {
  type AskRequest,
  type CallAnswer,
  type CallRequest,
  callErrorCodes,
  type HumanDecision,
  type LateAnswer,
  type Located,
  type LocateRequest,
  newTaskId,
} from './hubAnswers.ts';

const heartbeatMs = 30_000;
/** How soon a running relay drops the socket of a browser revoked from another process. */
const revocationSweepMs = 5_000;
/** How long a located document is reused for read-only calls (any site report from the browser forgets it). */
const locatedReuseMs = 30_000;

export class ExtensionHub {
  private readonly connections = new Set<Connection>();
  private readonly waiting = new Map<string, Waiter>();
  /** The browser each task was routed to: an approval given in one popup never runs a call in another browser. */
  private readonly routed = new Map<string, Connection>();
  private readonly heartbeat: ReturnType<typeof setInterval>;
  private readonly revocationSweep: ReturnType<typeof setInterval>;
  private stopping: string | undefined;
  private readonly feed: ActivityFeed;
  private readonly claims: SocketClaims<Connection>;
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
    this.claims = new SocketClaims({
      live: (id) => [...this.connections].find((c) => c.extension.id === id),
      socketOf: (connection) => connection.socket,
      told: (extension, what) => this.onPairingEvent(extension, what),
      alert: (connection, message) =>
        this.send(connection, { t: 'alert', at: new Date().toISOString(), message }),
      drop: (connection) => {
        connection.socket.terminate();
        this.detach(connection);
      },
    });
    this.feed = new ActivityFeed(store, (workspace, entries) => {
      for (const connection of this.connections)
        if (connection.extension.workspace === workspace) this.send(connection, { t: 'activity', entries });
    });
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

  /** May a new socket speak for this browser? (relay/socketClaims.ts) */
  admit(extension: ExtensionRecord): Promise<boolean> {
    return this.claims.admit(extension);
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

  /** Adds a line to the workspace's activity feed (relay/activityFeed.ts). */
  record(workspace: string, entry: ActivityEntry): void {
    this.feed.record(workspace, entry);
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
    this.feed.flush();
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
      // Only tools named as a tool may be (siteToolNamePattern): the relay does not take the browser's word for it.
      const sites = message.sites.map((site) => ({
        ...site,
        tools: (Array.isArray(site.tools) ? site.tools : ([] as SiteTool[])).filter(
          (tool: SiteTool) => typeof tool?.name === 'string' && siteToolNamePattern.test(tool.name),
        ),
      }));
      connection.sites = sites;
      // Tabs opened, closed or navigated: which document would run a call is for the browser to say again.
      connection.located.clear();
      connection.reportedAt = Date.now();
      this.store.saveSites(connection.extension, sites);
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
