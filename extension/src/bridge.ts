// Isolated-world content script, run at document_start in the pages of shared sites only. It makes a random
// nonce for this document and hands it to the MAIN-world observer through <html data-tabward> (the observer
// removes it before page scripts run). Where the browser has native WebMCP it consumes it directly from this
// world (getTools / executeTool), immune to page patching; otherwise it asks the observer. It announces the
// page's tools to the service worker, runs the calls the worker sends over its port, and fails a call at once when
// the page withdraws its tool. bfcache: "gone" on pagehide, announced again on pageshow. A result is capped on
// the bytes its JSON costs on the wire, and a page's error text is cut short: neither can outgrow a message.

import {
  type CallOutcome,
  callPortName,
  type ObserverMessage,
  type SiteTool,
  type TabPortMessage,
  type TabReply,
  type TabToWorker,
  type WorkerToTab,
  withinResultCap,
} from '../../src/protocol/siteTools.ts';
import { resultText, toSiteTool, withdrawnMessage } from './toolDescriptor.ts';

interface NativeContext {
  getTools(): Promise<unknown[]>;
  executeTool(tool: unknown, input: Record<string, unknown>): Promise<unknown>;
  addEventListener(type: string, listener: () => void): void;
}

interface Pending {
  readonly name: string;
  readonly readOnly: boolean;
  readonly settle: (outcome: CallOutcome) => void;
}

/** A page's error text is its own choice: kept to a readable length. */
const maxErrorChars = 2000;

class TabBridge {
  private readonly pending = new Map<string, Pending>();
  private tools: SiteTool[] = [];
  private announced = '';

  /** `native` when the browser has WebMCP (used from this world); else calls go through the observer. */
  constructor(
    private readonly nonce: string,
    private readonly native: NativeContext | undefined,
  ) {}

  start(): void {
    document.addEventListener(this.nonce, (event) => this.fromObserver(event));
    // The worker's calls come over a port it opens to this document (worker/tabPorts.ts); `ready` first says
    // the port reached a bridge, so a port closed before it delivered nothing.
    chrome.runtime.onConnect.addListener((port) => {
      if (port.name !== callPortName || port.sender?.id !== chrome.runtime.id) return;
      port.postMessage({ type: 'ready' } satisfies TabPortMessage);
      port.onMessage.addListener((message: WorkerToTab) => {
        if (message?.type !== 'call') return;
        void this.run(message).then((reply) =>
          port.postMessage({ type: 'reply', callId: message.callId, ...reply } satisfies TabPortMessage),
        );
      });
    });
    this.native?.addEventListener('toolchange', () => void this.refreshNative());
    // Gone on every pagehide: a cross-site navigation's new document may announce before this one unloads, and
    // a page put in the back/forward cache cannot answer; pageshow from the cache announces it again.
    addEventListener('pagehide', () => this.tell({ type: 'gone' }));
    addEventListener('pageshow', (event) => {
      if (event.persisted) this.list(true);
    });
    document.addEventListener('DOMContentLoaded', () => this.list());
    addEventListener('load', () => this.list());
    setTimeout(() => this.list(), 1500);
    this.list();
  }

  private tell(message: TabToWorker): void {
    chrome.runtime.sendMessage(message).catch(() => undefined);
  }

  private toObserver(message: ObserverMessage): void {
    document.dispatchEvent(new CustomEvent(this.nonce, { detail: JSON.stringify(message) }));
  }

  private list(force = false): void {
    if (this.native) void this.refreshNative(force);
    else this.toObserver({ from: 'bridge', kind: 'list' });
    if (force && !this.native) this.announce(this.tools, true);
  }

  /** Tells the worker when the tools change (a page without any says nothing) and fails calls of vanished ones. */
  private announce(next: SiteTool[], force = false): void {
    this.tools = next;
    const text = JSON.stringify(next);
    if (!force && (text === this.announced || (!this.announced && next.length === 0))) return;
    this.announced = text;
    for (const call of this.pending.values())
      if (!next.some((t) => t.name === call.name)) this.failWithdrawn(call.name);
    this.tell({ type: 'tools', tools: next });
  }

  /** Fails the calls in flight on a withdrawn tool at once; the page gives them no answer of its own. */
  private failWithdrawn(name: string): void {
    for (const [callId, call] of this.pending) {
      if (call.name !== name) continue;
      this.pending.delete(callId);
      call.settle({
        ok: false,
        error: { code: 'unregistered', message: withdrawnMessage(call.name, call.readOnly) },
      });
    }
  }

  private fromObserver(event: Event): void {
    const detail = (event as CustomEvent<unknown>).detail;
    if (typeof detail !== 'string') return;
    let message: ObserverMessage;
    try {
      message = JSON.parse(detail) as ObserverMessage;
    } catch {
      return;
    }
    if (message.from !== 'observer') return;
    if (message.kind === 'tools' && !this.native) this.announce([...message.tools]);
    // With native WebMCP the list alone misses an abort followed at once by a new registration of the name.
    if (message.kind === 'withdrawn' && this.native) this.failWithdrawn(message.name);
    if (message.kind === 'outcome') {
      const call = this.pending.get(message.callId);
      if (!call) return;
      this.pending.delete(message.callId);
      call.settle(message.outcome);
    }
  }

  private async nativeTools(): Promise<{ tool: SiteTool; raw: unknown }[]> {
    if (!this.native) return [];
    try {
      return (await this.native.getTools()).flatMap((raw) => {
        const tool = toSiteTool(raw as Parameters<typeof toSiteTool>[0], JSON);
        return tool ? [{ tool, raw }] : [];
      });
    } catch {
      return [];
    }
  }

  private async refreshNative(force = false): Promise<void> {
    this.announce(
      (await this.nativeTools()).map((entry) => entry.tool),
      force,
    );
  }

  private async run(message: WorkerToTab): Promise<TabReply> {
    const started = performance.now();
    // Checked here, in the document itself, as the call starts: nothing can move it between check and run.
    if (location.href !== message.url)
      return {
        outcome: {
          ok: false,
          error: {
            code: 'moved',
            message: `The tab moved from ${message.url} to ${location.href} after the call was judged. Nothing was run; call again.`,
          },
        },
        bridgeMs: performance.now() - started,
        pageMs: 0,
      };
    let pageMs = 0;
    const readOnly = this.tools.find((t) => t.name === message.name)?.readOnly ?? false;
    const outcome = await new Promise<CallOutcome>((settle) => {
      this.pending.set(message.callId, { name: message.name, readOnly, settle });
      if (!this.native) {
        const { callId, name, args } = message;
        return this.toObserver({ from: 'bridge', kind: 'call', callId, name, args });
      }
      void this.runNative(message).then(({ outcome: result, ms }) => {
        pageMs = ms;
        if (this.pending.delete(message.callId)) settle(result);
      });
    });
    // A write whose tool went away mid-call may or may not have happened: the relay must not let it rerun.
    const told =
      !outcome.ok && outcome.error.code === 'unregistered' && !readOnly
        ? { ok: false as const, error: { ...outcome.error, unknownOutcome: true } }
        : outcome;
    return { outcome: bounded(told), bridgeMs: performance.now() - started, pageMs };
  }

  private async runNative(message: WorkerToTab): Promise<{ outcome: CallOutcome; ms: number }> {
    // Found by name on the live list (no copy of every tool's schema on each call).
    const raw = this.native
      ? await this.native.getTools().then(
          (tools) => tools.find((t) => (t as { name?: unknown } | null)?.name === message.name),
          () => undefined,
        )
      : undefined;
    if (!raw || !this.native)
      return {
        outcome: {
          ok: false,
          error: { code: 'no_tool', message: `The page has no tool "${message.name}" now.` },
        },
        ms: 0,
      };
    const started = performance.now();
    try {
      const value = await this.native.executeTool(raw, message.args);
      return {
        outcome: { ok: true, result: resultText(value, JSON.stringify) },
        ms: performance.now() - started,
      };
    } catch (error) {
      return {
        outcome: { ok: false, error: { code: 'tool_failed', message: `The tool failed: ${String(error)}` } },
        ms: performance.now() - started,
      };
    }
  }
}

/** Error texts are cut; results are capped on the bytes they cost as JSON, as they travel. */
function bounded(outcome: CallOutcome): CallOutcome {
  if (outcome.ok) return withinResultCap(outcome);
  const { message } = outcome.error;
  if (message.length <= maxErrorChars) return outcome;
  return { ok: false, error: { ...outcome.error, message: `${message.slice(0, maxErrorChars)}… (cut)` } };
}

const marker = '__tabwardBridge';
/** Set by the worker before it injects the bridge into a tab that was open before its site was shared. */
const lateMarker = '__tabwardLate';
const scope = globalThis as typeof globalThis & { [marker]?: boolean; [lateMarker]?: boolean };

function startBridge(): void {
  const maybeNative = (document as Document & { modelContext?: Partial<NativeContext> }).modelContext;
  const native =
    maybeNative && typeof maybeNative.getTools === 'function' && typeof maybeNative.executeTool === 'function'
      ? (maybeNative as NativeContext)
      : undefined;
  // Injected late, page scripts have already run: they may have patched what the observer caches, or be
  // watching <html> for the nonce. Only the native API, read from this world, is safe then; a polyfilled page
  // shows its tools after a reload (the popup says so).
  const late = scope[lateMarker] === true;
  if (late && !native) return;
  const nonce = [...crypto.getRandomValues(new Uint8Array(16))]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
  if (!late) document.documentElement.setAttribute('data-tabward', nonce);
  new TabBridge(nonce, native).start();
}

if (!scope[marker]) {
  scope[marker] = true;
  startBridge();
}
