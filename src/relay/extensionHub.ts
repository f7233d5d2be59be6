// The extension side of the relay: the WebSockets of paired extensions, grouped by workspace; routes each call
// to the extension that shares the site (the one with an open tab first), waits for its outcome under a deadline,
// and broadcasts the workspace's activity to every connected extension.

import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import type {
  ActivityEntry,
  CallOutcome,
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

interface PendingCall {
  readonly connection: Connection;
  readonly settle: (outcome: CallOutcome) => void;
}

/** What the relay sends the extension for one call, less the envelope, plus the workspace that routes it. */
export type CallRequest = Omit<Extract<RelayToExtension, { t: 'call' }>, 't' | 'taskId'> & {
  readonly workspace: string;
};

export function newTaskId(): string {
  return `task-${randomBytes(5).toString('hex')}`;
}

export class ExtensionHub {
  private readonly connections = new Set<Connection>();
  private readonly pending = new Map<string, PendingCall>();

  private readonly heartbeat: ReturnType<typeof setInterval>;

  constructor(private readonly store: RelayStore) {
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
    });
  }

  /** Sends the call to the extension sharing the site and resolves with its outcome; never rejects. */
  call(taskId: string, request: CallRequest): Promise<CallOutcome> {
    const connection = this.route(request.workspace, request.site);
    if (!connection)
      return Promise.resolve({
        ok: false,
        error: {
          code: 'not_connected',
          message: `No browser of workspace "${request.workspace}" is connected with ${request.site} shared. Open Chrome with the tabward extension and share the site from its popup.`,
        },
      });
    return new Promise<CallOutcome>((resolve) => {
      const timer = setTimeout(() => {
        this.send(connection, { t: 'cancel', taskId, reason: 'deadline' });
        finish({
          ok: false,
          error: {
            code: 'timeout',
            message: `No outcome within ${Math.round(request.deadlineMs / 1000)} s (waiting for the human, or the page). The outcome is unknown.`,
          },
        });
      }, request.deadlineMs);
      const finish = (outcome: CallOutcome): void => {
        clearTimeout(timer);
        if (this.pending.get(taskId)?.connection !== connection) return;
        this.pending.delete(taskId);
        resolve(outcome);
      };
      this.pending.set(taskId, { connection, settle: finish });
      const { workspace: _routedBy, ...call } = request;
      this.send(connection, { t: 'call', taskId, ...call });
    });
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
    } else if (message.t === 'outcome') {
      const pending = this.pending.get(message.taskId);
      if (pending?.connection === connection) pending.settle(message.outcome);
    } else if (message.t === 'decision') {
      this.onDecision(connection, message.taskId, message.decision);
    }
  }

  private onDecision(
    connection: Connection,
    taskId: string,
    decision: 'approved' | 'denied' | 'always',
  ): void {
    if (this.pending.get(taskId)?.connection !== connection) return;
    const task = this.store.task(taskId);
    if (!task) return;
    const workspace = connection.extension.workspace;
    if (decision === 'always') this.store.allow(workspace, task.origin, task.tool);
    this.record(workspace, {
      at: new Date().toISOString(),
      agent: '',
      taskId,
      site: task.origin,
      tool: task.tool,
      event: decision,
      detail: decision === 'always' ? `always allowed ${task.tool} on ${task.origin}` : '',
    });
  }

  private detach(connection: Connection): void {
    this.connections.delete(connection);
    for (const [taskId, pending] of this.pending) {
      if (pending.connection !== connection) continue;
      pending.settle({
        ok: false,
        error: {
          code: 'not_connected',
          message: `The browser disconnected during ${taskId}; the outcome is unknown.`,
        },
      });
    }
  }

  private send(connection: Connection, message: RelayToExtension): void {
    if (connection.socket.readyState === connection.socket.OPEN)
      connection.socket.send(JSON.stringify(message));
  }
}
