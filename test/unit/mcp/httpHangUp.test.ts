// Over Streamable HTTP, a client that drops the connection of a running call cancels it (the handler's signal
// aborts, so a question it waits on is withdrawn); a call that completes normally is never cancelled. Real SDK
// client and server over real HTTP on 127.0.0.1.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveHttp } from '../../../src/mcp/transports.ts';
import { waitFor } from '../../helpers/waitFor.ts';

test('hanging up on a running call aborts it; finished calls are left alone', async () => {
  const calls: { name: string; signal: AbortSignal }[] = [];
  const makeServer = () => {
    const server = new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      calls.push({ name: request.params.name, signal: extra.signal });
      // "wait" stands for a call waiting for a human: only a withdrawal ends it.
      if (request.params.name === 'wait')
        await new Promise((resolve) => extra.signal.addEventListener('abort', resolve));
      return { content: [{ type: 'text' as const, text: 'done' }] };
    });
    return server;
  };
  const token = 'hang-up-test-token-0123456789abcdef';
  const http = await serveHttp(makeServer, 0, { token, hint: 'test' });
  try {
    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(http.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    await client.callTool({ name: 'quick', arguments: {} });
    const waiting = client.callTool({ name: 'wait', arguments: {} }).catch(() => 'gone');
    await waitFor('the waiting call to reach the server', () => calls.some((call) => call.name === 'wait'));
    await client.close();
    assert.equal(await waiting, 'gone');
    await waitFor(
      'the hung-up call to be aborted',
      () => calls.find((c) => c.name === 'wait')?.signal.aborted,
      {
        timeoutMs: 10_000,
      },
    );
    assert.equal(calls.find((c) => c.name === 'quick')?.signal.aborted, false);
  } finally {
    await http.close();
  }
});
