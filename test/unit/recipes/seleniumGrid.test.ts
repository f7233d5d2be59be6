// The WebDriver side of a Selenium Grid endpoint against a stand-in Grid on 127.0.0.1: what a new-session request
// carries (Chromium's options, the endpoint's headers, its user info as Basic), what is busy and what is down, a
// session without se:cdp deleted at once, and a request in the Grid's queue dropped when the run ends.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { TabwardError } from '../../../src/core/errors.ts';
import { parseEndpoint } from '../../../src/recipes/endpointSpec.ts';
import { createGridSession, deleteGridSession, GridBusy } from '../../../src/recipes/seleniumGrid.ts';

interface Seen {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

describe('a Selenium Grid endpoint (WebDriver)', () => {
  let server: Server;
  let port = 0;
  const seen: Seen[] = [];
  let answer: (seen: Seen) => { status: number; body?: unknown } | 'hold' = () => ({ status: 500 });

  before(async () => {
    server = createServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      seen.push(request);
      const reply = answer(request);
      if (reply === 'hold') return;
      res
        .writeHead(reply.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(reply.body ?? {}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as { port: number }).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const never = new AbortController().signal;

  test("a session: Chromium's options, the endpoint's headers and its user info as Basic; deleted by id", async () => {
    seen.length = 0;
    answer = ({ method }) =>
      method === 'POST'
        ? {
            status: 200,
            body: { value: { sessionId: 's1', capabilities: { 'se:cdp': 'ws://grid/session/s1/se/cdp' } } },
          }
        : { status: 200, body: { value: null } };
    const endpoint = parseEndpoint(`selenium+http://al:pw@127.0.0.1:${port}/wd/hub#header=X-Team:blue`, 1);
    const session = await createGridSession(endpoint, ['--no-sandbox'], never);
    assert.deepEqual(session, { id: 's1', cdp: 'ws://grid/session/s1/se/cdp' });
    const [post] = seen;
    assert.equal(post?.path, '/wd/hub/session');
    assert.equal(post?.headers.authorization, `Basic ${Buffer.from('al:pw').toString('base64')}`);
    assert.equal(post?.headers['x-team'], 'blue');
    assert.match(String(post?.headers['content-type']), /charset=utf-8/);
    assert.deepEqual(JSON.parse(post?.body ?? '{}').capabilities.alwaysMatch, {
      browserName: 'chrome',
      'goog:chromeOptions': { args: ['--headless=new', '--no-sandbox'] },
    });
    assert.equal(await deleteGridSession(endpoint, 's1'), true);
    assert.equal(seen[1]?.method, 'DELETE');
    assert.equal(seen[1]?.path, '/wd/hub/session/s1');
  });

  test('a queue that timed out is busy; another refusal is a failed start; no se:cdp: deleted at once', async () => {
    const endpoint = parseEndpoint(`selenium+http://127.0.0.1:${port}`, 1);
    answer = () => ({
      status: 500,
      body: {
        value: {
          error: 'session not created',
          message: 'Could not start a new session. New session request timed out\nBuild info',
        },
      },
    });
    await assert.rejects(createGridSession(endpoint, [], never), GridBusy);
    answer = () => ({
      status: 500,
      body: {
        value: { error: 'session not created', message: 'No nodes support the capabilities in the request' },
      },
    });
    await assert.rejects(
      createGridSession(endpoint, [], never),
      (error: unknown) =>
        error instanceof TabwardError &&
        error.code === 'attach_failed' &&
        /No nodes support/.test(error.message),
    );
    seen.length = 0;
    answer = ({ method }) =>
      method === 'POST'
        ? { status: 200, body: { value: { sessionId: 's2', capabilities: {} } } }
        : { status: 200 };
    await assert.rejects(createGridSession(endpoint, [], never), /no se:cdp endpoint/);
    assert.deepEqual(
      seen.map((each) => `${each.method} ${each.path}`),
      ['POST /session', 'DELETE /session/s2'],
    );
  });

  test("a request waiting in the Grid's queue ends with the run; a Grid nobody answers for is down", async () => {
    answer = () => 'hold';
    const ending = new AbortController();
    const waiting = createGridSession(
      parseEndpoint(`selenium+http://127.0.0.1:${port}`, 1),
      [],
      ending.signal,
    );
    setTimeout(() => ending.abort(), 100);
    await assert.rejects(
      waiting,
      (error: unknown) => error instanceof TabwardError && error.code === 'timeout',
    );
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const deadPort = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(
      createGridSession(parseEndpoint(`selenium+http://127.0.0.1:${deadPort}`, 1), [], never),
      (error: unknown) =>
        error instanceof TabwardError && error.code === 'attach_failed' && /ECONNREFUSED/.test(error.message),
    );
  });
});
