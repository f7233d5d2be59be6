// What an agent can do through the relay, independent of MCP: list the shared sites' tools, read one tool's
// definition, call a tool. A call is checked against the page's own schema before anything reaches the browser,
// then goes through the one call path (core/callPath.ts): the extension says which document would run it, the
// guard judges that document's URL (read-only runs, sensitive asks, writes ask unless "always allow"), the human
// answers in the extension popup, the document is located again and must be the one approved, the call runs
// there under the deadline and a result size cap, and the audit log and the workspace's activity record it.

import { Ajv, type ValidateFunction } from 'ajv';
import type { Approver } from '../core/approvals.ts';
import type { AuditSink } from '../core/audit.ts';
import { CallPath, type GuardedAction } from '../core/callPath.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import { Redactor } from '../core/redact.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import { siteCallFacts } from '../core/siteCalls.ts';
import { type ActivityEntry, type CallTarget, maxResultBytes, type SiteTool } from '../protocol/siteTools.ts';
import { callErrorCodes, type ExtensionHub, newTaskId } from './extensionHub.ts';
import type { AgentRecord, RelayStore } from './relayStore.ts';

export interface SiteToolCallsOptions {
  readonly store: RelayStore;
  readonly hub: ExtensionHub;
  readonly rules: RuleSet;
  readonly callDeadlineMs: number;
  /** Where every call is recorded (the same audit log as tabward's other front ends by default). */
  readonly audit: AuditSink;
}

export interface CallReport {
  readonly taskId: string;
  /** The page's result (JSON text), within the size cap. */
  readonly result: string;
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
  /** The document the extension last said would run the call: what the human is asked about. */
  located?: CallTarget;
}

const noSecrets = new Redactor([]);

export class SiteToolCalls {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  /** One call path per relay process: every site call is judged, asked, re-checked and audited by it. */
  readonly path: CallPath;

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
    /** Told what the call is doing (waiting for approval, running), e.g. to keep the client informed. */
    onStatus?: (status: string) => void,
    /** Aborts when the agent cancels the request or goes away: a pending question is withdrawn. */
    signal?: AbortSignal,
  ): Promise<CallReport> {
    const { origin, tool } = this.findTool(agent, site, toolName);
    this.validate(tool, args);
    const { store, hub } = this.options;
    const taskId = newTaskId();
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
    const call: SiteCall = {
      agent,
      origin,
      tool,
      args,
      taskId,
      remaining: () => Math.max(0, deadline - Date.now()),
      note,
      status: (text) => onStatus?.(`${taskId}: ${text}`),
    };
    call.status('finding the tab that would run it');
    try {
      const { value } = await this.path.run(this.actionFor(call), {
        frontEnd: 'relay',
        approver: this.approverFor(call),
        signal: signal ?? new AbortController().signal,
      });
      store.endTask(taskId, 'done');
      note('done', `${Buffer.byteLength(value)} bytes`);
      return { taskId, result: value };
    } catch (error) {
      const failure = asTabwardError(error);
      store.endTask(taskId, failure.code);
      note('failed', failure.message);
      throw new TabwardError(failure.code, `${taskId}: ${failure.message}`, failure.hint);
    } finally {
      hub.finish(taskId);
    }
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
        const target = await hub.locate(taskId, {
          workspace: agent.workspace,
          site: origin,
          tool: tool.name,
          deadlineMs: call.remaining(),
        });
        call.located = target;
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
        const outcome = await hub.call(taskId, {
          agent: agent.name,
          site: origin,
          tool: tool.name,
          args,
          target,
          deadlineMs: call.remaining(),
        });
        if (!outcome.ok) throw new TabwardError(callErrorCodes[outcome.error.code], outcome.error.message);
        const bytes = Buffer.byteLength(outcome.result);
        if (bytes > maxResultBytes)
          throw new TabwardError(
            'bad_input',
            `The result is ${bytes} bytes, over the ${maxResultBytes}-byte cap. Ask the tool for less (a narrower query, a page of results).`,
          );
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

  private validate(tool: SiteTool, args: Record<string, unknown>): void {
    const key = JSON.stringify(tool.inputSchema);
    let validator = this.validators.get(key);
    if (!validator) {
      try {
        validator = this.ajv.compile(tool.inputSchema);
      } catch (error) {
        throw new TabwardError(
          'bad_input',
          `The page's schema for "${tool.name}" is not a valid JSON Schema (${error instanceof Error ? error.message : String(error)}); calls are refused.`,
        );
      }
      this.validators.set(key, validator);
    }
    if (validator(args)) return;
    const problems = (validator.errors ?? []).map(
      (e) => `${e.instancePath || '(arguments)'} ${e.message ?? ''}`,
    );
    throw new TabwardError(
      'bad_input',
      `The arguments do not match the schema of "${tool.name}": ${problems.join('; ')}. Nothing was sent to the browser.`,
      'Read the schema with getSiteToolDefinition.',
    );
  }
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
