// The egress proxy answers a request it cannot read (a head over its limit, a malformed one) with an HTTP error
// that says why, never by closing the connection: a closed connection is a failure a browser may follow with a name
// lookup of its own (test/e2e/attackNameLookups.test.ts), and the page learns nothing of why.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { type EgressProxy, type EgressRequest, startEgressProxy } from '../../../src/browser/egressProxy.ts';
import { makeHostCertificates } from '../../../src/browser/hostCertificates.ts';

let proxy: EgressProxy;
const judged: EgressRequest[] = [];

before(async () => {
  proxy = await startEgressProxy({
    policy: {
      egressVerdict: async (request) => {
        judged.push(request);
        return 'refused by the test';
      },
      socketMessageVerdict: () => undefined,
      egressSent: () => undefined,
      socketStopped: () => undefined,
    },
    certificates: makeHostCertificates(),
    mapHost: (host) => host,
    verifyUpstream: true,
  });
});
after(() => proxy.close());

/** Writes `head` to the proxy and reads what it answers until it closes the connection. */
function exchange(head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxy.port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.write(head);
    setTimeout(() => socket.end(), 3_000).unref();
  });
}

test('a request with a 20 KB URL, over Node’s default head, is read and judged', async () => {
  const answer = await exchange(
    `GET http://name.example/x?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: name.example\r\nConnection: close\r\n\r\n`,
  );
  assert.match(answer, /^HTTP\/1\.1 403 /);
  assert.match(answer, /refused by the test/);
  assert.equal(judged.at(-1)?.url.length, 'http://name.example/x?'.length + 20_000);
});

test('a head over the proxy’s limit is answered 431, saying it cannot be judged', async () => {
  const count = judged.length;
  const answer = await exchange(
    `GET http://name.example/ HTTP/1.1\r\nHost: name.example\r\nX-Pad: ${'a'.repeat(12 * 2 ** 20)}\r\n\r\n`,
  );
  assert.match(answer, /^HTTP\/1\.1 431 /);
  assert.match(answer, /tabward stopped this request: its head is over 4 MiB, so it cannot be judged/);
  assert.equal(judged.length, count, 'nothing of it was judged as a request');
});

test('a malformed request is answered 400, not dropped', async () => {
  const answer = await exchange('GET http://name.example/ HTTP/1.1\r\nHost name.example\r\n\r\n');
  assert.match(answer, /^HTTP\/1\.1 400 /);
  assert.match(answer, /not well-formed HTTP/);
});

test('inside a tunnel (TLS ended at the proxy), a 20 KB path is read and judged too', async () => {
  const socket = connect(proxy.port, '127.0.0.1');
  socket.write('CONNECT name.example:443 HTTP/1.1\r\nHost: name.example:443\r\n\r\n');
  await new Promise<void>((resolve, reject) => {
    socket.once('data', (chunk) =>
      /^HTTP\/1\.1 200 /.test(chunk.toString()) ? resolve() : reject(new Error(String(chunk))),
    );
    socket.once('error', reject);
  });
  const secure = tlsConnect({ socket, servername: 'name.example', rejectUnauthorized: false });
  const answer = await new Promise<string>((resolve, reject) => {
    let text = '';
    secure.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    secure.on('error', reject);
    secure.on('close', () => resolve(text));
    secure.write(`GET /x?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: name.example\r\nConnection: close\r\n\r\n`);
  });
  assert.match(answer, /^HTTP\/1\.1 403 /);
  assert.equal(judged.at(-1)?.url, `https://name.example/x?${'a'.repeat(20_000)}`);
});
