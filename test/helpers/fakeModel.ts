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
  close(): Promise<void>;
}

export async function startFakeModel(): Promise<FakeModel> {
  const queue: string[] = [];
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
    const text = queue.shift() ?? '(no scripted answer)';
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
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    answer: (...texts) => queue.push(...texts),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
