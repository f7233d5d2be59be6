// What an agent can do through the relay, independent of MCP: list the shared sites' tools, read one tool's
// definition, call a tool. A call is checked against the page's own schema before anything reaches the browser,
// decided by core (read-only runs, sensitive asks, writes ask unless "always allow"), given a task id, bounded
// by a deadline and a result size cap, and recorded in the workspace's activity.

import { Ajv, type ValidateFunction } from 'ajv';
import { TabwardError } from '../core/errors.ts';
import type { RuleSet } from '../core/sensitiveRules.ts';
import { decideSiteCall } from '../core/siteCalls.ts';
import { type CallOutcome, maxResultBytes, type SiteTool } from '../protocol/siteTools.ts';
import { type ExtensionHub, newTaskId } from './extensionHub.ts';
import type { AgentRecord, RelayStore } from './relayStore.ts';

export interface SiteToolCallsOptions {
  readonly store: RelayStore;
  readonly hub: ExtensionHub;
  readonly rules: RuleSet;
  readonly callDeadlineMs: number;
}

export interface CallReport {
  readonly taskId: string;
  readonly outcome: CallOutcome;
}

export class SiteToolCalls {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly options: SiteToolCallsOptions) {}

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
    /** Told once the call has its task id and verdict, e.g. to keep the client informed while it waits. */
    onStarted?: (status: string) => void,
  ): Promise<CallReport> {
    const { origin, url, tool } = this.findTool(agent, site, toolName);
    this.validate(tool, args);
    const { store, hub, rules } = this.options;
    const verdict = decideSiteCall({
      readOnly: tool.readOnly,
      sensitiveRule: rules.match(url)?.rule,
      standingAllow: store.isAllowed(agent.workspace, origin, tool.name),
    });
    const taskId = newTaskId();
    store.startTask(taskId, agent.workspace, agent.name, origin, tool.name);
    const note = (event: 'called' | 'done' | 'failed', detail: string): void =>
      hub.record(agent.workspace, {
        at: new Date().toISOString(),
        agent: agent.name,
        taskId,
        site: origin,
        tool: tool.name,
        event,
        detail,
      });
    note('called', verdict.ask ? `waits for approval: ${verdict.why}` : verdict.why);
    onStarted?.(
      `${taskId}: ${verdict.ask ? 'waiting for approval in the tabward popup' : 'running in the tab'}`,
    );
    let outcome = await hub.call(taskId, {
      workspace: agent.workspace,
      agent: agent.name,
      site: origin,
      tool: tool.name,
      args,
      ask: verdict.ask,
      deadlineMs: this.options.callDeadlineMs,
    });
    if (outcome.ok && Buffer.byteLength(outcome.result) > maxResultBytes)
      outcome = {
        ok: false,
        error: {
          code: 'too_large',
          message: `The result is ${Buffer.byteLength(outcome.result)} bytes, over the ${maxResultBytes}-byte cap. Ask the tool for less (a narrower query, a page of results).`,
        },
      };
    store.endTask(taskId, outcome.ok ? 'done' : outcome.error.code);
    note(
      outcome.ok ? 'done' : 'failed',
      outcome.ok ? `${Buffer.byteLength(outcome.result)} bytes` : outcome.error.message,
    );
    return { taskId, outcome };
  }

  private findTool(
    agent: AgentRecord,
    site: string,
    toolName: string,
  ): { origin: string; url: string; tool: SiteTool } {
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
    return { origin, url: shared.url, tool };
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
