// What an agent can do through the relay, independent of MCP: list the shared sites' tools, read one tool's
// definition, call a tool. A call is checked against the page's own schema before anything reaches the browser,
// then goes through the one call path (core/callPath.ts): the extension says which document would run it, the
// guard judges that document's URL (read-only runs, sensitive asks, writes ask unless "always allow"), the human
// answers in the extension popup, the document is located again and must be the one approved, the call runs
// there under the deadline and a result size cap, and the audit log and the workspace's activity record it. A
// call may carry an idempotency key (callKeys.ts); an outcome that arrives after the relay stopped waiting is
// logged (stderr and the audit log) and settles its key.

import type { Approver } from '../core/approvals.ts';
import type { AuditSink } from '../core/audit.ts';
import { CallPath, type GuardedAction, type CallOutcome as PathOutcome } from '../core/callPath.ts';
import { quotedForDisplay, visibleLines } from '../core/displayText.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import { Redactor, untrusted } from '../core/redact.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import { siteCallFacts } from '../core/siteCalls.ts';
import { trustedReadOnly } from '../protocol/siteRules.ts';
import {
  type ActivityEntry,
  type CallTarget,
  type SiteTool,
  withinResultCap,
} from '../protocol/siteTools.ts';
import { answerForEarlier, callHashOf, keySettlement } from './callKeys.ts';
import { callErrorCodes, type ExtensionHub, newTaskId } from './extensionHub.ts';
import { RelayEvents } from './relayEvents.ts';
import type { AgentRecord, RelayStore } from './relayStore.ts';
import { SiteToolSchemas } from './siteToolSchemas.ts';

export interface SiteToolCallsOptions {
  readonly store: RelayStore;
  readonly hub: ExtensionHub;
  readonly rules: RuleSet;
  readonly callDeadlineMs: number;
  /** Where every call is recorded (the same audit log as tabward's other front ends by default). */
  readonly audit: AuditSink;
  /** Where the relay says what the agent cannot hear (late outcomes); stderr by default. */
  readonly log?: (line: string) => void;
}

/** Where one call's time went (ms): each figure measured on one clock, so they subtract cleanly. */
export interface CallTimes {
  locateMs: number;
  locateWorkerMs: number;
  callMs: number;
  workerMs: number;
  tabMs: number;
  bridgeMs: number;
  pageMs: number;
}

export interface CallReport {
  readonly taskId: string;
  /** The page's result (JSON text), within the size cap. */
  readonly result: string;
  /** Set when this is the earlier outcome of a call with the same idempotency key: nothing ran now. */
  readonly replayed?: boolean;
  readonly times?: CallTimes;
}

/** A call's options beyond its tool and arguments. */
export interface CallOptions {
  /** Told what the call is doing (waiting for approval, running), e.g. to keep the client informed. */
  readonly onStatus?: (status: string) => void;
  /** Aborts when the agent cancels the request or goes away: a pending question is withdrawn. */
  readonly signal?: AbortSignal;
  readonly idempotencyKey?: string;
}

/** Everything one call's action and approver share. */
interface SiteCall {
  readonly agent: AgentRecord;
  readonly origin: string;
  readonly tool: SiteTool;
  readonly args: Record<string, unknown>;
  readonly taskId: string;
  readonly remaining: () => number;
  readonly note: (event: ActivityEntry['event'], detail: string) => void;
  readonly status: (text: string) => void;
  readonly signal: AbortSignal;
  /** The document the extension last said would run the call: what the human is asked about. */
  located?: CallTarget;
  /** What the outcome means for the call's idempotency key; unset: it never reached the page. */
  settlement?: ReturnType<typeof keySettlement> | undefined;
  /** May the first look reuse the document last located (read-only calls, until one finds it moved)? */
  reuseTarget: boolean;
  /** The document judged was a reused one, not located for this call. */
  reused: boolean;
  /** The reused document had moved or gone before anything ran: the call goes again, located afresh. */
  stale: boolean;
  readonly times: CallTimes;
}

const noSecrets = new Redactor([]);

export class SiteToolCalls {
  private readonly schemas = new SiteToolSchemas();
  /** One call path per relay process: every site call is judged, asked, re-checked and audited by it. */
  readonly path: CallPath;
  private stopping: string | undefined;

  constructor(private readonly options: SiteToolCallsOptions) {
    this.path = new CallPath({
      rules: options.rules,
      audit: options.audit,
      policy: 'default',
      // Site calls run in the user's own logged-in browser.
      mode: () => 'shared',
      redactor: () => noSecrets,
      passMaxMs: options.callDeadlineMs,
    });
    const events = new RelayEvents({
      store: options.store,
      path: this.path,
      // A line may quote what a site's tool answered (a late error): shown as marks, never run by the terminal.
      log: options.log ?? ((text: string) => process.stderr.write(`${visibleLines(text)}\n`)),
    });
    options.hub.onLateAnswer = (answer, from, waitedOn) => events.lateAnswer(answer, from, waitedOn);
    options.hub.onPairingEvent = (extension, what) => events.pairingEvent(extension, what);
  }

  list(agent: AgentRecord): { origin: string; tools: SiteTool[]; online: boolean }[] {
    return this.options.store.sites(agent.workspace).map(({ origin, tools }) => ({
      origin,
      tools,
      online: this.options.hub.serves(agent.workspace, origin),
    }));
  }

  describe(agent: AgentRecord, site: string, toolName: string): SiteTool {
    return this.findTool(agent, site, toolName).tool;
  }

  async call(
    agent: AgentRecord,
    site: string,
    toolName: string,
    args: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<CallReport> {
    const { origin, tool } = this.findTool(agent, site, toolName);
    this.schemas.validate(tool, args);
    if (this.stopping) throw new TabwardError('browser_unavailable', `${this.stopping}; nothing was run.`);
    const { store, hub } = this.options;
    const taskId = newTaskId();
    const key = options.idempotencyKey;
    const callHash = callHashOf(origin, tool.name, args);
    const earlier = key === undefined ? undefined : store.claimKey(agent.id, key, taskId, callHash);
    if (earlier && key !== undefined) return { ...answerForEarlier(earlier, key, callHash), replayed: true };
    const deadline = Date.now() + this.options.callDeadlineMs;
    store.startTask(taskId, agent.workspace, agent.name, origin, tool.name);
    const note = (event: ActivityEntry['event'], detail: string): void =>
      hub.record(agent.workspace, {
        at: new Date().toISOString(),
        agent: agent.name,
        taskId,
        site: origin,
        tool: tool.name,
        event,
        detail,
      });
    const signal = options.signal ?? new AbortController().signal;
    const call: SiteCall = {
      agent,
      origin,
      tool,
      args,
      taskId,
      remaining: () => Math.max(0, deadline - Date.now()),
      note,
      status: (text) => options.onStatus?.(`${taskId}: ${text}`),
      signal,
      times: { locateMs: 0, locateWorkerMs: 0, callMs: 0, workerMs: 0, tabMs: 0, bridgeMs: 0, pageMs: 0 },
      reuseTarget: trustedReadOnly(tool),
      reused: false,
      stale: false,
    };
    call.status('finding the tab that would run it');
    try {
      const { value } = await this.runOnce(call).catch((error: unknown) => {
        if (!call.stale) throw error;
        // The reused document was gone or had moved, and nothing ran: judge and run on a fresh one.
        call.stale = false;
        call.settlement = undefined;
        return this.runOnce(call);
      });
      store.endTask(taskId, 'done');
      if (key !== undefined) store.settleKey(taskId, 'done', JSON.stringify({ ok: true, result: value }));
      note('done', `${Buffer.byteLength(value)} bytes`);
      return { taskId, result: value, times: call.times };
    } catch (error) {
      const failure = asTabwardError(error);
      store.endTask(taskId, call.settlement?.state === 'unknown' ? 'unknown' : failure.code);
      const settlement = call.settlement ?? { state: 'free', detail: '' };
      if (key !== undefined) store.settleKey(taskId, settlement.state, settlement.detail);
      note('failed', failure.message);
      throw new TabwardError(failure.code, `${taskId}: ${failure.message}`, failure.hint);
    } finally {
      hub.finish(taskId);
    }
  }

  private runOnce(call: SiteCall): Promise<PathOutcome<string>> {
    return this.path.run(this.actionFor(call), {
      frontEnd: 'relay',
      approver: this.approverFor(call),
      signal: call.signal,
    });
  }

  /** The relay is going down: calls in flight are answered at once, new ones refused. */
  stop(reason: string): void {
    this.stopping = reason;
    this.options.hub.stop(reason);
  }

  /** A site call as the call path sees it: looking at it asks the extension which document would run it. */
  private actionFor(call: SiteCall): GuardedAction<string> {
    const { agent, origin, tool, args, taskId } = call;
    const { hub, store } = this.options;
    return {
      name: tool.name,
      auditKind: 'site',
      args,
      subject: {
        agent: agent.name,
        workspace: agent.workspace,
        site: origin,
        siteTool: tool.name,
        task: taskId,
      },
      look: async () => {
        // Only a call's first look may reuse a document: after a question, the browser must say again.
        const recent = call.reuseTarget
          ? hub.recentTarget(taskId, agent.workspace, origin, tool.name)
          : undefined;
        call.reuseTarget = false;
        call.reused = recent !== undefined;
        const located = recent
          ? { target: recent, roundTripMs: 0, workerMs: 0 }
          : await hub.locate(taskId, {
              workspace: agent.workspace,
              site: origin,
              tool: tool.name,
              deadlineMs: call.remaining(),
            });
        const target = located.target;
        call.located = target;
        call.times.locateMs += located.roundTripMs;
        call.times.locateWorkerMs += located.workerMs;
        const standingAllow = store.isAllowed(agent.workspace, origin, tool.name);
        return {
          facts: siteCallFacts({ tool, documentUrl: target.url, standingAllow }),
          // An approval covers this document at this URL: another tab, a navigation or pushState asks again.
          binding: JSON.stringify(target),
          url: target.url,
        };
      },
      act: async (look) => {
        const target = JSON.parse(look.binding) as CallTarget;
        call.status('running in the tab');
        call.note('called', `runs in ${target.url}`);
        const answer = await hub.call(
          taskId,
          { agent: agent.name, site: origin, tool: tool.name, args, target, deadlineMs: call.remaining() },
          call.signal,
        );
        Object.assign(call.times, { callMs: answer.roundTripMs, ...answer.timing });
        const outcome = withinResultCap(answer.outcome);
        if (call.reused && !outcome.ok && stale(outcome.error)) {
          hub.forgetTarget(taskId, origin, tool.name);
          call.stale = true;
          throw new TabwardError(
            'rejected',
            `${outcome.error.message} (a document reused from an earlier call; located afresh and run there)`,
          );
        }
        call.settlement = keySettlement(outcome);
        // What a failing tool said is the page's text: quoted as page text, as its results are (an attack review:
        // an error with a closing marker and a "SYSTEM NOTICE" reached the agent on lines of its own).
        if (!outcome.ok && outcome.error.code === 'tool_failed')
          throw new TabwardError(
            callErrorCodes.tool_failed,
            `The page's tool ${quotedForDisplay(tool.name, 80)} failed:\n${untrusted(origin, outcome.error.message)}`,
          );
        if (!outcome.ok) throw new TabwardError(callErrorCodes[outcome.error.code], outcome.error.message);
        return outcome.result;
      },
      skipped: () => '',
    };
  }

  /** The human in the extension popup of the browser the call was routed to, as the call path's approver. */
  private approverFor(call: SiteCall): Approver {
    const { agent, origin, tool, args, taskId } = call;
    const { hub, store } = this.options;
    return {
      name: 'extension popup',
      ask: async (request, signal) => {
        call.status('waiting for approval in the tabward popup');
        call.note('waiting', `waits for approval: ${request.reason}`);
        // The question names the document just judged; the call path locates it again after the answer.
        const target = call.located;
        if (!target || target.url !== request.url)
          throw new TabwardError('internal', 'The call was asked about before its document was located.');
        const decision = await hub.ask(
          taskId,
          {
            agent: agent.name,
            site: origin,
            tool: tool.name,
            args,
            target,
            reason: request.reason,
            sensitive: request.sensitive,
            approveAllAllowed: request.approveAllAllowed,
            deadlineMs: call.remaining(),
          },
          signal,
        );
        const always = decision === 'always' && request.approveAllAllowed;
        if (always) store.allow(agent.workspace, origin, tool.name);
        call.note(
          always ? 'always' : decision === 'always' ? 'approved' : decision,
          always ? `always allowed ${tool.name} on ${origin}` : '',
        );
        if (decision === 'denied')
          return {
            choice: 'reject',
            reason: 'the human denied it in the tabward popup (or did not answer in time)',
          };
        return { choice: 'approve' };
      },
    };
  }

  private findTool(agent: AgentRecord, site: string, toolName: string): { origin: string; tool: SiteTool } {
    const origin = originOf(site);
    const sites = this.options.store.sites(agent.workspace);
    const shared = sites.find((s) => s.origin === origin);
    if (!shared)
      throw new TabwardError(
        'not_found',
        `${origin} is not shared with workspace "${agent.workspace}".`,
        sites.length
          ? `Shared sites: ${sites.map((s) => s.origin).join(', ')}.`
          : 'No site is shared yet: the human shares one from the extension popup.',
      );
    const tool = shared.tools.find((t) => t.name === toolName);
    if (!tool)
      throw new TabwardError(
        'not_found',
        `${origin} has no tool named "${toolName}".`,
        shared.tools.length
          ? `Its tools: ${shared.tools.map((t) => t.name).join(', ')}.`
          : 'The site registers no tools right now.',
      );
    return { origin, tool };
  }
}

/** The browser refused a reused document (moved or gone) before anything ran. */
function stale(error: { code: string; unknownOutcome?: boolean }): boolean {
  return (error.code === 'moved' || error.code === 'no_tab') && !error.unknownOutcome;
}

export function originOf(site: string): string {
  try {
    return new URL(site.includes('://') ? site : `https://${site}`).origin;
  } catch {
    throw new TabwardError(
      'bad_input',
      `"${site}" is not a site: give its origin, like https://example.com.`,
    );
  }
}
