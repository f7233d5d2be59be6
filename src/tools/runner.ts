// The ToolRunner: the one path from a front end's tool call to the browser. It validates arguments, asks the
// guard with live facts, asks a human where the guard says so, re-checks the facts at action time, runs the
// tool under its deadline, redacts and audits. DESIGN.md section 2 ("Data flow of one tool call").

import type { ApprovalChoice, Approver } from '../core/approvals.ts';
import type { AuditEntry, AuditSink } from '../core/audit.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import { ApproveAllGrants, canonicalAction } from '../core/grants.ts';
import { type Decision, decide, originOf } from '../core/guard.ts';
import type { WritePolicy } from '../core/kinds.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import { Taint } from '../core/taint.ts';
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
}

type Args = Record<string, unknown>;

/** Who is calling: the front end's name for the audit log, and the human to ask (default: the runner's). */
export interface Caller {
  readonly frontEnd: string;
  readonly approver?: Approver;
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
      const result = await this.run(tool, parseArgs(tool, rawArgs), { frontEnd, approver }, trail);
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
        failure.hint,
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
      const action = this.bindingOf(tool, args, target);
      if (decision.verdict === 'block')
        throw new TabwardError('blocked', decision.reason, 'No approval can override this.');
      if (decision.verdict === 'allow' || approvedAction === action)
        return this.execute(tool, args, target, caller, trail);
      const choice = await this.ask(tool, args, target, decision, caller);
      trail.approver = caller.approver.name;
      trail.choice = choice.choice;
      if (choice.choice === 'reject') {
        throw new TabwardError(
          'rejected',
          `The user rejected ${tool.name}${choice.reason ? `: ${choice.reason}` : '.'}`,
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
          ? this.bindingOf(tool, args, await tool.target(args, this.options.context))
          : action;
    }
    throw new TabwardError(
      'rejected',
      `The page kept changing while ${tool.name} waited for approval; not done.`,
      'Try again.',
    );
  }

  private decide(tool: Tool, args: Args, target: ToolTarget): Decision {
    const { session } = this.options.context;
    return decide(
      {
        tool: tool.name,
        kind: tool.kind,
        mode: session.mode,
        ...(target.tab ? { tab: { id: target.tab.id, ownedByAgent: target.tab.ownedByAgent } } : {}),
        frames: target.frames,
        ...(target.destination ? { destination: target.destination } : {}),
        ...(target.effects ? { effects: target.effects } : {}),
        carriesData: tool.carriesData?.(args) ?? false,
        exportsLocalFiles: tool.name === 'upload_file',
        taintedOrigins: this.taint.list(),
        policy: this.options.policy,
        approveAll: this.grants.covers(tool.name),
      },
      this.options.rules,
    );
  }

  /** Tab, document, origin and exact action: what one approval is bound to. */
  private bindingOf(tool: Tool, args: Args, target: ToolTarget): string {
    const tab = target.tab ? `${target.tab.id}#${target.tab.documentSeq}` : '-';
    const origin = target.frames[0] ? originOf(target.frames[0].url, target.frames[0].creatorUrl) : '-';
    return `${tab}|${origin}|${target.destination ?? ''}|${canonicalAction(tool.name, args)}`;
  }

  private async ask(
    tool: Tool,
    args: Args,
    target: ToolTarget,
    decision: Decision & { verdict: 'ask' },
    caller: Required<Caller>,
  ): Promise<ApprovalChoice> {
    const url = target.destination ?? target.frames[0]?.url ?? '';
    return caller.approver.ask({
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
    });
  }

  private async execute(
    tool: Tool,
    args: Args,
    target: ToolTarget,
    caller: Required<Caller>,
    trail: Trail,
  ): Promise<ToolResult> {
    trail.outcome = 'ok';
    const { context, rules } = this.options;
    const handled = await tool.handle(args, context, target);
    const result = tool.name === 'browser_status' ? this.withGuardStatus(handled, caller) : handled;
    if (result.readFrom) {
      const url = result.readFrom.page.url();
      this.taint.recordRead(originOf(url), rules.match(url) !== undefined);
    }
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
      ...pick(trail, ['tab', 'owner', 'url', 'rule', 'reason', 'approver', 'choice']),
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
