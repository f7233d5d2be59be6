// The WebSockets of the agent's dedicated workers, in a browser with no egress proxy (the user's Chrome, remote
// ones; docs/architecture.md "What holds in each mode"). A worker has no socket route and no hook holds a WebSocket
// (Chromium 156), so a worker a page hands what it saw after a sensitive read can send it on a socket of its own.
// The browser-wide gate's session attaches to each such worker (not flattened: the gate's session carries its
// messages, measured on Chromium 156) and turns its Network domain on: each handshake and message is seen as it
// goes. One the session's taint refuses cannot be called back; it is told (the audit says it left) and the worker
// is paused in its debugger, so that it sends nothing more while tabward watches (a dedicated worker cannot be closed
// over CDP). A message on a socket opened before the worker was watched is judged as one to a host tabward cannot
// read: refused once anything was read.

import type { CDPSession } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import type { SocketEvent } from './nativeSockets.ts';

/** Stands for a socket the worker opened before it was watched: no host is allowed it after a sensitive read. */
const unseenSocket = 'wss://a-socket-opened-before-tabward-watched.invalid/';

interface WatchedWorker {
  readonly urls: Map<string, string>;
  told: number;
  paused: boolean;
}

export class WorkerSockets {
  private readonly workers = new Map<string, WatchedWorker>();
  private readonly watched = new Set<string>();
  private nextId = 1;

  constructor(
    private readonly cdp: CDPSession,
    private readonly verdict: (url: string) => string | undefined,
    private readonly left: (what: SocketEvent, url: string, reason: string) => void,
  ) {
    cdp.on('Target.receivedMessageFromTarget', (event) => {
      const { sessionId, message } = event as { sessionId: string; message: string };
      this.onMessage(sessionId, message);
    });
    cdp.on('Target.detachedFromTarget', (event) =>
      this.workers.delete((event as { sessionId: string }).sessionId),
    );
  }

  /** Watches a dedicated worker of the agent's (once). */
  async watch(targetId: string): Promise<void> {
    if (this.watched.has(targetId)) return;
    this.watched.add(targetId);
    const { sessionId } = (await this.cdp.send('Target.attachToTarget', { targetId, flatten: false })) as {
      sessionId: string;
    };
    this.workers.set(sessionId, { urls: new Map(), told: 0, paused: false });
    this.send(sessionId, 'Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
  }

  private send(sessionId: string, method: string, params: Record<string, unknown> = {}): void {
    const message = JSON.stringify({ id: this.nextId++, method, params });
    void this.cdp
      .send('Target.sendMessageToTarget', { sessionId, message })
      .catch(swallow('browser', `workerSockets.send: ${method} (the worker is gone)`));
  }

  private onMessage(sessionId: string, message: string): void {
    const worker = this.workers.get(sessionId);
    if (!worker) return;
    let parsed: { method?: string; params?: { requestId?: string; url?: string } };
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    const { method, params } = parsed;
    const requestId = params?.requestId;
    if (!method || requestId === undefined) return;
    if (method === 'Network.webSocketCreated') {
      worker.urls.set(requestId, params?.url ?? unseenSocket);
      this.judge(sessionId, worker, requestId, 'WEBSOCKET');
    } else if (method === 'Network.webSocketFrameSent')
      this.judge(sessionId, worker, requestId, 'WEBSOCKET MESSAGE');
    else if (method === 'Network.webSocketClosed') worker.urls.delete(requestId);
  }

  private judge(sessionId: string, worker: WatchedWorker, requestId: string, what: SocketEvent): void {
    const url = worker.urls.get(requestId) ?? unseenSocket;
    const reason = this.verdict(url);
    if (!reason) return;
    if (worker.told++ < 50)
      this.left(
        what,
        url,
        `${reason}; it left anyway: a worker of the agent's page sent it, where no hook can hold a WebSocket, so tabward paused the worker`,
      );
    if (worker.paused) return;
    worker.paused = true;
    this.send(sessionId, 'Debugger.enable');
    this.send(sessionId, 'Debugger.pause');
  }
}
