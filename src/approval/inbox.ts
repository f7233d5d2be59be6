// The questions a tabward process has open for its human, whatever channel carries them (docs/architecture.md
// "Consent"). A question is keyed by what it asks (tool, page, arguments, rule), so that a call made again after
// "still waiting" joins it instead of asking twice; its answer is spent by one call only; an answer to a question
// that is gone (its call cancelled, expired) is refused and recorded, never kept for a later call.

import { randomBytes } from 'node:crypto';
import type { ApprovalChoice, ApprovalRequest } from '../core/approvals.ts';

export interface Question {
  /** Four random letters and digits ("k7qm"), unlikely to repeat in any tabward of the home. */
  readonly id: string;
  readonly request: ApprovalRequest;
  readonly fingerprint: string;
  readonly askedAt: number;
  /** Only an approval with proof of a person's presence (a passkey assertion) may approve it. */
  readonly needsPresence: boolean;
  /** Who answered, once answered: "elicitation", "tabward approvals", "the approval page". */
  answeredBy?: string;
  answer?: ApprovalChoice;
}

export interface InboxEvents {
  /** A question was opened (not joined): channels that tell the human (a notification) start here. */
  readonly opened?: (question: Question) => void;
  /** Something worth a line in the audit log: an answer refused because its question is gone, an expiry. */
  readonly record?: (line: string) => void;
  /** Which questions need a human-verified approval (--human-verified: those on sensitive pages). */
  readonly needsPresence?: (request: ApprovalRequest) => boolean;
}

/** The choices that let an action run: with a question that needs presence, only a verified channel gives them. */
const approving = new Set(['approve', 'approve-all', 'site-grant', 'modify']);

type Settle = (choice: ApprovalChoice) => void;

/** The answer to `answer()`: what happened to it, in words the answering channel shows. */
export type AnswerResult = { readonly ok: true } | { readonly ok: false; readonly why: string };

export class ApprovalInbox {
  private readonly open = new Map<string, Question>();
  private readonly waiters = new Map<string, Set<Settle>>();
  private readonly expiry = new Map<string, NodeJS.Timeout>();
  private readonly gone = new Map<string, string>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly events: InboxEvents = {},
    /** How long a question nobody waits on (its call said "still waiting") stays answerable. */
    private readonly keepMs = 5 * 60_000,
  ) {}

  /** The open question asking exactly this, or a new one. */
  ask(request: ApprovalRequest): { question: Question; joined: boolean } {
    const fingerprint = fingerprintOf(request);
    for (const question of this.open.values())
      if (question.fingerprint === fingerprint) return { question, joined: true };
    const question: Question = {
      id: questionId((id) => this.open.has(id) || this.gone.has(id)),
      request,
      fingerprint,
      askedAt: Date.now(),
      needsPresence: this.events.needsPresence?.(request) === true,
    };
    this.open.set(question.id, question);
    this.keep(question);
    this.events.opened?.(question);
    this.changed();
    return { question, joined: false };
  }

  /**
   * Waits for the question's answer, at most `ms` (then undefined: still open). The answer is spent by the first
   * waiter it reaches; an answer given while nobody waited is spent by the next. Aborting `signal` withdraws the
   * question when no other call waits on it.
   */
  wait(question: Question, ms: number, signal?: AbortSignal): Promise<ApprovalChoice | undefined> {
    const held = question.answer;
    if (held) {
      this.close(question.id, undefined);
      return Promise.resolve(held);
    }
    if (!this.open.has(question.id))
      return Promise.resolve({ choice: 'reject', reason: 'the question is gone' });
    if (signal?.aborted) return Promise.resolve({ choice: 'reject', reason: 'the call was cancelled' });
    clearTimeout(this.expiry.get(question.id));
    return new Promise((resolve) => {
      const waiters = this.waiters.get(question.id) ?? new Set<Settle>();
      this.waiters.set(question.id, waiters);
      const done = (choice: ApprovalChoice | undefined) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', withdraw);
        waiters.delete(settle);
        resolve(choice);
      };
      const settle: Settle = (choice) => done(choice);
      const withdraw = () => {
        done({ choice: 'reject', reason: 'the call was cancelled' });
        if (waiters.size === 0) this.close(question.id, 'its call was cancelled');
      };
      const timer = setTimeout(() => {
        done(undefined);
        // Nobody waits now: the question stays answerable for a while, for the call made again.
        if (waiters.size === 0 && this.open.has(question.id)) this.keep(question);
      }, ms);
      signal?.addEventListener('abort', withdraw, { once: true });
      waiters.add(settle);
    });
  }

  /** A human's answer, from any channel. Refused (and recorded) when the question is gone or already answered. */
  answer(id: string, choice: ApprovalChoice, by: string, proof: { present?: boolean } = {}): AnswerResult {
    const question = this.open.get(id);
    if (!question) return { ok: false, why: this.refuseLate(id, choice.choice, by) };
    if (question.answer)
      return { ok: false, why: `question ${id} was already answered through ${question.answeredBy}` };
    if (question.needsPresence && approving.has(choice.choice) && proof.present !== true) {
      this.events.record?.(
        `an approval (${choice.choice}) through ${by} of question ${id} was refused: it needs a human-verified approval`,
      );
      return {
        ok: false,
        why: `question ${id} needs a human-verified approval: approve it on its page with your passkey (tabward approvals shows the link); through ${by} it can only be rejected or skipped`,
      };
    }
    question.answer = choice;
    question.answeredBy = by;
    const [waiter, ...others] = this.waiters.get(id) ?? [];
    if (waiter) {
      this.close(id, undefined);
      waiter(choice);
      for (const other of others)
        other({ choice: 'reject', reason: 'the answer went to another call asking the same' });
    } else this.changed();
    return { ok: true };
  }

  /** An answer to a question that is not open: recorded, and what its channel is told. */
  refuseLate(id: string, choice: string, by: string): string {
    const why = this.gone.get(id) ?? 'there is no such question';
    this.events.record?.(`an answer (${choice}) through ${by} to question ${id} was ignored: ${why}`);
    return `question ${id} is not open: ${why}; nothing was done`;
  }

  /** The questions not yet answered, oldest first. */
  list(): Question[] {
    return [...this.open.values()].filter((question) => !question.answer);
  }

  get(id: string): Question | undefined {
    return this.open.get(id);
  }

  /** Called on every change (a question opened, answered, gone): `tabward approvals --watch`, the page. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Ends a question nobody will answer in time (its call gave up waiting): a later answer is refused. */
  withdraw(id: string, why: string): void {
    for (const waiter of this.waiters.get(id) ?? []) waiter({ choice: 'reject', reason: why });
    this.close(id, why);
  }

  /** Withdraws every open question `asked` says yes to (a client's, when it ends its session). */
  withdrawWhere(asked: (request: ApprovalRequest) => boolean, why: string): void {
    for (const question of [...this.open.values()])
      if (asked(question.request)) this.withdraw(question.id, why);
  }

  /** On shutdown: every waiter is told no, every question closed. */
  closeAll(why: string): void {
    for (const id of [...this.open.keys()]) {
      for (const waiter of this.waiters.get(id) ?? []) waiter({ choice: 'reject', reason: why });
      this.close(id, why);
    }
  }

  private keep(question: Question): void {
    clearTimeout(this.expiry.get(question.id));
    const timer = setTimeout(() => {
      if (this.waiters.get(question.id)?.size) return;
      this.events.record?.(
        `question ${question.id} (${question.request.tool}) expired unanswered or unspent`,
      );
      this.close(question.id, 'it expired');
    }, this.keepMs);
    timer.unref();
    this.expiry.set(question.id, timer);
  }

  /** Removes a question; `why` (when it ends without being spent) is what a late answer is told. */
  private close(id: string, why: string | undefined): void {
    clearTimeout(this.expiry.get(id));
    this.expiry.delete(id);
    this.waiters.delete(id);
    if (!this.open.delete(id)) return;
    this.gone.set(id, why ?? 'it was answered and its call has acted on the answer');
    if (this.gone.size > 500) this.gone.delete(this.gone.keys().next().value as string);
    this.changed();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

/**
 * What makes two questions the same question: all the human is shown (reason, warning, offers, arguments...) and
 * the exact action it covers (bindsTo: tab, document, element), never the request id (each call makes a new one).
 */
function fingerprintOf(request: ApprovalRequest): string {
  const { id: _eachCallItsOwn, ...asked } = request;
  return JSON.stringify(sorted(asked));
}

/** Short, easy to type, and not reused by another tabward of the home (a notification names one question). */
function questionId(taken: (id: string) => boolean): string {
  const letters = 'abcdefghjkmnpqrstuvwxyz23456789';
  for (;;) {
    const id = Array.from(randomBytes(4), (byte) => letters[byte % letters.length]).join('');
    if (!taken(id)) return id;
  }
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
  );
}
