// The ToolRunner: the one path from a front end's tool call to the browser. It validates arguments, asks the
// guard with live facts, asks a human where the guard says so, re-checks the facts at action time, runs the
// tool under its deadline, redacts and audits. DESIGN.md section 2 ("Data flow of one tool call").

import type { BlockedRequest, NetworkGuard } from '../browser/networkGuard.ts';
import type { PassSpec } from '../core/actionPasses.ts';
import type { ApprovalChoice, Approver } from '../core/approvals.ts';
import type { AuditEntry, AuditSink } from '../core/audit.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import { ApproveAllGrants } from '../core/grants.ts';
import { type Decision, decide, originOf } from '../core/guard.ts';
import type { WritePolicy } from '../core/kinds.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import { Taint } from '../core/taint.ts';
import { bindingOf, guardFacts, passFor, secretUses } from './callFacts.ts';
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
  /** The network backstop: approvals open passes in it, and what it stopped is reported with the result. */
  readonly network?: NetworkGuard;
}

type Args = Record<string, unknown>;

/** Who is calling: the front end's name for the audit log, and the human to ask (default: the runner's). */
export interface Caller {
  readonly frontEnd: string;
  readonly approver?: Approver;
  /** Aborts when the request is cancelled or its client is gone: pending questions are withdrawn. */
  readonly signal?: AbortSignal;
}
/** The audit record being assembled while a call runs. */
type Trail = { -readonly [K in keyof AuditEntry]?: AuditEntry[K] };

export class ToolRunner {
  readonly grants: ApproveAllGrants;
  readonly taint = new Taint();
  private readonly byName: Map<string, Tool>;
  private approvalSeq = 0;

  constructor(readonly options: RunnerOptions) {
    this.byName = new Map(options.tools.map((tool) => [tool.name, tool]));
    this.grants = new ApproveAllGrants(options.approveAllTtlMs ?? 30 * 60_000);
    options.context.session.onModeChange((mode) => {
      if (mode === 'shared') this.grants.clear();
    });
  }

  get tools(): readonly Tool[] {
    return this.options.tools;
  }

  async call(name: string, rawArgs: unknown, caller: Caller): Promise<ToolResult> {
    const { frontEnd } = caller;
    const approver = caller.approver ?? this.options.approver;
    const started = Date.now();
    const tool = this.byName.get(name);
    const trail: Trail = { tool: name, frontEnd };
    try {
      if (!tool) throw new TabwardError('not_found', `Unknown tool ${name}.`);
      trail.kind = tool.kind;
      const signal = caller.signal ?? new AbortController().signal;
      const result = await this.run(tool, parseArgs(tool, rawArgs), { frontEnd, approver, signal }, trail);
      const redacted = this.redactResult(result);
      this.record(trail, { outcome: trail.outcome ?? 'ok', durationMs: Date.now() - started });
      return redacted;
    } catch (error) {
      const failure = asTabwardError(error);
      const message = this.options.context.secrets.redactor.text(failure.describe());
      const outcome =
        failure.code === 'blocked' ? 'blocked' : failure.code === 'rejected' ? 'rejected' : 'error';
      this.record(trail, { outcome, error: message, durationMs: Date.now() - started });
      throw new TabwardError(
        failure.code,
        this.options.context.secrets.redactor.text(failure.message),
        failure.hint === undefined ? undefined : this.options.context.secrets.redactor.text(failure.hint),
      );
    }
  }

  private async run(
    tool: Tool,
    initialArgs: Args,
    caller: Required<Caller>,
    trail: Trail,
  ): Promise<ToolResult> {
    let args = initialArgs;
    let approvedAction: string | undefined;
    for (let round = 0; round < 3; round++) {
      const target = await tool.target(args, this.options.context);
      const decision = this.decide(tool, args, target);
      this.noteDecision(trail, args, target, decision);
      const action = bindingOf(tool, args, target);
      if (decision.verdict === 'block')
        throw new TabwardError('blocked', decision.reason, 'No approval can override this.');
      if (decision.verdict === 'allow') return this.execute(tool, args, target, caller, trail);
      if (approvedAction === action) {
        this.rememberApproval(tool, args, target);
        return this.execute(tool, args, target, caller, trail, passFor(target, decision));
      }
      const choice = await this.ask(tool, args, target, decision, caller);
      // A late answer to a withdrawn question (cancelled request, client gone) must never act.
      if (caller.signal.aborted)
        throw new TabwardError(
          'rejected',
          'The call was cancelled while waiting for approval; nothing was done.',
        );
      trail.approver = caller.approver.name;
      trail.choice = choice.choice;
      if (choice.choice === 'reject') {
        throw new TabwardError(
          'rejected',
          `The user rejected ${tool.name}${choice.reason ? `: ${choice.reason}` : '.'}`,
          `The human was asked through ${caller.approver.name}, because ${decision.reason}.`,
        );
      }
      if (choice.choice === 'skip') {
        trail.outcome = 'skipped';
        return { content: [text(`The user skipped ${tool.name}; nothing was done. Carry on without it.`)] };
      }
      if (choice.choice === 'modify') args = parseArgs(tool, choice.args);
      if (choice.choice === 'approve-all' && decision.approveAllAllowed) {
        this.grants.grant(choice.scope === 'server' ? { kind: 'server' } : { kind: 'tool', tool: tool.name });
      }
      // The approval covers this exact action in this document; the next round re-reads the page and
      // runs only if nothing moved while the human was deciding.
      approvedAction =
        choice.choice === 'modify'
          ? bindingOf(tool, args, await tool.target(args, this.options.context))
          : action;
    }
    throw new TabwardError(
      'rejected',
      `The page kept changing while ${tool.name} waited for approval; not done.`,
      'Try again.',
    );
  }

  private decide(tool: Tool, args: Args, target: ToolTarget): Decision {
    const { session, secrets } = this.options.context;
    const state = {
      mode: session.mode,
      policy: this.options.policy,
      taintedOrigins: this.taint.list(),
      approveAll: this.grants.covers(tool.name),
      secrets,
    };
    return decide(guardFacts(tool, args, target, state), this.options.rules);
  }

  /** An approved secret on a new origin: later uses there in this session do not ask again. */
  private rememberApproval(tool: Tool, args: Args, target: ToolTarget): void {
    const { secrets } = this.options.context;
    for (const use of secretUses(tool, args, target, secrets))
      if (use.placement === 'new-origin') secrets.approveOrigin(use.name, use.origin);
  }

  private async ask(
    tool: Tool,
    args: Args,
    target: ToolTarget,
    decision: Decision & { verdict: 'ask' },
    caller: Required<Caller>,
  ): Promise<ApprovalChoice> {
    const url = target.destination ?? target.frames[0]?.url ?? '';
    return caller.approver.ask(
      {
        id: `a${++this.approvalSeq}`,
        tool: tool.name,
        kind: tool.kind,
        reason: decision.reason,
        rule: decision.rule,
        sensitive: decision.sensitive,
        approveAllAllowed: decision.approveAllAllowed,
        url,
        origin: url ? originOf(url) : '',
        ...(target.element ? { element: target.element } : {}),
        args: this.options.context.secrets.redactor.value(args),
        frontEnd: caller.frontEnd,
      },
      caller.signal,
    );
  }

  private async execute(
    tool: Tool,
    args: Args,
    target: ToolTarget,
    caller: Required<Caller>,
    trail: Trail,
    pass?: PassSpec,
  ): Promise<ToolResult> {
    trail.outcome = 'ok';
    const { context, network } = this.options;
    const mark = network?.mark() ?? 0;
    const opened = pass && network ? network.passes.open(pass, context.timeoutMs * 4) : undefined;
    let handled: ToolResult;
    try {
      handled = await tool.handle(args, context, target);
    } catch (error) {
      // A navigation the backstop stopped fails in the browser: say what was stopped and why.
      const stopped = this.reportStopped(network?.since(mark) ?? [], trail);
      if (stopped) throw new TabwardError('blocked', stopped, 'A human approval is needed for that page.');
      throw error;
    } finally {
      // A redirect or a late submit right after the action is still its doing; later requests are not.
      opened?.end(2_000);
    }
    const stopped = this.reportStopped(network?.since(mark) ?? [], trail);
    const withStatus = tool.name === 'browser_status' ? this.withGuardStatus(handled, caller) : handled;
    const result = stopped ? { ...withStatus, content: [...withStatus.content, text(stopped)] } : withStatus;
    this.recordReads(result);
    if (!result.loginWall || !this.options.autoSwitch) return result;
    return maybeSwitchOnLoginWall(result, {
      session: context.session,
      approver: caller.approver,
      nextId: () => `a${++this.approvalSeq}`,
      // The reopened page goes through the guard like any other navigation.
      reopen: (url) => this.call('new_page', { url }, caller),
      audit: (url, choice, outcome, error) =>
        this.record(
          {
            tool: 'browser_connect',
            kind: 'mode',
            frontEnd: caller.frontEnd,
            decision: 'ask',
            rule: 'login-wall',
            url,
            approver: caller.approver.name,
            choice,
          },
          { outcome, durationMs: 0, ...(error ? { error } : {}) },
        ),
    });
  }

  /** Every sensitive frame of every tab the result shows taints the session by that frame's origin. */
  private recordReads(result: ToolResult): void {
    for (const tab of result.readFrom ?? []) {
      for (const frame of tab.page.frames()) {
        const url = frame.url();
        if (this.options.rules.match(url)) this.taint.recordRead(originOf(url), true);
      }
    }
  }

  /** What the network backstop stopped while the action ran, for the agent and the audit log. */
  private reportStopped(blocked: readonly BlockedRequest[], trail: Trail): string | undefined {
    if (blocked.length === 0) return undefined;
    const lines = blocked.slice(0, 5).map((entry) => `${entry.method} ${entry.url}: ${entry.reason}`);
    const more = blocked.length > 5 ? ` (and ${blocked.length - 5} more)` : '';
    const summary = `tabward stopped ${blocked.length} request(s) this action caused${more}:\n${lines.join('\n')}`;
    trail.blocked = lines;
    return this.options.context.secrets.redactor.text(summary);
  }

  /** browser_status also shows what the guard holds: grants, taint, policy and who approves. */
  private withGuardStatus(result: ToolResult, caller: Required<Caller>): ToolResult {
    const { session } = this.options.context;
    const lines = [
      `approve-all grants: ${this.grants.list().join(', ') || 'none'}`,
      `tainted by reading: ${this.taint.list().join(', ') || 'nothing sensitive'}`,
      `write policy: ${this.options.policy}${this.options.autoSwitch ? '; auto-switch to your Chrome on login walls' : ''}`,
      `approver: ${caller.approver.name}`,
      ...(session.lastAttachError ? [`last attach error: ${session.lastAttachError}`] : []),
    ];
    return { ...result, content: [...result.content, text(lines.join('\n'))] };
  }

  private noteDecision(trail: Trail, args: Args, target: ToolTarget, decision: Decision): void {
    const { session, secrets } = this.options.context;
    trail.args = secrets.redactor.value(args);
    trail.mode = session.mode;
    trail.decision = decision.verdict;
    trail.reason = decision.reason;
    if (decision.verdict !== 'allow') trail.rule = decision.rule;
    if (target.tab) {
      trail.tab = target.tab.id;
      trail.owner = target.tab.ownedByAgent ? 'agent' : 'user';
    }
    const url = target.destination ?? target.frames[0]?.url;
    if (url) trail.url = secrets.redactor.text(url);
    if (target.element) trail.element = `${target.element.role} "${target.element.name}"`;
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

  private record(trail: Trail, end: Pick<AuditEntry, 'outcome' | 'durationMs'> & { error?: string }): void {
    this.options.audit.record({
      time: new Date().toISOString(),
      frontEnd: trail.frontEnd ?? '?',
      tool: trail.tool ?? '?',
      kind: trail.kind ?? '?',
      args: trail.args ?? {},
      mode: trail.mode ?? this.options.context.session.mode,
      decision: trail.decision ?? 'allow',
      ...pick(trail, ['tab', 'owner', 'url', 'element', 'rule', 'reason', 'approver', 'choice', 'blocked']),
      ...end,
    });
  }
}

function parseArgs(tool: Tool, raw: unknown): Args {
  const parsed = tool.schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data as Args;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`,
  );
  throw new TabwardError('bad_input', `Bad arguments for ${tool.name}: ${problems.join('; ')}.`);
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
