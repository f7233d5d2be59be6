// Isolated-world content script, run at document_start in the pages of shared sites only. It makes a random
// nonce for this document and hands it to the MAIN-world observer through <html data-tabward> (the observer
// removes it before page scripts run). Where the browser has native WebMCP it consumes it directly from this
// world (getTools / executeTool), immune to page patching; otherwise it asks the observer. It announces the
// page's tools to the service worker, runs the calls the worker routes here, and fails a call at once when
// the page withdraws its tool. bfcache: "gone" on pagehide, announced again on pageshow.

import {
  type CallOutcome,
  maxResultBytes,
  type ObserverMessage,
  type SiteTool,
  type TabToWorker,
  type WorkerToTab,
} from '../../src/protocol/siteTools.ts';
import { resultText, toSiteTool } from './toolDescriptor.ts';

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

const marker = '__tabwardBridge';
/** Set by the worker before it injects the bridge into a tab that was open before its site was shared. */
const lateMarker = '__tabwardLate';
const scope = globalThis as typeof globalThis & { [marker]?: boolean; [lateMarker]?: boolean };
if (!scope[marker]) {
  scope[marker] = true;
  startBridge();
}

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
  const pending = new Map<string, Pending>();
  let tools: SiteTool[] = [];
  let announced = '';

  const tell = (message: TabToWorker): void => {
    chrome.runtime.sendMessage(message).catch(() => undefined);
  };
  const announce = (next: SiteTool[], force = false): void => {
    tools = next;
    const text = JSON.stringify(next);
    if (!force && (text === announced || (!announced && next.length === 0))) return;
    announced = text;
    for (const call of pending.values())
      if (!next.some((t) => t.name === call.name)) failWithdrawn(call.name);
    tell({ type: 'tools', tools: next });
  };
  /** Fails the calls in flight on a withdrawn tool at once; the page gives them no answer of its own. */
  const failWithdrawn = (name: string): void => {
    for (const [callId, call] of pending) {
      if (call.name !== name) continue;
      pending.delete(callId);
      call.settle({
        ok: false,
        error: {
          code: 'unregistered',
          message: `The page withdrew "${call.name}" during the call.${call.readOnly ? '' : ' The outcome is unknown: the page may or may not have done it.'}`,
        },
      });
    }
  };
  const toObserver = (message: ObserverMessage): void => {
    document.dispatchEvent(new CustomEvent(nonce, { detail: JSON.stringify(message) }));
  };

  async function nativeTools(): Promise<{ tool: SiteTool; raw: unknown }[]> {
    if (!native) return [];
    try {
      return (await native.getTools()).flatMap((raw) => {
        const tool = toSiteTool(raw as Parameters<typeof toSiteTool>[0], JSON);
        return tool ? [{ tool, raw }] : [];
      });
    } catch {
      return [];
    }
  }
  const refreshNative = async (force = false): Promise<void> =>
    announce(
      (await nativeTools()).map((entry) => entry.tool),
      force,
    );

  document.addEventListener(nonce, (event) => {
    const detail = (event as CustomEvent<unknown>).detail;
    if (typeof detail !== 'string') return;
    let message: ObserverMessage;
    try {
      message = JSON.parse(detail) as ObserverMessage;
    } catch {
      return;
    }
    if (message.from !== 'observer') return;
    if (message.kind === 'tools' && !native) announce([...message.tools]);
    // With native WebMCP the list alone misses an abort followed at once by a new registration of the name.
    if (message.kind === 'withdrawn' && native) failWithdrawn(message.name);
    if (message.kind === 'outcome') {
      const call = pending.get(message.callId);
      if (!call) return;
      pending.delete(message.callId);
      call.settle(message.outcome);
    }
  });

  async function run(message: WorkerToTab): Promise<CallOutcome> {
    const tool = tools.find((t) => t.name === message.name);
    const outcome = await new Promise<CallOutcome>((settle) => {
      pending.set(message.callId, { name: message.name, readOnly: tool?.readOnly ?? false, settle });
      if (!native)
        return toObserver({
          from: 'bridge',
          kind: 'call',
          callId: message.callId,
          name: message.name,
          args: message.args,
        });
      void runNative(message).then((result) => {
        if (pending.delete(message.callId)) settle(result);
      });
    });
    if (outcome.ok && outcome.result.length > maxResultBytes)
      return {
        ok: false,
        error: {
          code: 'too_large',
          message: `The result is over the ${maxResultBytes}-byte cap; ask the tool for less.`,
        },
      };
    return outcome;
  }

  async function runNative(message: WorkerToTab): Promise<CallOutcome> {
    const entry = (await nativeTools()).find((e) => e.tool.name === message.name);
    if (!entry || !native)
      return {
        ok: false,
        error: { code: 'no_tool', message: `The page has no tool "${message.name}" now.` },
      };
    try {
      return {
        ok: true,
        result: resultText(await native.executeTool(entry.raw, message.args), JSON.stringify),
      };
    } catch (error) {
      return { ok: false, error: { code: 'tool_failed', message: `The tool failed: ${String(error)}` } };
    }
  }

  chrome.runtime.onMessage.addListener((message: WorkerToTab, _sender, reply) => {
    if (message?.type !== 'call') return false;
    void run(message).then(reply);
    return true;
  });

  const list = (force = false): void => {
    if (native) void refreshNative(force);
    else toObserver({ from: 'bridge', kind: 'list' });
    if (force && !native) announce(tools, true);
  };
  native?.addEventListener('toolchange', () => void refreshNative());
  // Gone on every pagehide: a cross-site navigation's new document may announce before this one unloads, and
  // a page put in the back/forward cache cannot answer; pageshow from the cache announces it again.
  addEventListener('pagehide', () => tell({ type: 'gone' }));
  addEventListener('pageshow', (event) => {
    if (event.persisted) list(true);
  });
  document.addEventListener('DOMContentLoaded', () => list());
  addEventListener('load', () => list());
  setTimeout(() => list(), 1500);
  list();
}
