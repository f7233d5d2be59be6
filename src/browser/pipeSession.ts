// tabward's own DevTools session on the pipe of a browser it started (browser/pipeTransport.ts), beside Playwright's:
// its commands carry ids Playwright never reaches and its answers and events never reach Playwright. What it is for:
// a pause the page waits on. Over Playwright's CDPSession an event waits its turn behind every message the browser
// sent before it (one task each), then crosses Playwright's client layers, and so does the answer; here it is
// handled as it is read off the pipe, and the answer written at once (a document paused browser-wide cost 15-30 ms
// of navigate+snapshot on the bench's frames page the other way: bench/results.md, the twelfth pass).

import type { Browser, BrowserContext } from 'playwright-core';

/** Ids of this session's commands: far above any Playwright sends (it counts from 1), within the 32-bit ids Chromium takes. */
const firstId = 2 ** 30;
/** One count for every session of the process: an answer is claimed by the session that sent its command. */
let nextId = firstId;

/** The id of an answer to a command of tabward's own session (a message that starts with it), if it is one. */
export function ownCommandId(text: string): number | undefined {
  if (!text.startsWith('{"id":')) return undefined;
  const id = Number(/^\{"id":(\d+)/.exec(text)?.[1]);
  return id >= firstId ? id : undefined;
}

/**
 * The session a message is for: its own `sessionId` (the last field, as Chromium writes it), or for the root's
 * notice that a session ended, that session.
 */
export function sessionOf(text: string): string | undefined {
  const own = /"sessionId":"([^"\\]+)"\}$/.exec(text.slice(-80))?.[1];
  if (own !== undefined) return own;
  if (text.startsWith('{"method":"Target.detachedFromTarget"'))
    return /"sessionId":"([^"\\]+)"/.exec(text)?.[1];
  return undefined;
}

/** An event's listener: its parameters, and the session it came on (the tab's, or a frame's this one adopted). */
type Listener = (params: Record<string, unknown>, sessionId: string | undefined) => void;

interface Answer {
  readonly id?: number;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly sessionId?: string;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly message: string };
}

export class PipeSession {
  private readonly pending = new Map<
    number,
    { resolve: (result: Record<string, unknown>) => void; reject: (error: Error) => void }
  >();
  private readonly listeners = new Map<string, Listener[]>();
  /** This one's session on the browser target, through which a target's session is attached and left. */
  private browserSessionId: string | undefined;
  /** Its session on a tab, when it has one: where its commands go. */
  private targetSessionId: string | undefined;
  private detaching: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly write: (text: string) => void,
    /** Told each session id this one gets: the pipe keeps whose each is, so none's late message reaches Playwright. */
    private readonly noteId: (sessionId: string) => void,
    private readonly ended: () => void,
  ) {
    // Its tab closed: the browser session is left too.
    this.on('Target.detachedFromTarget', (params) => {
      if (params.sessionId === this.targetSessionId) {
        this.targetSessionId = undefined;
        void this.detach();
      }
    });
  }

  /** Whether it is gone: left, its target closed, or the pipe ended (every command fails at once). */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether this one is waiting for the answer with this id. */
  awaits(id: number): boolean {
    return this.pending.has(id);
  }

  /** A message this session claimed, handled now (its listeners run before anything queued for Playwright). */
  handle(text: string): void {
    const message = JSON.parse(text) as Answer;
    if (message.id !== undefined) {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiting?.reject(new Error(message.error.message));
      else waiting?.resolve(message.result ?? {});
      return;
    }
    if (message.method)
      for (const listener of this.listeners.get(message.method) ?? [])
        listener(message.params ?? {}, message.sessionId);
  }

  on(method: string, listener: Listener): void {
    this.listeners.set(method, [...(this.listeners.get(method) ?? []), listener]);
  }

  /** A command to the tab (or, with none, to the browser target). */
  send(method: string, params: object = {}): Promise<Record<string, unknown>> {
    return this.sendOn(this.targetSessionId ?? this.browserSessionId, method, params);
  }

  /**
   * A session the browser attached under this one (an out-of-process frame the tab's auto-attach reported): its
   * messages come here too, and commands go to it with sendTo.
   */
  adopt(sessionId: string): void {
    this.noteId(sessionId);
  }

  /** A command to a session this one adopted. */
  sendTo(sessionId: string, method: string, params: object = {}): Promise<Record<string, unknown>> {
    return this.sendOn(sessionId, method, params);
  }

  private sendOn(
    sessionId: string | undefined,
    method: string,
    params: object,
  ): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new Error('the pipe session is closed'));
    const id = nextId++;
    const answered = new Promise<Record<string, unknown>>((resolve, reject) =>
      this.pending.set(id, { resolve, reject }),
    );
    this.write(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }));
    return answered;
  }

  /** Attaches to a tab (flattened), or to the browser target alone (as Playwright's newBrowserCDPSession does). */
  async attach(targetId?: string): Promise<void> {
    const browser = (await this.sendOn(undefined, 'Target.attachToBrowserTarget', {})) as {
      sessionId: string;
    };
    this.browserSessionId = browser.sessionId;
    this.noteId(browser.sessionId);
    if (targetId === undefined) return;
    // Attached from this one's browser session, not from the pipe's root: the browser tells whoever attached, and
    // Playwright, which holds the root, would take the news for a second tab of the same target.
    const target = (await this.sendOn(browser.sessionId, 'Target.attachToTarget', {
      targetId,
      flatten: true,
    })) as { sessionId: string };
    this.noteId(target.sessionId);
    this.targetSessionId = target.sessionId;
  }

  /** The pipe ended, or the session is left: every command still waiting fails. */
  end(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ended();
    for (const waiting of this.pending.values()) waiting.reject(new Error(reason));
    this.pending.clear();
  }

  /** Leaves the tab, then the browser session, each asked of the session above it; what fails is gone already. */
  detach(): Promise<void> {
    this.detaching ??= this.leave();
    return this.detaching;
  }

  private async leave(): Promise<void> {
    const { targetSessionId: target, browserSessionId: browser } = this;
    if (this.closed || browser === undefined) return;
    this.targetSessionId = undefined;
    if (target !== undefined)
      await this.sendOn(browser, 'Target.detachFromTarget', { sessionId: target }).catch(() => undefined);
    await this.sendOn(undefined, 'Target.detachFromTarget', { sessionId: browser }).catch(() => undefined);
    this.end('left');
  }
}

/** Opens sessions of tabward's own on a browser's pipe. */
export interface PipeSessions {
  /** A session of tabward's own on a target (a tab), or on the browser target. */
  open(targetId?: string): Promise<PipeSession>;
}

const pipes = new WeakMap<Browser, PipeSessions>();

export function registerPipe(browser: Browser, sessions: PipeSessions): void {
  pipes.set(browser, sessions);
}

/** The pipe of a browser tabward started, if this one is. */
export function pipeOf(browser: Browser): PipeSessions | undefined {
  return pipes.get(browser);
}

/** The pipe of the browser a context is in, if tabward started it. */
export function pipeOfContext(context: BrowserContext): PipeSessions | undefined {
  const browser = context.browser();
  return browser ? pipes.get(browser) : undefined;
}
