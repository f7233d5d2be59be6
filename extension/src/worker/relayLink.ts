// The service worker's WebSocket to the relay, open only while a site is shared. It first fetches a
// single-use one-minute ticket over HTTP with the pairing credential (a socket from a worker carries only
// SameSite=None cookies, a fetch carries the header), pings every 20 s (an idle worker dies at 30 s) and
// reconnects with backoff from 1 to 30 s. Every drop is reported (the worker withdraws the approvals of calls
// the relay has already failed), with the close code: 1009 means the relay refused a message as too large.
// A pairing the relay revoked (a 401 for the ticket, or the socket closed with the "revoked" code) stops the
// loop: retrying cannot help, and the popup says to pair again. A socket refused because another one already
// speaks for this browser is told to the popup, and retried with backoff.

import {
  type ExtensionToRelay,
  pingIntervalMs,
  type RelayToExtension,
  relayCloseCodes,
} from '../../../src/protocol/siteTools.ts';
import { loadSettings } from './settings.ts';

export type LinkStatus = 'off' | 'unpaired' | 'connecting' | 'connected' | 'retrying' | 'revoked';

/** The relay refused this browser's credential: no retry can help. */
class RevokedPairing extends Error {}

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
    /** Something about the pairing the human must read (another socket holds this browser's place). */
    private readonly onAlert: (message: string) => void,
  ) {}

  /** Opens the socket when wanted and closed; closes it when not wanted. */
  want(on: boolean): void {
    this.wanted = on;
    if (on && this.status === 'revoked') return;
    if (on && !this.socket && !this.retryTimer) void this.connect();
    if (!on) this.close();
  }

  send(message: ExtensionToRelay): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  /** A new pairing: a revoked one no longer stops the link. */
  reset(): void {
    this.close();
    this.lastError = '';
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
      if (error instanceof RevokedPairing) {
        this.status = 'revoked';
        return;
      }
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
      if (event.code === relayCloseCodes.revoked) {
        this.status = 'revoked';
        this.lastError =
          'The relay revoked this browser’s pairing (unpaired elsewhere, or `tabward relay browsers revoke`). Unpair, then pair again with a new code.';
        return;
      }
      if (event.code === relayCloseCodes.taken) {
        this.lastError = 'another connection already speaks for this browser at the relay';
        this.onAlert(
          'The relay refused this browser’s connection: another connection already uses this browser’s pairing. If that is not a second tabward of yours, someone else has its credential: Unpair, then pair again.',
        );
      }
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
  if (response.status === 401)
    throw new RevokedPairing(body.error ?? 'The relay no longer knows this browser: pair again.');
  if (!response.ok || !body.ticket) throw new Error(body.error ?? `the relay answered ${response.status}`);
  return body.ticket;
}
