// The workspace's activity as the popup shows it: by agent (the name its token was made with), then by task (one
// call), each with its live state. The relay's activity lines say what happened; a question waiting in this popup
// says the call waits for approval even when the relay did not ask (this browser's own rules did).

import type { ActivityEntry } from '../../src/protocol/siteTools.ts';

export type CallState = 'waiting for approval' | 'running' | 'done' | 'failed';

export interface CallView {
  readonly taskId: string;
  readonly site: string;
  readonly tool: string;
  readonly state: CallState;
  /** What the last line said (why it waits, where it runs, how it failed). */
  readonly detail: string;
  /** The events so far, oldest first: "waiting", "always", "called", "done". */
  readonly trail: readonly ActivityEntry['event'][];
  readonly at: string;
}

export interface AgentView {
  readonly agent: string;
  readonly calls: readonly CallView[];
}

/** A call waiting in this popup: it may not be in the relay's activity yet. */
export interface WaitingHere {
  readonly taskId: string;
  readonly agent: string;
  readonly site: string;
  readonly tool: string;
  readonly reason: string;
}

const stateOf: Record<ActivityEntry['event'], CallState> = {
  waiting: 'waiting for approval',
  approved: 'running',
  always: 'running',
  called: 'running',
  denied: 'failed',
  done: 'done',
  failed: 'failed',
};

/** Agents by their latest activity, newest first; each agent's calls newest first, at most `perAgent`. */
export function groupActivity(
  entries: readonly ActivityEntry[],
  waiting: readonly WaitingHere[],
  perAgent = 8,
): AgentView[] {
  const calls = new Map<string, CallView & { agent: string }>();
  for (const entry of entries) {
    const before = calls.get(entry.taskId);
    // A call that ended stays ended: a late line (an approval withdrawn after a failure) does not revive it.
    const ended = before && (before.state === 'done' || before.state === 'failed');
    calls.set(entry.taskId, {
      taskId: entry.taskId,
      agent: entry.agent || 'you',
      site: entry.site,
      tool: entry.tool,
      state: ended ? before.state : stateOf[entry.event],
      detail: entry.detail || before?.detail || '',
      trail: [...(before?.trail ?? []), entry.event],
      at: entry.at,
    });
  }
  for (const question of waiting) {
    const before = calls.get(question.taskId);
    if (before?.state === 'done' || before?.state === 'failed') continue;
    calls.set(question.taskId, {
      taskId: question.taskId,
      agent: before?.agent ?? (question.agent || 'you'),
      site: question.site,
      tool: question.tool,
      state: 'waiting for approval',
      detail: question.reason,
      trail: before?.trail ?? ['waiting'],
      at: before?.at ?? new Date().toISOString(),
    });
  }
  const byAgent = new Map<string, CallView[]>();
  for (const { agent, ...call } of [...calls.values()].reverse()) {
    const list = byAgent.get(agent) ?? [];
    if (list.length < perAgent) list.push(call);
    byAgent.set(agent, list);
  }
  return [...byAgent]
    .map(([agent, list]) => ({ agent, calls: list }))
    .sort((a, b) => latest(b).localeCompare(latest(a)));
}

function latest(view: AgentView): string {
  return [...view.calls.map((call) => call.at)].sort().at(-1) ?? '';
}
