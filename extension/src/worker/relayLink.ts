// The service worker's WebSocket to the relay, open only while a site is shared. It first fetches a
// single-use one-minute ticket over HTTP with the pairing credential (a socket from a worker carries only
// SameSite=None cookies, a fetch carries the header), pings every 20 s (an idle worker dies at 30 s) and
// reconnects with backoff from 1 to 30 s. Every drop is reported (the worker withdraws the approvals of calls
// the relay has already failed), with the close code: 1009 means the relay refused a message as too large.

import {
  type ExtensionToRelay,
  pingIntervalMs,
  type RelayToExtension,
} from '../../../src/protocol/siteTools.ts';
import { loadSettings } from './settings.ts';

export type LinkStatus = 'off' | 'unpaired' | 'connecting' | 'connected' | 'retrying';

export class RelayLink {
  status: LinkStatus = 'off';
  lastError = '';
  private socket: WebSocket | undefined;
  private wanted = false;
  private backoffMs = 1000;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly onMessage: (message: RelayToExtension) => void,
    private readonly onOpen: () => void,
    private readonly onDrop: (closeCode: number) => void,
  ) {}

  /** Opens the socket when wanted and closed; closes it when not wanted. */
  want(on: boolean): void {
    this.wanted = on;
    if (on && !this.socket && !this.retryTimer) void this.connect();
    if (!on) this.close();
  }

  send(message: ExtensionToRelay): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  close(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    socket?.close();
    this.status = 'off';
    if (socket) this.onDrop(1000);
  }

  private async connect(): Promise<void> {
    const settings = await loadSettings();
    if (!settings.relayUrl || !settings.credential) {
      this.status = 'unpaired';
      return;
    }
    this.status = 'connecting';
    let ticket: string;
    try {
      ticket = await fetchTicket(settings.relayUrl, settings.credential);
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      return this.retry();
    }
    if (!this.wanted || this.socket) return;
    const url = `${settings.relayUrl.replace(/^http/, 'ws')}/extension?ticket=${encodeURIComponent(ticket)}`;
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.onopen = () => {
      this.status = 'connected';
      this.lastError = '';
      this.backoffMs = 1000;
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.send({ t: 'ping' }), pingIntervalMs);
      this.onOpen();
    };
    socket.onmessage = (event) => {
      try {
        this.onMessage(JSON.parse(String(event.data)) as RelayToExtension);
      } catch {}
    };
    socket.onclose = (event) => {
      clearInterval(this.pingTimer);
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.lastError ||= 'the relay closed the connection';
      this.onDrop(event.code);
      if (this.wanted) this.retry();
    };
  }

  private retry(): void {
    this.status = 'retrying';
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.wanted && !this.socket) void this.connect();
    }, wait);
  }
}

async function fetchTicket(relayUrl: string, credential: string): Promise<string> {
  const response = await fetch(`${relayUrl}/ticket`, {
    method: 'POST',
    credentials: 'include',
    headers: { authorization: `Bearer ${credential}` },
    // A relay that accepts and never answers must not stall the reconnect loop.
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json().catch(() => ({}))) as { ticket?: string; error?: string };
  if (!response.ok || !body.ticket) throw new Error(body.error ?? `the relay answered ${response.status}`);
  return body.ticket;
}
