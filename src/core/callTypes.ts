// The vocabulary of the call path (core/callPath.ts): an action as a front end describes it (its live look, its
// work, its follow-up read), who calls, what comes back, and what the path is built from. Types only.

import type { Approver } from './approvals.ts';
import type { AuditEntry, AuditSink } from './audit.ts';
import type { Backstop, ToldLines } from './backstop.ts';
import type { TabwardError } from './errors.ts';
import type { GuardFacts } from './guard.ts';
import type { BrowserMode, WritePolicy } from './kinds.ts';
import type { Redactor } from './redact.ts';
import type { RuleSet } from './sensitiveRules.ts';

/** What the guard needs to know about an action, less what the call path knows itself. */
export type ActionFacts = Omit<GuardFacts, 'taintedOrigins' | 'approveAll' | 'siteGrant' | 'policy' | 'mode'>;

/** An action as the browser (or the relay) reports it right now. */
export interface ActionLook {
  readonly facts: ActionFacts;
  /** What one approval is bound to (tab, document, element as shown, exact arguments). */
  readonly binding: string;
  /** The page or destination, for the human and the audit. */
  readonly url?: string;
  /**
   * Where the page's document was loaded from, when it shows another address (history.replaceState): the human
   * and the audit see both, since the one the page shows is the page's to choose.
   */
  readonly loadedFrom?: string;
  readonly element?: { readonly role: string; readonly name: string };
  /** For a drag: where it drops, for the human. */
  readonly dropOnto?: { readonly role: string; readonly name: string };
  /** For an action writing several values: which field and frame each goes to, for the human. */
  readonly fields?: readonly { readonly field: string; readonly frame: string }[];
  /**
   * The arguments as a question shows them: a value the action types into a password field masked where it stands
   * (any other place a typed literal shows in the question is not asked: core/questionRedaction.ts). Default args.
   */
  readonly questionArgs?: Readonly<Record<string, unknown>>;
  /** The tab's document holds a secret tabward typed: it may send only to its own host unasked. */
  readonly holdsTypedSecret?: boolean;
}

export interface GuardedAction<R> {
  readonly name: string;
  /** The audit's word for what kind of thing this is (default: the guard's kind). */
  readonly auditKind?: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** The arguments as the audit keeps them, once looked at (a key pressed into a password field masked); default args. */
  auditArgs?(): Readonly<Record<string, unknown>>;
  /** What the audit names besides the tool: a recipe step, a site tool, the calling agent. */
  readonly subject?: Readonly<Record<string, string | number>>;
  look(): Promise<ActionLook>;
  act(look: ActionLook): Promise<R>;
  /** What the front end answers when the human chose to skip: nothing was done. */
  skipped(): R;
  /** The same action with the arguments a human modified; absent: modifying is refused. */
  withArgs?(args: Readonly<Record<string, unknown>>): GuardedAction<R>;
  /** Runs once a human approved, just before acting (e.g. remember the origin a secret was approved for). */
  onApproved?(look: ActionLook): void;
  /** What the completion record keeps of the result: the elements acted on, as a saved recipe finds them. */
  auditTargets?(value: R): AuditEntry['targets'];
  /**
   * The pages the result shows (their URLs as shown and as loaded): the path taints the session by each one a
   * sensitive rule matches. Reads report what they read; the path alone records it.
   */
  readsOf?(value: R): readonly string[];
  /**
   * A read the call makes once it acted (the `snapshot` option): part of the same audited call, judged by the guard
   * like that read on its own, tainting like any read. Absent or undefined: none.
   */
  followUp?(value: R): FollowUp | undefined;
}

/**
 * A read made after the action, inside its call. It never fails the call (the action went through): what came of
 * it is handed to `done`, and the call's audit record names it (`followUps`).
 */
export interface FollowUp {
  readonly action: GuardedAction<unknown>;
  done(
    outcome: { readonly value: unknown; readonly stopped: ToldLines } | { readonly failure: TabwardError },
  ): void;
}

export interface CallPathOptions {
  readonly rules: RuleSet;
  readonly audit: AuditSink;
  readonly policy: WritePolicy;
  readonly mode: () => BrowserMode;
  readonly redactor: () => Redactor;
  readonly backstop?: Backstop;
  readonly approveAllTtlMs?: number;
  /** The clock site grants expire by (tests move it forward). */
  readonly clock?: () => number;
  /** How long an approval's network pass may stay open while its action runs. */
  readonly passMaxMs: number;
}

export interface Caller {
  readonly frontEnd: string;
  /** Which agent calls, when several share one tabward (see ApprovalRequest.client). */
  readonly client?: string;
  readonly approver: Approver;
  /** Aborts when the request is cancelled or its client is gone: a late answer never acts. */
  readonly signal: AbortSignal;
}

export interface CallOutcome<R> {
  readonly value: R;
  /** What the backstop stopped while the action ran, redacted, for the front end to report. */
  readonly stopped: ToldLines;
}
