// A request judged before the session's taint grew is judged again at the choke point when it reaches it after
// (browser/requestTags.ts: a token carries the taint epoch it was judged at; browser/requestJudge.ts lateTaint). A
// red-team review's attacks, each of which caused harm before its fix: a page makes requests be judged before a read
// (or before a secret is typed) and reach the proxy after it (queued behind six hanging requests of its own in the
// browser's socket pool; a WebSocket allowance its route granted and the page left unspent, the real constructor
// throwing on a protocol list Playwright's mock does not check, spent later by a worker), choosing afterwards which
// arrive: a typed password left bit by bit. Socket allowances live seconds. Harm is what the fixture servers received
// (test/helpers/chokePointRig.ts).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chokePointRig, secretB, secretD } from '../helpers/chokePointRig.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('a request judged before the taint grew is judged again at the choke point', () => {
  const rig = chokePointRig();
  const { upgrades, holdHangs, letGo, url, from, quietly, agent, readTokens } = rig;

  test('requests a page queued behind its own hanging ones before a sensitive read reach its host after it', async () => {
    const agentMcp = await agent();
    holdHangs();
    await agentMcp.call('new_page', { url: url('evil-a.example', '/queue') });
    await waitFor('six hanging requests', () => from('evil-a.example', '/hang').length >= 6);
    await quietly(1_000); // the queued ones are judged (untainted) and wait for a socket
    const early = from('evil-a.example', '/q').length;
    assert.ok(early < 10, 'nothing was queued');
    await readTokens(agentMcp);
    letGo();
    await quietly(2_000);
    const after = from('evil-a.example', '/q')
      .slice(early)
      .map((request) => request.path);
    assert.deepEqual(
      after,
      [],
      `after the read, evil-a.example received ${after.length}: ${after.join(' ')}`,
    );
  });

  test('a typed password leaves bit by bit through queued requests the page aborts or lets go', async () => {
    const agentMcp = await agent();
    holdHangs();
    await agentMcp.call('new_page', { url: url('login-b.example', '/login-bits') });
    await waitFor('six hanging requests', () => from('evil-b.example', '/hang').length >= 6);
    await quietly(1_000);
    const snapshot = await agentMcp.call('take_snapshot');
    const typed = await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_B' });
    assert.equal(typed.isError, false, typed.text);
    await quietly(500);
    letGo();
    await quietly(2_500);
    const bits = from('evil-b.example', '/bit').map((request) => Number(/k=(\d+)/.exec(request.path)?.[1]));
    const codes = new Array(secretB.length).fill(0);
    for (const k of bits) codes[k >> 3] |= 1 << (k & 7);
    const recovered = String.fromCharCode(...codes);
    assert.deepEqual(
      bits,
      [],
      `while the tab held the typed secret, evil-b.example received ${bits.length} requests; their bits spell "${recovered}"`,
    );
  });

  test('a WebSocket allowance a page left unspent lets its worker’s handshakes out after a sensitive read', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil-c.example', '/ws-allow') });
    const mine = () => upgrades.filter((upgrade) => upgrade.host.startsWith('evil-c.example:'));
    await waitFor('the worker’s sockets open', () => mine().filter((u) => u.url.includes('n=')).length >= 2);
    await readTokens(agentMcp);
    const mark = mine().length;
    await quietly(3_000);
    const later = mine().slice(mark);
    const fresh = later.filter((upgrade) => upgrade.url.includes('fresh='));
    const allowed = later.filter((upgrade) => upgrade.url.includes('n='));
    // The proxy's own judgment holds for sockets nothing let through (at most one on its way as the read happened).
    assert.ok(fresh.length <= 1, `fresh sockets after the read: ${fresh.map((u) => u.url).join(' ')}`);
    assert.ok(
      allowed.length <= 1,
      `after the read, evil-c.example received ${allowed.length} WebSocket handshakes: ${allowed.map((u) => u.url).join(' ')}`,
    );
  });

  test('a typed password leaves bit by bit through WebSocket allowances the page left unspent', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('login-d.example', '/login-ws') });
    await quietly(1_500);
    const snapshot = await agentMcp.call('take_snapshot');
    const typed = await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_D' });
    assert.equal(typed.isError, false, typed.text);
    // The browser opens one WebSocket to a host at a time: the handshakes trickle out.
    await quietly(6_000);
    const bits = upgrades
      .filter((upgrade) => upgrade.host.startsWith('evil-d.example:'))
      .map((upgrade) => Number(/k=(\d+)/.exec(upgrade.url)?.[1]));
    const codes = new Array(secretD.length).fill(0);
    for (const k of bits) codes[k >> 3] |= 1 << (k & 7);
    assert.deepEqual(
      bits,
      [],
      `while the tab held the typed secret, evil-d.example received ${bits.length} handshakes; their bits spell "${String.fromCharCode(...codes)}"`,
    );
  });
});
