// WebSockets where the CDP hooks judge them (docs/architecture.md "The choke point", Tags; "What holds in each
// mode"): Playwright's socket route judges each handshake with its tab and action and, with no egress proxy, each
// message after a sensitive read; a handshake or message that went past the route on the browser's own WebSocket
// (browser/nativeSockets.ts) is told in the audit and stops what sent it. Behind tabward's egress proxy no socket
// route is set: the proxy judges sockets. A base of the network guard (browser/networkGuard.ts).

import type { CDPSession, Page, WebSocketRoute } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import type { BrowserFetchGate } from './browserFetchGate.ts';
import type { SocketEvent } from './nativeSockets.ts';
import { RequestJudge } from './requestJudge.ts';
import type { SpeculativeLoad } from './speculativeLoads.ts';
import { silencePage } from './tabSilence.ts';

/** Swallows an error on purpose, telling the debug channel (core/debug.ts) where and why. */
const swallowing = (why: string) => swallow('browser', `socketJudge.${why}`);

/** How each kind went past every hook, as the audit says it. */
const howItLeft: Record<SocketEvent | SpeculativeLoad, string> = {
  WEBSOCKET: "the page sent it on the browser's own WebSocket, past tabward's socket route",
  'WEBSOCKET MESSAGE': "the page sent it on the browser's own WebSocket, past tabward's socket route",
  PREFETCH: "the page had Chrome prefetch it (speculation rules), which no hook of tabward's can hold",
  PRERENDER: "the page had Chrome prerender it (speculation rules), which no hook of tabward's can hold",
};

export abstract class SocketJudge extends RequestJudge {
  /** How many sockets or speculative loads past the hooks each tab was told of; the first stopped it (wentPastHooks). */
  private readonly bypassesTold = new WeakMap<Page, number>();

  /** The browser-wide gate of the page's browser, where no egress proxy judges it (the user's Chrome, remote). */
  protected abstract gateOf(page: Page): BrowserFetchGate | undefined;

  protected async onWebSocket(page: Page, socket: WebSocketRoute): Promise<void> {
    if (!(await this.judgeHandshake(socket.url(), page))) {
      // Its handshake reaches the choke point with no header of ours: let through there once, as judged here.
      this.tags.allowSocket(socket.url(), this.taintEpoch);
      const server = socket.connectToServer();
      // With no egress proxy to judge its messages (the user's Chrome, a remote browser), each one the page sends
      // is judged here: after a sensitive read, a socket opened before may not carry what the page saw.
      if (this.gateOf(page))
        socket.onMessage((message) => {
          const request = { method: 'WEBSOCKET', url: socket.url(), tag: undefined, navigation: false };
          const reason = this.socketMessageVerdict(request);
          if (!reason) return server.send(message);
          this.socketStopped(request, reason);
          this.record(page, 'WEBSOCKET MESSAGE', socket.url(), reason);
          void socket
            .close({ code: 1008, reason: 'tabward stopped this connection' })
            .catch(swallowing('onWebSocket: closing a stopped socket'));
          void server.close().catch(swallowing('onWebSocket: server.close()'));
        });
      return;
    }
    await socket
      .close({ code: 1008, reason: 'tabward stopped this connection' })
      .catch(swallowing('onWebSocket: closing a stopped socket'));
  }

  /**
   * Something of the page's went past every hook although the choke point would have refused it: a handshake or
   * message on the browser's own WebSocket, past the socket route (browser/nativeSockets.ts), or a speculative load
   * Chrome made for it (browser/speculativeLoads.ts). The audit says it left, each one (up to 50 a tab: a page
   * sending in a loop until it is stopped), and at the first the scripts of what sent it are stopped at once on the
   * session that saw it, then the whole tab (browser/tabSilence.ts), so that it sends nothing more. One judged just
   * before the taint grew and seen after stops the tab too (fail closed).
   */
  protected wentPastHooks(
    page: Page,
    seenOn: CDPSession,
    what: SocketEvent | SpeculativeLoad,
    url: string,
    reason: string,
  ): void {
    const count = this.bypassesTold.get(page) ?? 0;
    this.bypassesTold.set(page, count + 1);
    if (count < 50)
      this.socketLeft(what, url, `${reason}; it left anyway: ${howItLeft[what]}, so tabward stopped the tab`);
    if (count > 0) return;
    // Its scripts stop at once (what they made in the same moment is still reported), then its renderer.
    void seenOn
      .send('Emulation.setScriptExecutionDisabled', { value: true })
      .catch(swallowing('wentPastHooks: stopping the scripts of what sent it'));
    void silencePage(page, 2_000, () => page.isClosed());
  }

  /**
   * A WebSocket handshake, judged by its http(s) address like any request (its URL can carry data); resolves with
   * the reason it is stopped, recorded like any other stop.
   */
  private async judgeHandshake(url: string, page: Page | undefined): Promise<string | undefined> {
    const facts = {
      method: 'WEBSOCKET',
      url: url.replace(/^ws/i, 'http'),
      document: false,
      mainFrame: false,
      hop: false,
      ...(page ? { frameUrl: page.url() } : {}),
    };
    const reason = await this.verdict(facts, page).catch(
      (error) => `it could not be judged (${String(error)})`,
    );
    if (reason) this.record(page, 'WEBSOCKET', url, reason);
    return reason;
  }
}
