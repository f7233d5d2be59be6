// Another local user finds the isolated browser's egress proxy among the loopback listeners (/proc/net/tcp is
// readable by all) and sends requests through it: a sensitive page fetched that way counted as the agent's read
// (its session tainted, every later navigation asked), the proxy fetched as the victim, and what "left" reached the
// victim's audit (found by an attack review). The proxy now serves only connections of the user it runs as.
// Runs as root only: the other user is `nobody`, reached with setpriv.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { type EgressProxy, type EgressRequest, startEgressProxy } from '../../src/browser/egressProxy.ts';
import { makeHostCertificates } from '../../src/browser/hostCertificates.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;

/**
 * A client of the proxy in a process of its own, run as `user` (undefined: this user): a plain request in absolute
 * form, then a CONNECT. Spawned, not spawnSync'd: the proxy answers from this process's event loop.
 */
async function throughProxy(
  port: number,
  target: string,
  user: number | undefined,
  halfClose = false,
): Promise<string> {
  const client = `
    const { connect } = require('node:net');
    const ask = (head) => new Promise((resolve) => {
      const socket = connect(${port}, '127.0.0.1');
      let got = '';
      socket.on('data', (chunk) => { got += chunk; if (head.startsWith('CONNECT') && got.includes('\\r\\n\\r\\n')) socket.destroy(); });
      socket.on('close', () => resolve(got.split('\\r\\n')[0] || 'closed'));
      socket.on('error', () => undefined);
      socket.setTimeout(3000, () => socket.destroy());
      socket.write(head);
      ${halfClose ? 'socket.end();' : ''}
    });
    (async () => {
      const plain = await ask('GET ${target} HTTP/1.1\\r\\nHost: ${new URL(target).host}\\r\\nConnection: close\\r\\n\\r\\n');
      const tunnel = await ask('CONNECT ${new URL(target).host} HTTP/1.1\\r\\nHost: ${new URL(target).host}\\r\\n\\r\\n');
      console.log(JSON.stringify({ plain, tunnel }));
    })();`;
  const command =
    user === undefined
      ? [process.execPath, '-e', client]
      : ['setpriv', `--reuid=${user}`, `--regid=${user}`, '--clear-groups', process.execPath, '-e', client];
  const child = spawn(command[0] as string, command.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 15_000,
  });
  let out = '';
  let errors = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (errors += chunk));
  const status = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(status, 0, errors);
  return out.trim();
}

describe('the egress proxy serves the user it runs as, no other', {
  skip: !(asRoot && hasSetpriv) && 'needs root and setpriv',
}, () => {
  let site: Fixture;
  let proxy: EgressProxy;
  const judged: EgressRequest[] = [];
  const sent: string[] = [];

  before(async () => {
    site = await startFixture({
      'GET /settings/profile': (_req, _body, res) => html(res, '<title>Profile</title>the user profile'),
    });
    proxy = await startEgressProxy({
      policy: {
        egressVerdict: async (request) => {
          judged.push(request);
          return undefined;
        },
        socketMessageVerdict: () => undefined,
        egressSent: (request, status) => {
          if (status !== undefined) sent.push(`${request.method} ${request.url} ${status}`);
        },
        socketStopped: () => undefined,
      },
      certificates: makeHostCertificates(),
      mapHost: () => '127.0.0.1',
      verifyUpstream: false,
    });
  });
  after(async () => {
    proxy?.close();
    await site?.close();
  });

  it("refuses another user's requests before judging them: nothing reaches the site, the policy or the audit", async () => {
    const target = site.url('github.com', '/settings/profile');
    const seen = JSON.parse(await throughProxy(proxy.port, target, 65534)) as {
      plain: string;
      tunnel: string;
    };
    assert.equal(seen.plain, 'closed', 'a plain request of another user gets no answer');
    assert.equal(seen.tunnel, 'closed', "another user's CONNECT is not established");
    assert.deepEqual(
      judged,
      [],
      'nothing of the other user was judged (a sensitive read would taint the session)',
    );
    assert.deepEqual(sent, []);
    assert.equal(site.seen.length, 0, 'the site received nothing');
  });

  it('serves the user it runs as (the browser tabward started)', async () => {
    const target = site.url('github.com', '/settings/profile');
    const [judgedBefore, seenBefore] = [judged.length, site.seen.length];
    const seen = JSON.parse(await throughProxy(proxy.port, target, undefined)) as {
      plain: string;
      tunnel: string;
    };
    assert.equal(seen.plain, 'HTTP/1.1 200 OK');
    assert.match(seen.tunnel, /^HTTP\/1\.1 200 Connection Established/);
    assert.equal(judged.length - judgedBefore, 1);
    assert.equal(site.seen.length - seenBefore, 1);
  });

  it("in one burst, the user's connections are served and another user's refused, each by its own peer", async () => {
    const target = site.url('github.com', '/settings/profile');
    const [judgedBefore, seenBefore] = [judged.length, site.seen.length];
    // The kernel's table is read once for connections accepted together: each still gets its own verdict.
    const runs = await Promise.all(
      [undefined, 65534, undefined, 65534, undefined].map((user) => throughProxy(proxy.port, target, user)),
    );
    const seen = runs.map((run) => JSON.parse(run) as { plain: string; tunnel: string });
    assert.deepEqual(
      seen.map((each) => each.plain),
      ['HTTP/1.1 200 OK', 'closed', 'HTTP/1.1 200 OK', 'closed', 'HTTP/1.1 200 OK'],
    );
    assert.equal(judged.length - judgedBefore, 3);
    assert.equal(site.seen.length - seenBefore, 3);
  });

  it("another user's request sent as its socket half-closes (its end then listed without an owner) is not judged", async () => {
    // The proxy's reply to the FIN puts the other user's socket in TIME_WAIT, which the kernel lists as uid 0 with
    // no inode: a tabward running as root took it for its own, and the request tainted the session.
    const target = site.url('github.com', '/settings/profile');
    const judgedBefore = judged.length;
    await Promise.all([1, 2, 3].map(() => throughProxy(proxy.port, target, 65534, true)));
    assert.equal(judged.length - judgedBefore, 0, 'nothing of the other user was judged');
  });
});
