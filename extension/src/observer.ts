// MAIN-world content script, run at document_start right after the bridge (dynamic script ids sort "a-bridge"
// before "b-observer"). It reads the bridge's nonce from <html data-tabward> and removes it before any page
// script runs, then watches the page's WebMCP context: it wraps registerTool to record each registration
// (every call passes through unchanged), and attaches late when a polyfill installs document.modelContext
// after document_start. It answers the bridge's list and call requests over CustomEvents typed by the nonce.
// Everything it calls later is cached here, before the page can patch it, and called through the cached
// Reflect.apply (a patched Function.prototype.call would otherwise see each event and its nonce type).
// Without WebMCP it does nothing.

import type { CallOutcome, ObserverMessage, SiteTool } from '../../src/protocol/siteTools.ts';
import { resultText, toSiteTool, withdrawnMessage } from './toolDescriptor.ts';

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

/** The platform functions the observer uses after page scripts have run, taken before any of them. */
const pristine = {
  apply: Reflect.apply,
  dispatch: EventTarget.prototype.dispatchEvent,
  listen: EventTarget.prototype.addEventListener,
  CustomEvent,
  detail: Object.getOwnPropertyDescriptor(CustomEvent.prototype, 'detail')?.get,
  json: { stringify: JSON.stringify, parse: JSON.parse },
  setTimeout,
  setInterval,
  clearInterval,
};

class PageObserver {
  private readonly registrations = new Map<number, Registration>();
  private readonly inFlight = new Map<string, InFlight>();
  private context: ModelContextLike | undefined;
  private nextRegistration = 1;

  constructor(private readonly nonce: string) {}

  start(): void {
    pristine.apply(pristine.listen, document, [this.nonce, (event: Event) => this.receive(event)]);
    this.attach();
    // A polyfill arrives with a later script: keep looking for two minutes (a property read every 100 ms).
    const timer = pristine.setInterval(() => this.attach(), 100);
    pristine.setTimeout(() => pristine.clearInterval(timer), 120_000);
  }

  private send(message: ObserverMessage): void {
    const event = new pristine.CustomEvent(this.nonce, { detail: pristine.json.stringify(message) });
    pristine.apply(pristine.dispatch, document, [event]);
  }

  private receive(event: Event): void {
    const detail: unknown = pristine.detail ? pristine.apply(pristine.detail, event, []) : undefined;
    if (typeof detail !== 'string') return;
    let message: ObserverMessage;
    try {
      message = pristine.json.parse(detail) as ObserverMessage;
    } catch {
      return;
    }
    if (message.from !== 'bridge') return;
    if (message.kind === 'list') {
      this.attach();
      void this.announce();
    } else if (message.kind === 'call') void this.call(message.callId, message.name, message.args);
  }

  /** Wraps the page's registerTool once document.modelContext exists (again, if a polyfill replaces it). */
  private attach(): void {
    const candidate = (document as Document & { modelContext?: ModelContextLike }).modelContext;
    if (!candidate || candidate === this.context || typeof candidate.registerTool !== 'function') return;
    this.context = candidate;
    const original = candidate.registerTool;
    const observer = this;
    try {
      candidate.registerTool = function (this: unknown, tool: unknown, options?: { signal?: AbortSignal }) {
        const result = pristine.apply(original, this, [tool, options]);
        // Recorded only once the platform accepted it (it rejects duplicate names).
        Promise.resolve(result).then(
          () => observer.record(tool, options?.signal),
          () => undefined,
        );
        return result;
      };
    } catch {}
    candidate.addEventListener?.('toolchange', () => void this.announce());
    void this.announce();
  }

  private record(raw: unknown, signal: AbortSignal | undefined): void {
    const candidate = raw as { execute?: unknown } | null;
    const tool = candidate
      ? toSiteTool(candidate as Parameters<typeof toSiteTool>[0], pristine.json)
      : undefined;
    if (!tool || typeof candidate?.execute !== 'function' || signal?.aborted) return;
    const registration: Registration = {
      id: this.nextRegistration++,
      tool,
      execute: candidate.execute as Registration['execute'],
    };
    this.registrations.set(registration.id, registration);
    if (signal) pristine.apply(pristine.listen, signal, ['abort', () => this.withdraw(registration)]);
    pristine.setTimeout(() => void this.announce(), 0);
  }

  /** Keyed per registration: aborting an old one never touches a newer one of the same name. */
  private withdraw(registration: Registration): void {
    this.registrations.delete(registration.id);
    this.send({ from: 'observer', kind: 'withdrawn', name: registration.tool.name });
    for (const [callId, call] of this.inFlight) {
      if (call.registrationId !== registration.id) continue;
      this.inFlight.delete(callId);
      call.settle({
        ok: false,
        error: { code: 'unregistered', message: withdrawnMessage(call.name, call.readOnly) },
      });
    }
    void this.announce();
  }

  private async contextTools(): Promise<Map<string, { tool: SiteTool; native: unknown }>> {
    const found = new Map<string, { tool: SiteTool; native: unknown }>();
    const getTools = this.context?.getTools;
    if (typeof getTools !== 'function') return found;
    try {
      for (const native of await pristine.apply(getTools, this.context, [])) {
        const tool = toSiteTool(native as Parameters<typeof toSiteTool>[0], pristine.json);
        if (tool) found.set(tool.name, { tool, native });
      }
    } catch {}
    return found;
  }

  private async announce(): Promise<void> {
    const byName = new Map<string, SiteTool>();
    for (const [name, entry] of await this.contextTools()) byName.set(name, entry.tool);
    for (const registration of this.registrations.values())
      byName.set(registration.tool.name, registration.tool);
    for (const [callId, call] of this.inFlight) {
      if (call.registrationId !== undefined || byName.has(call.name)) continue;
      this.inFlight.delete(callId);
      call.settle({
        ok: false,
        error: { code: 'unregistered', message: withdrawnMessage(call.name, call.readOnly) },
      });
    }
    this.send({ from: 'observer', kind: 'tools', tools: [...byName.values()] });
  }

  private async call(callId: string, name: string, args: Record<string, unknown>): Promise<void> {
    const registration = [...this.registrations.values()].reverse().find((r) => r.tool.name === name);
    const fromContext = registration ? undefined : (await this.contextTools()).get(name);
    const tool = registration?.tool ?? fromContext?.tool;
    const settle = (outcome: CallOutcome): void =>
      this.send({ from: 'observer', kind: 'outcome', callId, outcome });
    if (!tool)
      return settle({
        ok: false,
        error: { code: 'no_tool', message: `The page has no tool "${name}" now.` },
      });
    this.inFlight.set(callId, { name, registrationId: registration?.id, readOnly: tool.readOnly, settle });
    let outcome: CallOutcome;
    try {
      const client = { requestUserInteraction: async (run: () => unknown) => run() };
      const value = registration
        ? await pristine.apply(registration.execute, undefined, [args, client])
        : await this.executeThroughContext(fromContext?.native, args);
      outcome = { ok: true, result: resultText(value, pristine.json.stringify) };
    } catch (error) {
      // A polyfill rejects calls of a tool it unregisters: that is a withdrawal, not a failure of the tool.
      const stillThere = registration
        ? this.registrations.has(registration.id)
        : (await this.contextTools()).has(name);
      outcome = stillThere
        ? { ok: false, error: { code: 'tool_failed', message: `The tool failed: ${String(error)}` } }
        : { ok: false, error: { code: 'unregistered', message: withdrawnMessage(name, tool.readOnly) } };
    }
    if (this.inFlight.delete(callId)) settle(outcome);
  }

  private async executeThroughContext(native: unknown, args: Record<string, unknown>): Promise<unknown> {
    const run = this.context?.executeTool;
    if (typeof run !== 'function') throw new Error('the page offers no way to run this tool');
    // Polyfills take the arguments as JSON text; the platform takes an object.
    try {
      return await pristine.apply(run, this.context, [native, pristine.json.stringify(args)]);
    } catch (error) {
      if (error instanceof TypeError) return await pristine.apply(run, this.context, [native, args]);
      throw error;
    }
  }
}

const root = document.documentElement;
const nonce = root?.getAttribute('data-tabward');
if (root && nonce) {
  root.removeAttribute('data-tabward');
  new PageObserver(nonce).start();
}
