// The ToolRunner: browser tools on the one call path (core/callPath.ts). It validates arguments, turns a tool call
// into a GuardedAction (live facts from the browser, the binding an approval is given for, the work), and adds
// what only browser tools have: redacted text results, taint from what a result shows, browser_status's view of
// the guard, and the auto-mode switch to the user's Chrome on a login wall.

import { loadedUrlOf } from '../browser/loadedUrls.ts';
import type { NetworkGuard } from '../browser/networkGuard.ts';
import type { TrackedPage } from '../browser/pages.ts';
import type { Approver } from '../core/approvals.ts';
import type { AuditSink } from '../core/audit.ts';
import { CallPath, type GuardedAction, stoppedSummary } from '../core/callPath.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import type { ApproveAllGrants } from '../core/grants.ts';
import { originOf } from '../core/guard.ts';
import type { WritePolicy } from '../core/kinds.ts';
import { type RuleSet, ruleSources } from '../core/sensitiveRules.ts';
import type { Taint } from '../core/taint.ts';
import { bindingOf, guardFacts, secretUses } from './callFacts.ts';
import { maybeSwitchOnLoginWall } from './loginSwitch.ts';
import type { Tool, ToolContext, ToolResult, ToolTarget } from './tool.ts';
import { text } from './tool.ts';

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

type Args = Record<string, unknown>;

/**
 * What a call did, for its `snapshot` option: the arguments it acted with (a human may have modified them) and the
 * tab it worked in. Unset when it did nothing (skipped by the human).
 */
interface Worked {
  args?: Args;
  tab?: TrackedPage | undefined;
}

/** Who is calling: the front end's name for the audit log, and the human to ask (default: the runner's). */
export interface Caller {
  readonly frontEnd: string;
  readonly approver?: Approver;
  /** Aborts when the request is cancelled or its client is gone: pending questions are withdrawn. */
  readonly signal?: AbortSignal;
}

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
    session.onModeChange((mode) => {
      if (mode === 'shared') this.path.grants.clear();
      // Any switch (connect, disconnect, the login-wall switch, a new browser): the pages a grant was given for
      // are another browser's now.
      this.path.siteGrants.clear();
    });
  }

  get tools(): readonly Tool[] {
    return this.options.tools;
  }

  get grants(): ApproveAllGrants {
    return this.path.grants;
  }

  get taint(): Taint {
    return this.path.taint;
  }

  async call(name: string, rawArgs: unknown, caller: Caller): Promise<ToolResult> {
    const resolved = {
      frontEnd: caller.frontEnd,
      approver: caller.approver ?? this.options.approver,
      signal: caller.signal ?? new AbortController().signal,
    };
    const tool = this.byName.get(name);
    const worked: Worked = {};
    const action = tool
      ? this.actionFor(tool, () => parseArgs(tool, rawArgs), worked)
      : unknownTool(name, rawArgs);
    const { value: done, stopped } = await this.path.run(action, resolved).catch((error: unknown) => {
      throw this.errorWithNotices(error);
    });
    const value = this.withNotices(done);
    const withStopped =
      stopped.length > 0 ? { ...value, content: [...value.content, text(stoppedSummary(stopped))] } : value;
    const result = this.redactResult(
      tool?.name === 'browser_status' ? this.withGuardStatus(withStopped, resolved) : withStopped,
    );
    this.recordReads(result);
    const final =
      result.loginWall && this.options.autoSwitch
        ? await this.switchOnLoginWall(result, resolved, worked)
        : result;
    // A cancelled call starts no read of its own: nobody is there to be shown it.
    const shown =
      tool && wantsSnapshot(tool, worked) && worked.tab && !resolved.signal.aborted
        ? await this.snapshotAfter(final, worked.tab, caller)
        : final;
    // Told with the result the agent gets (a login-wall switch replaces this one with the reopened tab's), after
    // the snapshot: a page the snapshot shows was shown, and needs no note.
    return this.withBackgroundReads(shown);
  }

  /**
   * The `snapshot` option (tools/common.ts): the tab the call worked in (the one it acted in, the one new_page
   * opened, the one a login-wall switch reopened; never whichever is selected by then) is read as take_snapshot
   * reads it, in a call of its own on the call path (judged, audited, tainting like any read), and that result
   * joins this one. The action went through whatever the read gives: a snapshot that fails (the tab closed, an
   * open dialog) says why after it, never as this call's error, so that the agent does not repeat what was done.
   */
  private async snapshotAfter(result: ToolResult, tab: TrackedPage, caller: Caller): Promise<ToolResult> {
    const read = await this.call('take_snapshot', { pageId: tab.id }, caller).then(
      (snapshot) => snapshot.content,
      (error: unknown) => [
        text(this.options.context.secrets.redactor.text(`No snapshot: ${asTabwardError(error).describe()}`)),
      ],
    );
    return { ...result, content: [...result.content, ...read] };
  }

  /**
   * What changed under the agent since its last call (the user's Chrome gone, a fallback to an isolated browser,
   * a browser restart) comes first in the result, or the error: the agent must not go on believing it is logged in.
   */
  private withNotices(result: ToolResult): ToolResult {
    const notices = this.options.context.session.takeNotices();
    return notices.length === 0
      ? result
      : { ...result, content: [text(notices.join('\n')), ...result.content] };
  }

  private errorWithNotices(error: unknown): unknown {
    const notices = this.options.context.session.takeNotices();
    if (notices.length === 0 || !(error instanceof TabwardError)) return error;
    return new TabwardError(error.code, `${notices.join('\n')}\n${error.message}`, error.hint);
  }

  /** A tool call as the call path sees it. Arguments are parsed when first looked at, inside the audited path. */
  private actionFor(tool: Tool, parse: () => Args, worked: Worked): GuardedAction<ToolResult> {
    const { context } = this.options;
    let args: Args | undefined;
    let target: ToolTarget | undefined;
    const current = () => {
      args ??= parse();
      return args;
    };
    return {
      name: tool.name,
      get args() {
        return args ?? {};
      },
      look: async () => {
        target = await tool.target(current(), context);
        const facts = guardFacts(tool, current(), target, context.secrets);
        const url = target.destination ?? target.frames[0]?.url;
        return {
          facts,
          binding: bindingOf(tool, current(), target),
          ...(url ? { url } : {}),
          ...(target.element ? { element: target.element } : {}),
          ...(target.fields ? { fields: target.fields } : {}),
          ...(target.tab?.holdsTypedSecret ? { holdsTypedSecret: true } : {}),
        };
      },
      act: async () => {
        const acted = requireTarget(target);
        const result = await tool.handle(current(), context, acted);
        worked.args = current();
        // new_page has no tab until it acts: its result reads from the tab it opened.
        worked.tab = acted.tab ?? result.readFrom?.[0];
        return result;
      },
      auditTargets: (result) => result.targets,
      skipped: () => ({
        content: [text(`The user skipped ${tool.name}; nothing was done. Carry on without it.`)],
      }),
      withArgs: (modified) => this.actionFor(tool, () => parseArgs(tool, modified), worked),
      onApproved: () => {
        const { secrets } = context;
        for (const use of secretUses(tool, current(), requireTarget(target), secrets))
          if (use.placement === 'new-origin') secrets.approveOrigin(use.name, use.origin);
      },
    };
  }

  private switchOnLoginWall(
    result: ToolResult,
    caller: Required<Caller>,
    worked: Worked,
  ): Promise<ToolResult> {
    return maybeSwitchOnLoginWall(result, {
      session: this.options.context.session,
      approver: caller.approver,
      nextId: () => this.path.nextApprovalId(),
      // The reopened page goes through the guard like any other navigation.
      reopen: async (url) => {
        const reopened = await this.call('new_page', { url }, caller);
        // The call now works in the reopened tab; the one it named belongs to the browser left behind.
        worked.tab = reopened.readFrom?.[0];
        return reopened;
      },
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
  }

  /** Every sensitive frame of every tab (and page) the result shows taints the session by that frame's origin. */
  private recordReads(result: ToolResult): void {
    for (const tab of result.readFrom ?? []) {
      for (const frame of tab.page.frames()) {
        // The URL it shows and the one it was loaded from: a page cannot launder a read by renaming itself.
        for (const url of [frame.url(), loadedUrlOf(frame)])
          if (url && this.options.rules.match(url)) this.path.taint.recordRead(originOf(url), true);
      }
    }
    for (const url of result.readUrls ?? [])
      if (this.options.rules.match(url)) this.path.taint.recordRead(originOf(url), true);
  }

  /**
   * A sensitive page the browser read that no tool result showed as a page (a page's own fetch, the agent's script's,
   * a navigation an action caused) taints the session all the same: the agent is told once, with the next result,
   * why data-carrying actions toward other sites will now ask.
   */
  private withBackgroundReads(result: ToolResult): ToolResult {
    const untold = this.path.taint.takeUntold();
    if (untold.length === 0) return result;
    const note = `Note: the browser loaded or fetched the sensitive ${untold.join(', ')} (not a page a tool result showed); from now on actions that could carry data to another site ask the human first.`;
    return {
      ...result,
      content: [...result.content, text(this.options.context.secrets.redactor.text(note))],
    };
  }

  /** browser_status also shows what the guard holds: grants, taint, policy and who approves. */
  private withGuardStatus(result: ToolResult, caller: Required<Caller>): ToolResult {
    const { session } = this.options.context;
    const lines = [
      `approve-all grants: ${this.path.grants.list().join(', ') || 'none'}`,
      `site grants: ${this.path.siteGrants.lines()?.join('; ') ?? 'none'}`,
      `tainted by reading: ${this.path.taint.describe().join(', ') || 'nothing sensitive'}`,
      `write policy: ${this.options.policy}${this.options.autoSwitch ? '; auto-switch to your Chrome on login walls' : ''}`,
      `approver: ${caller.approver.name}`,
      `sensitive-page rules in force: ${ruleSources(this.options.rules).join(', ')}`,
      ...(session.lastAttachError ? [`last attach error: ${session.lastAttachError}`] : []),
    ];
    return { ...result, content: [...result.content, text(lines.join('\n'))] };
  }

  private redactResult(result: ToolResult): ToolResult {
    const { redactor } = this.options.context.secrets;
    if (!redactor.active) return result;
    return {
      ...result,
      content: result.content.map((part) =>
        part.type === 'text' ? { ...part, text: redactor.text(part.text) } : part,
      ),
    };
  }
}

function requireTarget(target: ToolTarget | undefined): ToolTarget {
  if (!target) throw new TabwardError('internal', 'The call acted before its target was read.');
  return target;
}

/** An unknown tool still goes through the call path, so the attempt is audited like any other. */
function unknownTool(name: string, args: unknown): GuardedAction<ToolResult> {
  return {
    name,
    args: typeof args === 'object' && args !== null ? (args as Args) : {},
    look: async () => {
      throw new TabwardError('not_found', `Unknown tool ${name}.`);
    },
    act: async () => {
      throw new TabwardError('not_found', `Unknown tool ${name}.`);
    },
    skipped: () => ({ content: [] }),
  };
}

/** The call, as it acted, asked for the tab's snapshot with its result, and its tool offers that (snapshotOption). */
function wantsSnapshot(tool: Tool, worked: Worked): boolean {
  return 'snapshot' in tool.schema.shape && worked.args?.snapshot === true;
}

function parseArgs(tool: Tool, raw: unknown): Args {
  const parsed = tool.schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data as Args;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`,
  );
  throw new TabwardError('bad_input', `Bad arguments for ${tool.name}: ${problems.join('; ')}.`);
}
