// A site that closes a kept-alive connection just as the next request goes out on it (a server's idle timeout, a
// load balancer's) costs nothing at the choke point: the egress proxy sends the request again on a connection of
// its own, as a browser would, and the request a hook judged under an approval still arrives. Before, the proxy
// dropped the browser's connection, Chromium sent the request again with the hook's single-use token already spent,
// and the approved navigation was refused as one "no hook could tie to a tab" (a CI failure of chokePoint.test.ts).
// A request the proxy itself ends (the choke point cutting it as the session is tainted, the browser gone, tabward
// closing) is never sent again.

import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_keptAliveToken271';
/** Tries of a scenario until its request went out on a kept-alive connection. */
const attempts = 4;

describe('a kept-alive connection the site drops', () => {
  let site: Fixture;
  let browser: InProcessBrowser;
  /** Connections that already answered a request: the dropping routes close these instead of answering. */
  const used = new WeakSet<Socket>();
  /** Whether each request came on a connection that had answered one before (the proxy's kept-alive one). */
  const onAUsedConnection = new WeakMap<object, boolean>();
  const reused = (req: object) => onAUsedConnection.get(req) === true;
  let dropped = 0;
  /** Whether each /slow request came on a connection that answered before (the proxy's kept-alive one). */
  const slowOnAUsedConnection: boolean[] = [];
  const archiveOnAUsedConnection: boolean[] = [];
  const answeredOnAUsedConnection: boolean[] = [];
  const served = (path: string) => site.seen.filter((request) => request.path === path).length;
  /** Answers on a fresh connection only; on one that answered before, closes it unanswered (once per path). */
  const dropOnce = new Set<string>();
  const droppingOnReuse =
    (path: string, answer: () => string) =>
    (req: { socket: Socket }, _b: string, res: Parameters<typeof html>[0]) => {
      if (reused(req) && !dropOnce.has(path)) {
        dropOnce.add(path);
        dropped++;
        req.socket.destroy();
        return;
      }
      html(res, answer());
    };

  before(async () => {
    site = await startFixture(
      {
        '/repo': (_req, _body, res) =>
          html(
            res,
            `<title>Repo</title><form method="post" action="/settings/rename"><input type="hidden" name="name" value="new-name"><button>Rename</button></form>
            <form method="post" action="/settings/archive"><button>Archive</button></form>
            <form method="post" action="/settings/hinted"><button>Hinted</button></form>
            <form method="post" action="/settings/begun"><button>Begun</button></form>`,
          ),
        // Taken, held a while, then its connection closed unanswered: the site may have acted on it.
        'POST /settings/archive': async (req) => {
          archiveOnAUsedConnection.push(reused(req));
          await new Promise((done) => setTimeout(done, 1_500));
          req.socket.destroy();
        },
        // Read, an early hint or the start of a status line sent, then the connection closed at once.
        'POST /settings/hinted': (req, _body, res) => {
          answeredOnAUsedConnection.push(reused(req));
          res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
          setTimeout(() => req.socket.destroy(), 50);
        },
        'POST /settings/begun': (req) => {
          answeredOnAUsedConnection.push(reused(req));
          req.socket.write('HTTP/1.1 200 O');
          setTimeout(() => req.socket.destroy(), 50);
        },
        '/watcher': (_req, _body, res) =>
          html(res, `<title>Watcher</title><script>fetch('/slow?n=1', { mode: 'no-cors' })</script>`),
        // Never answered: the request is open when the choke point cuts it.
        '/slow': (req) => {
          slowOnAUsedConnection.push(reused(req));
        },
        '/settings/tokens': droppingOnReuse('/settings/tokens', () => `<title>Tokens</title><p>${token}</p>`),
        'POST /settings/rename': droppingOnReuse(
          '/settings/rename',
          () => '<title>Renamed</title><p>renamed</p>',
        ),
      },
      {
        tls: true,
        // Every request marks its connection as one that answered, whichever route (or none) takes it.
        beforeBody: (req) => {
          onAUsedConnection.set(req, used.has(req.socket as Socket));
          used.add(req.socket as Socket);
          return undefined;
        },
      },
    );
    browser = await startInProcess();
  });
  after(async () => {
    await browser?.close();
    await site?.close();
  });

  /** A client whose human approves every question. */
  const approving = async () => {
    const agent = await browser.connect();
    agent.human.policy = () => ({ decision: 'approve' });
    return agent;
  };

  test('an approved navigation into a sensitive page arrives on a connection of its own', async () => {
    const agent = await approving();
    const before = dropped;
    let tokens = { text: '', isError: true };
    // Which connection a request goes out on is the browser's and the pool's choice: tried until one was kept-alive.
    for (let tries = 0; tries < attempts && dropped === before; tries++) {
      const repo = await agent.call('navigate_page', { url: site.url('github.com', '/repo') });
      assert.equal(repo.isError, false, repo.text);
      tokens = await agent.call('navigate_page', { url: site.url('github.com', '/settings/tokens') });
    }
    assert.equal(dropped, before + 1, 'the site closed the kept-alive connection the request went out on');
    assert.match(tokens.text, /"Tokens" \(HTTP 200\)/, tokens.text);
    assert.match((await agent.call('take_snapshot')).text, new RegExp(token));
    await agent.close();
  });

  test('an approved form post into a sensitive page arrives, its body whole, on a connection of its own', async () => {
    const agent = await approving();
    const before = dropped;
    let clicked = { text: '', isError: true };
    for (let tries = 0; tries < attempts && dropped === before; tries++) {
      await agent.call('navigate_page', { url: site.url('github.com', '/repo') });
      const snapshot = await agent.call('take_snapshot');
      clicked = await agent.call('click', { ref: refOf(snapshot.text, 'Rename') });
    }
    assert.equal(dropped, before + 1, 'the site closed the kept-alive connection the post went out on');
    assert.equal(clicked.isError, false, clicked.text);
    assert.match((await agent.call('take_snapshot')).text, /renamed/);
    // The dropped one and its second send carry the same body (and any earlier try's, on a fresh connection).
    const bodies = new Set(
      site.seen.filter((request) => request.path === '/settings/rename').map((post) => post.body),
    );
    assert.deepEqual([...bodies], ['name=new-name']);
    // The audit says it went out twice (the site may have read the first before it closed the connection).
    const sent = agent.audit().flatMap((record) => ('sent' in record ? (record.sent ?? []) : []));
    assert.ok(
      sent.some((line) =>
        /rename: sent twice \(the site closed the first connection as it went out\), answered 200/.test(line),
      ),
      sent.join('\n'),
    );
    await agent.close();
  });

  test('a request the choke point cut as the session was tainted is never sent again', async () => {
    const agent = await approving();
    await agent.call('new_page', { url: site.url('evil.example', '/watcher') });
    await waitFor('the page asks its server', () => slowOnAUsedConnection.length > 0);
    // Sent on the proxy's kept-alive connection: the one a resend would follow.
    assert.deepEqual(slowOnAUsedConnection, [true]);
    await agent.call('new_page', { url: site.url('github.com', '/settings/tokens') });
    assert.match((await agent.call('take_snapshot')).text, new RegExp(token));
    await new Promise((done) => setTimeout(done, 1_000));
    assert.equal(served('/slow?n=1'), 1, 'the cut request went out again');
    await agent.close();
  });

  test('a request whose connection the site closed only after holding it is not sent again', async () => {
    const agent = await approving();
    await agent.call('navigate_page', { url: site.url('github.com', '/repo') });
    const snapshot = await agent.call('take_snapshot');
    await agent.call('click', { ref: refOf(snapshot.text, 'Archive') });
    await new Promise((done) => setTimeout(done, 500));
    // Sent once, on the kept-alive connection (a resend would have come within the wait).
    assert.deepEqual(archiveOnAUsedConnection, [true]);
    await agent.close();
  });

  test('a request the site began to answer before it closed the connection is not sent again', async () => {
    const agent = await approving();
    for (const button of ['Hinted', 'Begun']) {
      await agent.call('navigate_page', { url: site.url('github.com', '/repo') });
      const snapshot = await agent.call('take_snapshot');
      await agent.call('click', { ref: refOf(snapshot.text, button) });
    }
    await new Promise((done) => setTimeout(done, 500));
    // Each sent once, on the kept-alive connection.
    assert.deepEqual(answeredOnAUsedConnection, [true, true]);
    await agent.close();
  });
});
