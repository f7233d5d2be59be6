// Hosting the user's external MCP servers for the agent: their tools join the browser's, named NAME__tool.
// A server can be restarted with new arguments at run time; the tool list the model sees stays the one it
// was given at start, so the model's context is not disturbed.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Approver } from '../core/approvals.ts';
import type { CallPath, GuardedAction } from '../core/callPath.ts';
import { asTabwardError, TabwardError } from '../core/errors.ts';
import type { LoopTool } from '../llm/toolLoop.ts';
import type { ServerSpec } from './mcpConfig.ts';

interface Hosted {
  spec: ServerSpec;
  client: Client;
  readonly tools: {
    name: string;
    description: string;
    inputSchema: Record<string, unknown>;
    readOnly: boolean;
  }[];
}

export class McpHost {
  private readonly hosted = new Map<string, Hosted>();

  async start(specs: readonly ServerSpec[], log: (line: string) => void): Promise<void> {
    for (const spec of specs) {
      try {
        const client = await connect(spec);
        const { tools } = await client.listTools();
        const list = tools.map((tool) => ({
          name: tool.name,
          description: tool.description ?? '',
          inputSchema: tool.inputSchema as Record<string, unknown>,
          readOnly: tool.annotations?.readOnlyHint === true,
        }));
        this.hosted.set(spec.name, { spec, client, tools: list });
        log(`tabward: MCP server ${spec.name}: ${list.length} tools`);
      } catch (error) {
        log(
          `tabward: MCP server ${spec.name} did not start: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }

  /** Restarts a server with new arguments (or the same); its tools keep their names and schemas for the model. */
  async restart(name: string, args?: string[]): Promise<void> {
    const hosted = this.hosted.get(name);
    if (!hosted)
      throw new TabwardError(
        'not_found',
        `No MCP server named ${name} (have: ${[...this.hosted.keys()].join(', ') || 'none'}).`,
      );
    await hosted.client.close().catch(() => undefined);
    if (args && 'command' in hosted.spec) hosted.spec = { ...hosted.spec, args };
    hosted.client = await connect(hosted.spec);
  }

  /**
   * The hosted tools for the model, each call on the one call path: judged by the guard (a tool the server does
   * not declare read-only asks; after a sensitive read any call can carry the data away, so it asks too),
   * asked, and audited like a browser tool.
   */
  loopTools(approver: Approver, path: CallPath): LoopTool[] {
    return [...this.hosted.values()].flatMap((hosted) =>
      hosted.tools.map((tool) => {
        const name = `${hosted.spec.name}__${tool.name}`;
        const action = (args: Record<string, unknown>): GuardedAction<string> => ({
          name,
          auditKind: 'external',
          args,
          subject: { server: hosted.spec.name, tool: tool.name },
          look: async () => ({
            facts: {
              tool: name,
              kind: tool.readOnly ? 'read' : 'write',
              frames: [],
              carriesData: true,
              external: true,
            },
            binding: JSON.stringify(args),
          }),
          act: () => this.callHosted(hosted, tool.name, args),
          skipped: () => 'skipped by the user; nothing was done',
          withArgs: (modified) => action({ ...modified }),
        });
        return {
          name,
          description: tool.description,
          inputSchema: tool.inputSchema,
          execute: async (args: Record<string, unknown>) => {
            const signal = new AbortController().signal;
            try {
              return (await path.run(action(args), { frontEnd: 'agent', approver, signal })).value;
            } catch (error) {
              const failure = asTabwardError(error);
              return `${failure.code}: ${failure.describe()}`;
            }
          },
        };
      }),
    );
  }

  private async callHosted(hosted: Hosted, tool: string, args: Record<string, unknown>): Promise<string> {
    const result = await hosted.client.callTool({ name: tool, arguments: args }, undefined, {
      timeout: 120_000,
    });
    const text = (result.content as { type: string; text?: string }[])
      .map((part) => part.text ?? `[${part.type}]`)
      .join('\n');
    return result.isError ? `error: ${text}` : text;
  }

  describe(): string {
    const lines = [...this.hosted.values()].map((hosted) => {
      const how =
        'command' in hosted.spec ? `${hosted.spec.command} ${hosted.spec.args.join(' ')}` : hosted.spec.url;
      return `${hosted.spec.name}: ${hosted.tools.length} tools (${how.trim()})`;
    });
    return lines.join('\n') || 'No external MCP servers.';
  }

  async close(): Promise<void> {
    for (const hosted of this.hosted.values()) await hosted.client.close().catch(() => undefined);
  }
}

async function connect(spec: ServerSpec): Promise<Client> {
  const client = new Client({ name: 'tabward-agent', version: '1' });
  const transport =
    'command' in spec
      ? new StdioClientTransport({
          command: spec.command,
          args: spec.args,
          env: { ...(process.env as Record<string, string>), ...spec.env },
          stderr: 'ignore',
        })
      : new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers } });
  await client.connect(transport);
  return client;
}
