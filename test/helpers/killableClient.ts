// A real MCP client in a process of its own, for tests that kill it mid-call. It starts tabward with the
// command line and environment given as JSON in argv[2] (tabward's stderr goes to the file named there, so what
// tabward says after its client died can still be read), prints tabward's pid, then makes the calls listed and
// prints each result: one JSON line each. It stays until killed.

import { openSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

interface Plan {
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly stderrFile: string;
  readonly calls: { name: string; args: Record<string, unknown> }[];
}

const plan = JSON.parse(process.argv[2] ?? '{}') as Plan;
const transport = new StdioClientTransport({
  command: process.execPath,
  args: plan.args,
  env: plan.env,
  stderr: openSync(plan.stderrFile, 'a'),
});
const client = new Client({ name: 'killable', version: '1' }, { capabilities: {} });
await client.connect(transport);
process.stdout.write(`${JSON.stringify({ pid: transport.pid })}\n`);
for (const call of plan.calls) {
  const result = await client.callTool({ name: call.name, arguments: call.args }, undefined, {
    timeout: 120_000,
  });
  process.stdout.write(`${JSON.stringify({ tool: call.name, result })}\n`);
}
