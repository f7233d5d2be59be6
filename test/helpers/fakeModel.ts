// A local fake model server speaking the providers' real HTTP protocols: OpenAI chat completions
// (POST /v1/chat/completions) and Anthropic messages (POST /v1/messages). Answers come from a script, in
// order; every request is recorded.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeModel {
  readonly baseURL: string;
  readonly requests: { path: string; auth: string; body: Record<string, unknown> }[];
  /** Queue the next answers' texts. */
  answer(...texts: string[]): void;
  /** Queue the next replies: a text, or a call of one tool. */
  reply(...replies: Reply[]): void;
  /** Awaited before each answer: a model that takes its time (while the agent's browser starts, say). */
  thinking: (() => Promise<unknown>) | undefined;
  close(): Promise<void>;
}

/** A text, or a call of one tool whose arguments may be worked out from the conversation so far. */
export type Reply =
  | string
  | {
      readonly tool: string;
      readonly args: Record<string, unknown> | ((conversation: string) => Record<string, unknown>);
    };

export async function startFakeModel(): Promise<FakeModel> {
  const queue: Reply[] = [];
  const requests: FakeModel['requests'] = [];
  const server = createServer((req, res) => {
    void handle(req, res);
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const body = JSON.parse(raw || '{}') as Record<string, unknown>;
    const auth = String(req.headers.authorization ?? req.headers['x-api-key'] ?? '');
    requests.push({ path: req.url ?? '', auth, body });
    await model.thinking?.();
    const reply = queue.shift() ?? '(no scripted answer)';
    if (body.stream === true && req.url?.endsWith('/chat/completions'))
      return streamOpenAI(res, reply, String(body.model), raw);
    const text = typeof reply === 'string' ? reply : JSON.stringify(reply);
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.endsWith('/chat/completions')) {
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: String(body.model),
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    } else {
      res.end(
        JSON.stringify({
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: String(body.model),
          content: [{ type: 'text', text }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5 },
        }),
      );
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const model: FakeModel = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    answer: (...texts) => queue.push(...texts),
    reply: (...replies) => queue.push(...replies),
    thinking: undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return model;
}

let callSeq = 0;

/** OpenAI's streaming format: server-sent chat.completion.chunk events, text in pieces or a tool call. */
function streamOpenAI(res: ServerResponse, reply: Reply, model: string, conversation: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null, usage?: Record<string, number>) =>
    res.write(
      `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`,
    );
  if (typeof reply === 'string') {
    chunk({ role: 'assistant', content: '' }, null);
    for (const piece of reply.match(/.{1,12}/gs) ?? []) chunk({ content: piece }, null);
    chunk({}, 'stop', { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 });
  } else {
    const id = `call_${++callSeq}`;
    const args = JSON.stringify(typeof reply.args === 'function' ? reply.args(conversation) : reply.args);
    chunk(
      {
        role: 'assistant',
        tool_calls: [{ index: 0, id, type: 'function', function: { name: reply.tool, arguments: '' } }],
      },
      null,
    );
    chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 10) } }] }, null);
    chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(10) } }] }, null);
    chunk({}, 'tool_calls', { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 });
  }
  res.end('data: [DONE]\n\n');
}
