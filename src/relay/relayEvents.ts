// What the relay records outside a call (docs/architecture.md "Paired browsers"): an answer for a task nobody
// waits on any more (said on stderr and in the audit log; an outcome may settle the task's idempotency key, or is
// ignored and audited as blocked when it comes from a browser that has no say), and a browser's socket refused or
// closed for its pairing.

import type { AuditEntry } from '../core/audit.ts';
import type { CallPath } from '../core/callPath.ts';
import { encodedBytes } from '../protocol/siteTools.ts';
import { keySettlement } from './callKeys.ts';
import type { LateAnswer } from './extensionHub.ts';
import type { ExtensionRecord, RelayStore } from './relayStore.ts';

export interface RelayEventsDeps {
  readonly store: RelayStore;
  readonly path: CallPath;
  /** Where the relay says what the agent cannot hear; stderr by default. */
  readonly log: (line: string) => void;
}

export class RelayEvents {
  constructor(private readonly deps: RelayEventsDeps) {}

  /**
   * An answer for a task nobody waits for any more (its socket dropped, its deadline passed, the relay
   * restarted): said on stderr and in the audit log, and an outcome settles the task's idempotency key.
   */
  lateAnswer(answer: LateAnswer, from: ExtensionRecord, waitedOn?: ExtensionRecord): void {
    const { store } = this.deps;
    const task = store.task(answer.taskId);
    const refused = whyIgnored(answer, from, waitedOn, task);
    if (refused) {
      this.log(`tabward relay: ${refused}.`);
      this.recordLateOutcome(
        answer.taskId,
        task,
        { browser: from.id, late: answer.t },
        { decision: 'block', reason: refused, outcome: 'blocked' },
      );
      return;
    }
    const what =
      answer.t === 'outcome'
        ? answer.outcome.ok
          ? `ok (${encodedBytes(answer.outcome.result)} bytes)`
          : `failed: ${answer.outcome.error.message}`
        : answer.t === 'decision'
          ? `the human's decision "${answer.decision}"`
          : 'the tab that would run it';
    const line = `tabward relay: late answer for ${answer.taskId}${task ? ` (${task.tool} on ${task.origin})` : ' (a task this relay does not know)'} from browser ${from.id}, after the relay stopped waiting: ${what}.`;
    this.log(line);
    if (answer.t !== 'outcome') return;
    this.recordLateOutcome(
      answer.taskId,
      task,
      { browser: from.id },
      {
        decision: 'allow',
        reason:
          'late outcome: the relay no longer waited for this task; the agent was told the outcome is unknown',
        outcome: answer.outcome.ok ? 'ok' : 'error',
        ...(answer.outcome.ok ? {} : { error: answer.outcome.error.message }),
      },
    );
    if (task) store.endTask(answer.taskId, answer.outcome.ok ? 'done late' : 'failed late');
    if (store.keyOfTask(answer.taskId)?.state === 'unknown') {
      const { state, detail } = keySettlement(answer.outcome);
      store.settleKey(answer.taskId, state, detail);
    }
  }

  /** A late outcome in the audit log, as the relay took it (or why it did not). */
  private recordLateOutcome(
    taskId: string,
    task: { tool: string; origin: string } | undefined,
    from: Record<string, string>,
    verdict: Pick<AuditEntry, 'decision' | 'reason' | 'outcome' | 'error'>,
  ): void {
    this.deps.path.recordEvent({
      frontEnd: 'relay',
      tool: task?.tool ?? 'unknown',
      kind: 'site',
      args: {},
      mode: 'shared',
      subject: { task: taskId, site: task?.origin ?? '', late: 'outcome', ...from },
      ...verdict,
      durationMs: 0,
    });
  }

  private log(line: string): void {
    this.deps.log(line);
  }

  /** A browser's socket refused or closed for its pairing: on stderr and in the audit log, as it happened. */
  pairingEvent(extension: ExtensionRecord, what: string): void {
    this.log(`tabward relay: browser ${extension.id} (workspace ${extension.workspace}): ${what}.`);
    const refused = what.includes('refused');
    this.deps.path.recordEvent({
      frontEnd: 'relay',
      tool: '(browser)',
      kind: 'pairing',
      args: {},
      mode: 'shared',
      subject: { browser: extension.id, workspace: extension.workspace },
      decision: refused ? 'block' : 'allow',
      reason: what,
      outcome: refused ? 'blocked' : 'ok',
      durationMs: 0,
    });
  }
}

/**
 * Why an answer nobody waits for from this browser changes nothing, if it does not: the relay waits for it from
 * another browser (a forgery, never late); an outcome from a browser the call was never sent to (task ids are in
 * the activity feed every browser of the workspace gets: it would settle the call's key); an outcome for a task
 * that ended with a known outcome (its agent was told ok or failed; its record and key stand).
 */
function whyIgnored(
  answer: LateAnswer,
  from: ExtensionRecord,
  waitedOn: ExtensionRecord | undefined,
  task: { status: string; browser: string | null } | undefined,
): string | undefined {
  if (waitedOn)
    return `browser ${from.id} sent ${answerWords(answer)} for ${answer.taskId}, which waits on browser ${waitedOn.id}: ignored`;
  if (answer.t !== 'outcome') return undefined;
  if (task?.browser !== from.id)
    return `browser ${from.id} sent an outcome for ${answer.taskId}, a call ${task?.browser ? `sent to browser ${task.browser}` : 'it was never sent'}: ignored`;
  if (!outcomeStillOpen(task.status))
    return `browser ${from.id} sent an outcome for ${answer.taskId}, which had already ended (${task.status}): ignored`;
  return undefined;
}

/** A task the agent was told ended with an unknown outcome (or that a restart cut): a late outcome may settle it. */
function outcomeStillOpen(status: string): boolean {
  return status === 'unknown' || status === 'interrupted' || status === 'running';
}

/** What a browser's answer was, in words for stderr and the audit. */
function answerWords(answer: LateAnswer): string {
  return answer.t === 'outcome'
    ? 'an outcome'
    : answer.t === 'decision'
      ? `a decision ("${answer.decision}")`
      : 'a tab';
}
