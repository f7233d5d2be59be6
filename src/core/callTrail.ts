// The audit trail of the call path (docs/architecture.md "Audit records"): a start record when a call begins
// (before anything can fail or hang), what the call was judged on as it goes, one end record with the same call id,
// events outside a call, and the end of every call still open at shutdown. No record holds a secret's value: every
// record passes the redactor whole as it is written (`write`), whatever field a page's or the agent's text reached
// (an element's name and a guard's reason quote the page: a label made of a typed password was written in clear).

import type { AuditEntry, AuditSink, AuditStart } from './audit.ts';
import type { UntiedStop } from './backstop.ts';
import type { ActionLook, GuardedAction } from './callTypes.ts';
import { asTabwardError, TabwardError } from './errors.ts';
import type { Decision } from './guard.ts';
import type { BrowserMode } from './kinds.ts';
import type { Redactor } from './redact.ts';

/** One call's record as it is filled in; written once, at its end. */
export type Trail = { -readonly [K in keyof AuditEntry]?: AuditEntry[K] };

/** Call ids are unique across the processes that share one audit log: a random prefix per process. */
const callPrefix = Math.random().toString(36).slice(2, 8);

export class CallTrail {
  private callSeq = 0;
  /** Calls started and not ended yet, by call id. */
  private readonly running = new Map<string, { trail: Trail; started: number }>();

  constructor(
    private readonly audit: AuditSink,
    private readonly mode: () => BrowserMode,
    private readonly redactor: () => Redactor,
  ) {}

  /** Records the call's start and keeps it among the running ones; the function returned drops it from there. */
  begin(
    action: GuardedAction<unknown>,
    frontEnd: string,
    started: number,
  ): { trail: Trail; ended: () => void } {
    const call = `${callPrefix}-${++this.callSeq}`;
    const trail: Trail = {
      call,
      tool: action.name,
      frontEnd,
      ...(action.subject ? { subject: { ...action.subject } } : {}),
    };
    this.write({
      time: new Date(started).toISOString(),
      call,
      frontEnd,
      tool: action.name,
      mode: this.mode(),
      ...(trail.subject ? { subject: trail.subject } : {}),
      outcome: 'started',
    });
    this.running.set(call, { trail, started });
    return { trail, ended: () => this.running.delete(call) };
  }

  /** What the call was judged on: the action, its page and element, the guard's verdict. */
  note(trail: Trail, action: GuardedAction<unknown>, look: ActionLook, decision: Decision): void {
    const redact = this.redactor();
    trail.kind = action.auditKind ?? look.facts.kind;
    trail.args = redact.value(action.auditArgs?.() ?? action.args);
    trail.mode = this.mode();
    trail.decision = decision.verdict;
    trail.reason = decision.reason;
    if (decision.verdict !== 'allow') trail.rule = decision.rule;
    const { tab } = look.facts;
    if (tab) {
      trail.tab = tab.id;
      trail.owner = tab.ownedByAgent ? 'agent' : 'user';
    }
    if (look.url) trail.url = redact.text(look.url);
    if (look.loadedFrom) trail.loadedFrom = redact.text(look.loadedFrom);
    if (look.element) trail.element = `${look.element.role} "${look.element.name}"`;
  }

  /** The call went through (or was skipped): its end record. */
  succeeded(trail: Trail, started: number): void {
    this.record(trail, { outcome: trail.outcome ?? 'ok', durationMs: Date.now() - started });
  }

  /** The call failed: its end record says how, and the error the front end gets is redacted. */
  failed(trail: Trail, error: unknown, started: number): TabwardError {
    const failure = asTabwardError(error);
    const redact = this.redactor();
    this.record(trail, {
      outcome: outcomeOf(failure.code),
      error: redact.text(failure.describe()),
      durationMs: Date.now() - started,
    });
    const hint = failure.hint === undefined ? undefined : redact.text(failure.hint);
    return new TabwardError(failure.code, redact.text(failure.message), hint);
  }

  /**
   * On shutdown: waits (at most `ms`) for the calls still running to end, then records the end of the rest,
   * so that no call is left with a start and no end.
   */
  async settle(ms: number, why: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.running.size > 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20));
    for (const [call, { trail, started }] of this.running) {
      this.running.delete(call);
      this.record(trail, { outcome: 'error', error: why, durationMs: Date.now() - started });
    }
  }

  /** Records something decided outside a call (the login-wall switch, a revoked grant) in the same log. */
  event(entry: Omit<AuditEntry, 'time'>): void {
    this.write({ time: new Date().toISOString(), ...entry });
  }

  /** Every record goes out here, each of its strings redacted (its time and call id are tabward's own). */
  private write(entry: AuditEntry | AuditStart): void {
    const { time, call } = entry;
    this.audit.record({ ...this.redactor().value(entry), time, ...(call !== undefined ? { call } : {}) });
  }

  /**
   * A request the choke point stopped with no tab or action to tell it to: an event of its own, so that the log
   * says what was kept from leaving even when no call was running.
   */
  untiedStop(stop: UntiedStop): void {
    const redact = this.redactor();
    this.event({
      tool: '(egress)',
      kind: 'request',
      frontEnd: 'browser',
      args: { method: stop.method },
      mode: this.mode(),
      ...(stop.tab !== undefined ? { tab: stop.tab } : {}),
      url: redact.text(stop.url),
      decision: 'block',
      reason: redact.text(stop.reason),
      // Refused, and sent all the same: the audit says what happened, not what tabward meant to happen.
      outcome: stop.sent ? 'error' : 'blocked',
      ...(stop.sent ? { error: 'sent although refused' } : {}),
      durationMs: 0,
    });
  }

  private record(trail: Trail, end: Pick<AuditEntry, 'outcome' | 'durationMs'> & { error?: string }): void {
    this.write({
      time: new Date().toISOString(),
      ...(trail.call ? { call: trail.call } : {}),
      frontEnd: trail.frontEnd ?? '?',
      tool: trail.tool ?? '?',
      kind: trail.kind ?? '?',
      args: trail.args ?? {},
      mode: trail.mode ?? this.mode(),
      decision: trail.decision ?? 'allow',
      ...pick(trail, [
        'tab',
        'owner',
        'url',
        'loadedFrom',
        'element',
        'targets',
        'subject',
        'rule',
        'reason',
        'approver',
        'choice',
        'blocked',
        'held',
        'sent',
        'followUps',
      ]),
      ...end,
    });
  }
}

function outcomeOf(code: TabwardError['code']): AuditEntry['outcome'] {
  if (code === 'blocked') return 'blocked';
  if (code === 'rejected') return 'rejected';
  if (code === 'pending_approval') return 'pending';
  return 'error';
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
