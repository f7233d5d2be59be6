// The egress proxy's check of who is on the other end of a loopback connection, without root: a connection of
// this user's is told as such (the kernel's table read, parsed, matched by both ends), several at once share a
// read, and the temporary profile's parent is chosen by the length of the socket path Chromium will make in it.

import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { profileParent } from '../../../src/browser/launch.ts';
import { LoopbackPeers } from '../../../src/browser/loopbackPeers.ts';

test("a burst of this user's connections are each told as this user's", {
  skip: process.platform !== 'linux',
}, async () => {
  const accepted: Socket[] = [];
  const server = createServer((socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const clients = await Promise.all(
    [1, 2, 3, 4].map(
      () =>
        new Promise<Socket>((resolve) => {
          const client = connect(port, '127.0.0.1', () => resolve(client));
        }),
    ),
  );
  while (accepted.length < clients.length) await new Promise((done) => setTimeout(done, 10));
  const peers = new LoopbackPeers();
  assert.deepEqual(await Promise.all(accepted.map((socket) => peers.ofSocket(socket))), [
    true,
    true,
    true,
    true,
  ]);
  for (const socket of [...clients, ...accepted]) socket.destroy();
  server.close();
});

test('a temp folder whose socket path would pass 107 bytes is left for /tmp (Chromium names its folder org.chromium.Chromium.XXXXXX)', () => {
  // TMPDIR + "/tabward-profile-XXXXXX/.tmp/org.chromium.Chromium.XXXXXX/SingletonSocket" (73 bytes) <= 107.
  const fits = `/${'a'.repeat(33)}`;
  const tooLong = `/${'a'.repeat(34)}`;
  assert.equal(fits.length, 34);
  assert.equal(profileParent(fits), fits);
  assert.equal(profileParent(tooLong), process.platform === 'win32' ? tooLong : '/tmp');
});
