// The ToolRunner: browser tools on the one call path (core/callPath.ts). A tool call becomes a GuardedAction
// (tools/toolAction.ts) that runs once on the path, its `snapshot` option's read inside the same call, and writes
// into one response (tools/callResponse.ts) serialised and redacted once. What only browser tools have is added by
// what tools declare (core/kinds.ts ToolEffects), never by their names: the guard's state for the tool that
// reports it, the auto-mode switch to the user's Chrome on a login wall (reopened with the tool that opens tabs).

import type { NetworkGuard } from '../browser/networkGuard.ts';
import type { TrackedPage } from '../browser/pages.ts';
import type { Approver } from '../core/approvals.ts';
import type { AuditSink } from '../core/audit.ts';
import { CallPath, type FollowUp, type GuardedAction, stoppedSummary, stopsCount } from '../core/callPath.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import type { GuardState } from '../core/guardState.ts';
import type { WritePolicy } from '../core/kinds.ts';
import { type RuleSet, ruleSources } from '../core/sensitiveRules.ts';
import { CallResponse } from './callResponse.ts';
import { maybeSwitchOnLoginWall } from './loginSwitch.ts';
import type { Tool, ToolContext, ToolResult } from './tool.ts';
import { type Args, parseArgs, toolAction, unknownTool } from './toolAction.ts';

export interface RunnerOptions {
  readonly tools: readonly Tool[];
  readonly context: ToolContext;
  readonly rules: RuleSet;
  readonly approver: Approver;
  readonly audit: AuditSink;
  readonly policy: WritePolicy;
  /** auto mode: on a login wall, offer to switch to the user's Chrome. */
  readonly autoSwitch: boolean;
  readonly approveAllTtlMs?: number;
  /** The clock site grants expire by (tests move it forward). */
  readonly clock?: () => number;
  /** The network backstop: approvals open passes in it, and what it stopped is reported with the result. */
  readonly network?: NetworkGuard;
  /** The call path to share with other front ends of this process (the agent's external tools); made if absent. */
  readonly callPath?: CallPath;
}

/** Who is calling: the front end's name for the audit log, and the human to ask (default: the runner's). */
export interface Caller {
  readonly frontEnd: string;
  /** Which agent calls, when several share one tabward: named in its questions. */
  readonly client?: string;
  readonly approver?: Approver;
  /** Aborts when the request is cancelled or its client is gone: pending questions are withdrawn. */
  readonly signal?: AbortSignal;
}

/** A caller with the runner's defaults filled in. */
type ResolvedCaller = Required<Omit<Caller, 'client'>> & Pick<Caller, 'client'>;

export class ToolRunner {
  readonly path: CallPath;
  private readonly byName: Map<string, Tool>;

  constructor(readonly options: RunnerOptions) {
    this.byName = new Map(options.tools.map((tool) => [tool.name, tool]));
    const { session, secrets, timeoutMs } = options.context;
    this.path =
      options.callPath ??
      new CallPath({
        rules: options.rules,
        audit: options.audit,
        policy: options.policy,
        mode: () => session.mode,
        redactor: () => secrets.redactor,
        ...(options.network ? { backstop: options.network } : {}),
        ...(options.approveAllTtlMs ? { approveAllTtlMs: options.approveAllTtlMs } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
        passMaxMs: timeoutMs * 4,
      });
    // Any switch (connect, disconnect, the login-wall switch, a new browser): the pages a grant was given for are
    // another browser's now.
    session.onModeChange((mode) => this.path.state.browserChanged(mode));
  }

  get tools(): readonly Tool[] {
    return this.options.tools;
  }

  /** What the guard remembers (taint, grants, site grants, hosts allowed); changed only through its methods. */
  get state(): GuardState {
    return this.path.state;
  }

  /**
   * One tool call, one trip: the call path runs it once (its follow-up read, the `snapshot` option, inside the same
   * audited call), and its response is serialised and redacted once (tools/callResponse.ts). Only a login wall
   * adds a call: the reopened page is another navigation, in another browser, judged and audited as one.
   */
  async call(name: string, rawArgs: unknown, caller: Caller): Promise<ToolResult> {
    const resolved = {
      frontEnd: caller.frontEnd,
      ...(caller.client ? { client: caller.client } : {}),
      approver: caller.approver ?? this.options.approver,
      signal: caller.signal ?? new AbortController().signal,
    };
    try {
      const tool = this.byName.get(name);
      const response = new CallResponse();
      const action = tool
        ? this.actionFor(tool, () => parseArgs(tool, rawArgs), response, resolved)
        : unknownTool(name, rawArgs);
      const { value, stopped } = await this.path.run(action, resolved);
      response.setAnswer(value);
      if (stopsCount(stopped) > 0) response.setStopped(stoppedSummary(stopped));
      if (tool?.reportsGuardState) response.setGuardState(this.guardState(resolved));
      if (value.loginWall && this.options.autoSwitch)
        await this.switchOnLoginWall(value.loginWall, response, resolved);
      const { secrets, session } = this.options.context;
      // Told with the result the agent gets (a login-wall switch's is the reopened tab's), after the snapshot: a
      // page the snapshot shows was shown, and needs no note.
      return response.serialize(secrets.redactor, session.takeNotices(), this.backgroundReadsNote());
    } catch (error) {
      throw this.errorWithNotices(error);
    }
  }

  /**
   * A tool call on the call path, writing what it did into `response`. Its follow-up read (the `snapshot`
   * option): the tab the call worked in (the one it acted in, the one new_page opened; never whichever is selected
   * by then), read as take_snapshot reads it. A login wall the switch may answer defers it to the switch, which
   * reads the tab the work ends up in.
   */
  private actionFor(
    tool: Tool,
    parse: () => Args,
    response: CallResponse,
    caller: ResolvedCaller,
    snapshotAlways = false,
  ): GuardedAction<ToolResult> {
    return toolAction(tool, parse, {
      context: this.options.context,
      worked: response.worked,
      followUp: (result, worked) => {
        if (!worked.tab || !(snapshotAlways || wantsSnapshot(tool, worked.args))) return undefined;
        if (result.loginWall && this.switchMayAnswer()) {
          worked.snapshotDeferred = true;
          return undefined;
        }
        return this.snapshotOf(worked.tab, response, caller);
      },
    });
  }

  /**
   * The follow-up read of a tab, as take_snapshot reads it (the tool that declares `snapshotsTab`). It joins the
   * response after the result; one that fails (the tab closed, an open dialog) says why after it, never as the
   * call's error, so that the agent does not repeat what was done.
   */
  private snapshotOf(tab: TrackedPage, response: CallResponse, caller: ResolvedCaller): FollowUp | undefined {
    const reader = this.options.tools.find((tool) => tool.snapshotsTab);
    if (!reader) return undefined;
    return {
      action: this.actionFor(reader, () => parseArgs(reader, { pageId: tab.id }), new CallResponse(), caller),
      done: (outcome) => {
        if ('failure' in outcome) {
          response.appendNote(`No snapshot: ${outcome.failure.describe()}`);
          return;
        }
        response.append(...(outcome.value as ToolResult).content);
        if (stopsCount(outcome.stopped) > 0) response.appendNote(stoppedSummary(outcome.stopped));
      },
    };
  }

  /** Whether a login wall would be put to the human (auto mode, still in the isolated browser). */
  private switchMayAnswer(): boolean {
    return this.options.autoSwitch && this.options.context.session.mode === 'isolated';
  }

  /**
   * What changed under the agent since its last call (the user's Chrome gone, a fallback to an isolated browser,
   * a browser restart) comes first in the result (tools/callResponse.ts), or the error: the agent must not go on
   * believing it is logged in.
   */
  private errorWithNotices(error: unknown): unknown {
    const notices = this.options.context.session.takeNotices();
    if (notices.length === 0 || !(error instanceof TabwardError)) return error;
    return new TabwardError(error.code, `${notices.join('\n')}\n${error.message}`, error.hint);
  }

  /**
   * The auto-mode switch on a login wall (tools/loginSwitch.ts). The reopened page goes through the guard like any
   * other navigation, as a call of its own on the path (another browser, another page); with the `snapshot` option
   * it reads the reopened tab. With no switch, the deferred read is of the tab the call named, as a guarded read
   * on the path (the call it follows has ended).
   */
  private async switchOnLoginWall(
    wall: NonNullable<ToolResult['loginWall']>,
    response: CallResponse,
    caller: ResolvedCaller,
  ): Promise<void> {
    // Only a read the call left to the switch: one made inside the call is not made twice.
    const snapshot = response.worked.snapshotDeferred === true;
    const outcome = await maybeSwitchOnLoginWall(wall, {
      session: this.options.context.session,
      approver: caller.approver,
      nextId: () => this.path.nextApprovalId(),
      reopen: (url) => this.reopen(url, caller, snapshot),
      audit: (url, choice, outcome, error) =>
        this.path.recordEvent({
          tool: 'browser_connect',
          kind: 'mode',
          frontEnd: caller.frontEnd,
          args: {},
          mode: this.options.context.session.mode,
          decision: 'ask',
          rule: 'login-wall',
          url,
          approver: caller.approver.name,
          choice,
          outcome,
          durationMs: 0,
          ...(error ? { error } : {}),
        }),
    });
    if (outcome?.reopened) {
      response.switchTo(outcome.note, outcome.reopened);
      return;
    }
    if (outcome) response.appendNote(outcome.note);
    const { tab } = response.worked;
    const read =
      snapshot && tab && !caller.signal.aborted ? this.snapshotOf(tab, response, caller) : undefined;
    if (!read) return;
    await this.path.run(read.action, caller).then(
      (done) => read.done(done),
      (error: unknown) => read.done({ failure: asTabwardError(error) }),
    );
  }

  /** Opens the login wall's URL in the user's Chrome with the tool that declares `opensTab`. */
  private async reopen(url: string, caller: ResolvedCaller, snapshot: boolean): Promise<CallResponse> {
    const opener = this.options.tools.find((tool) => tool.opensTab);
    if (!opener) throw new TabwardError('internal', 'No tool opens a tab to reopen the login wall in.');
    const reopened = new CallResponse();
    const action = this.actionFor(opener, () => parseArgs(opener, { url }), reopened, caller, snapshot);
    const { value, stopped } = await this.path.run(action, caller);
    reopened.setAnswer(value);
    if (stopsCount(stopped) > 0) reopened.setStopped(stoppedSummary(stopped));
    return reopened;
  }

  /**
   * A sensitive page the browser read that no tool result showed as a page (a page's own fetch, the agent's script's,
   * a navigation an action caused) taints the session all the same: the agent is told once, with the next result,
   * why data-carrying actions toward other sites will now ask.
   */
  private backgroundReadsNote(): string | undefined {
    const untold = this.path.state.takeUntoldReads();
    if (untold.length === 0) return undefined;
    return `Note: the browser loaded or fetched the sensitive ${untold.join(', ')} (not a page a tool result showed); from now on actions that could carry data to another site ask the human first.`;
  }

  /** What the guard holds (grants, taint, policy, who approves), for the tool that reports it (browser_status). */
  private guardState(caller: ResolvedCaller): string[] {
    const { session } = this.options.context;
    return [
      `approve-all grants: ${this.state.approveAllGrants().join(', ') || 'none'}`,
      `site grants: ${this.state.siteGrantLines()?.join('; ') ?? 'none'}`,
      `tainted by reading: ${this.state.describeTaint().join(', ') || 'nothing sensitive'}`,
      `write policy: ${this.options.policy}${this.options.autoSwitch ? '; auto-switch to your Chrome on login walls' : ''}`,
      `approver: ${caller.approver.name}`,
      `sensitive-page rules in force: ${ruleSources(this.options.rules).join(', ')}`,
      ...(session.lastAttachError ? [`last attach error: ${session.lastAttachError}`] : []),
    ];
  }
}

/** The call, as it acted, asked for the tab's snapshot with its result (the `snapshot` option, tools/common.ts). */
function wantsSnapshot(tool: Tool, args: Args | undefined): boolean {
  return 'snapshot' in tool.schema.shape && args?.snapshot === true;
}
