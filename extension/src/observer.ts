// MAIN-world content script, run at document_start right after the bridge (dynamic script ids sort "a-bridge"
// before "b-observer"). It reads the bridge's nonce from <html data-tabward> and removes it before any page
// script runs, then watches the page's WebMCP context: it wraps registerTool to record each registration
// (every call passes through unchanged), and attaches late when a polyfill installs document.modelContext
// after document_start. It answers the bridge's list and call requests over CustomEvents typed by the nonce.
// Everything it relies on is cached here, before the page can patch it. Without WebMCP it does nothing.

import type { CallOutcome, ObserverMessage, SiteTool } from '../../src/protocol/siteTools.ts';
import { resultText, toSiteTool } from './toolDescriptor.ts';

interface Registration {
  readonly id: number;
  readonly tool: SiteTool;
  readonly execute: (input: unknown, client: unknown) => unknown;
}

interface ModelContextLike {
  registerTool?: (tool: unknown, options?: { signal?: AbortSignal }) => unknown;
  getTools?: () => Promise<unknown[]>;
  executeTool?: (tool: unknown, input: unknown) => Promise<unknown>;
  addEventListener?: (type: string, listener: () => void) => void;
}

interface InFlight {
  readonly name: string;
  readonly registrationId: number | undefined;
  readonly readOnly: boolean;
  readonly settle: (outcome: CallOutcome) => void;
}

const doc = document;
const root = doc.documentElement;
const getAttribute = Element.prototype.getAttribute;
const removeAttribute = Element.prototype.removeAttribute;
const nonce = root ? getAttribute.call(root, 'data-tabward') : null;
if (root && nonce) {
  removeAttribute.call(root, 'data-tabward');
  observe(nonce);
}

function observe(nonce: string): void {
  const dispatch = EventTarget.prototype.dispatchEvent;
  const listen = EventTarget.prototype.addEventListener;
  const Custom = CustomEvent;
  const detailOf = Object.getOwnPropertyDescriptor(CustomEvent.prototype, 'detail')?.get;
  const json = { stringify: JSON.stringify, parse: JSON.parse };
  const later = setTimeout;
  const every = setInterval;
  const registrations = new Map<number, Registration>();
  const inFlight = new Map<string, InFlight>();
  let context: ModelContextLike | undefined;
  let nextRegistration = 1;

  const send = (message: ObserverMessage): void => {
    dispatch.call(doc, new Custom(nonce, { detail: json.stringify(message) }));
  };
  const fail = (call: InFlight, message: string): void =>
    call.settle({ ok: false, error: { code: 'unregistered', message } });
  const withdrawn = (call: { name: string; readOnly: boolean }): string =>
    `The page withdrew "${call.name}" during the call.${call.readOnly ? '' : ' The outcome is unknown: the page may or may not have done it.'}`;

  async function contextTools(): Promise<Map<string, { tool: SiteTool; native: unknown }>> {
    const found = new Map<string, { tool: SiteTool; native: unknown }>();
    if (typeof context?.getTools !== 'function') return found;
    try {
      for (const native of await context.getTools()) {
        const tool = toSiteTool(native as Parameters<typeof toSiteTool>[0], json);
        if (tool) found.set(tool.name, { tool, native });
      }
    } catch {}
    return found;
  }

  async function announce(): Promise<void> {
    const fromContext = await contextTools();
    const byName = new Map<string, SiteTool>();
    for (const [name, entry] of fromContext) byName.set(name, entry.tool);
    for (const registration of registrations.values()) byName.set(registration.tool.name, registration.tool);
    for (const [callId, call] of inFlight) {
      if (call.registrationId === undefined && !byName.has(call.name)) {
        inFlight.delete(callId);
        fail(call, withdrawn(call));
      }
    }
    send({ from: 'observer', kind: 'tools', tools: [...byName.values()] });
  }

  function record(raw: unknown, signal: AbortSignal | undefined): void {
    const candidate = raw as { execute?: unknown } | null;
    const tool = candidate ? toSiteTool(candidate as Parameters<typeof toSiteTool>[0], json) : undefined;
    if (!tool || typeof candidate?.execute !== 'function' || signal?.aborted) return;
    const registration: Registration = {
      id: nextRegistration++,
      tool,
      execute: candidate.execute as Registration['execute'],
    };
    registrations.set(registration.id, registration);
    signal?.addEventListener('abort', () => {
      registrations.delete(registration.id);
      send({ from: 'observer', kind: 'withdrawn', name: tool.name });
      for (const [callId, call] of inFlight) {
        if (call.registrationId !== registration.id) continue;
        inFlight.delete(callId);
        fail(call, withdrawn(call));
      }
      void announce();
    });
    later(() => void announce(), 0);
  }

  function attach(): void {
    const candidate = (doc as Document & { modelContext?: ModelContextLike }).modelContext;
    if (!candidate || candidate === context || typeof candidate.registerTool !== 'function') return;
    context = candidate;
    const original = candidate.registerTool;
    try {
      candidate.registerTool = function (this: unknown, tool: unknown, options?: { signal?: AbortSignal }) {
        const result = original.call(this, tool, options);
        // Recorded only once the platform accepted it (it rejects duplicate names).
        Promise.resolve(result).then(
          () => record(tool, options?.signal),
          () => undefined,
        );
        return result;
      };
    } catch {}
    candidate.addEventListener?.('toolchange', () => void announce());
    void announce();
  }

  async function call(callId: string, name: string, args: Record<string, unknown>): Promise<void> {
    const registration = [...registrations.values()].reverse().find((r) => r.tool.name === name);
    const fromContext = registration ? undefined : (await contextTools()).get(name);
    const tool = registration?.tool ?? fromContext?.tool;
    if (!tool) {
      send({
        from: 'observer',
        kind: 'outcome',
        callId,
        outcome: { ok: false, error: { code: 'no_tool', message: `The page has no tool "${name}" now.` } },
      });
      return;
    }
    const settle = (outcome: CallOutcome): void =>
      send({ from: 'observer', kind: 'outcome', callId, outcome });
    inFlight.set(callId, { name, registrationId: registration?.id, readOnly: tool.readOnly, settle });
    let outcome: CallOutcome;
    try {
      const value = registration
        ? await registration.execute(args, { requestUserInteraction: async (run: () => unknown) => run() })
        : await executeThroughContext(fromContext?.native, args);
      outcome = { ok: true, result: resultText(value, json.stringify) };
    } catch (error) {
      // A polyfill rejects calls of a tool it unregisters: that is a withdrawal, not a failure of the tool.
      const stillThere = registration ? registrations.has(registration.id) : (await contextTools()).has(name);
      outcome = stillThere
        ? { ok: false, error: { code: 'tool_failed', message: `The tool failed: ${String(error)}` } }
        : {
            ok: false,
            error: { code: 'unregistered', message: withdrawn({ name, readOnly: tool.readOnly }) },
          };
    }
    if (!inFlight.delete(callId)) return;
    settle(outcome);
  }

  async function executeThroughContext(native: unknown, args: Record<string, unknown>): Promise<unknown> {
    const run = context?.executeTool;
    if (typeof run !== 'function') throw new Error('the page offers no way to run this tool');
    // Polyfills take the arguments as JSON text; the platform takes an object.
    try {
      return await run.call(context, native, json.stringify(args));
    } catch (error) {
      if (error instanceof TypeError) return await run.call(context, native, args);
      throw error;
    }
  }

  listen.call(doc, nonce, (event: Event) => {
    const detail = detailOf ? detailOf.call(event) : undefined;
    if (typeof detail !== 'string') return;
    let message: ObserverMessage;
    try {
      message = json.parse(detail) as ObserverMessage;
    } catch {
      return;
    }
    if (message.from !== 'bridge') return;
    if (message.kind === 'list') {
      attach();
      void announce();
    } else if (message.kind === 'call') void call(message.callId, message.name, message.args);
  });

  attach();
  // A polyfill arrives with a later script: keep looking for two minutes (a property read every 100 ms).
  const timer = every(attach, 100);
  later(() => clearInterval(timer), 120_000);
}
