// The taint growing cuts every open connection to a host it covers, all at once, before the secret is typed
// (browser/requestTaint.ts taintGrew, the egress proxy's cut): connections opened before a secret is typed and cut
// after it when the page chooses (a socket closed, a request aborted) were cut at the attacker's server too, one bit
// each. A red-team review's attacks (test/helpers/chokePointRig.ts).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bitsOf, chokePointRig, secretJ, type Upgrade } from '../helpers/chokePointRig.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('the taint growing cuts open connections to the hosts it covers', () => {
  const rig = chokePointRig();
  const { upgrades, closedSockets, aborted, holdHangs, letGo, url, quietly, agent } = rig;

  test('sockets opened before a password is typed, closed after it, tell the attacker its bits', async () => {
    const agentMcp = await agent();
    const mine = <T extends Upgrade>(list: T[]) =>
      list.filter((entry) => entry.host.startsWith('evil-j.example:'));
    await agentMcp.call('new_page', { url: url('login-j.example', '/login-close') });
    await waitFor('the sockets open', () => mine(upgrades).length >= bitsOf(secretJ.length), {
      timeoutMs: 20_000,
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${mine(upgrades).length} open`);
    });
    const snapshot = await agentMcp.call('take_snapshot');
    const typedAt = Date.now();
    const typed = await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_J' });
    assert.equal(typed.isError, false, typed.text);
    await quietly(1_500);
    const bits = mine(closedSockets)
      .filter((entry) => entry.at >= typedAt)
      .map((entry) => Number(/k=(\d+)/.exec(entry.url)?.[1]));
    const codes = new Array(secretJ.length).fill(0);
    for (const k of bits) codes[k >> 3] |= 1 << (k & 7);
    // As the secret is about to be typed the choke point cuts every socket to a host outside the allowed set, all at
    // once: which ones close then says nothing of the secret. A cut that spared some would.
    const total = bitsOf(secretJ.length);
    assert.ok(
      bits.length === 0 || bits.length === total,
      `while the tab held the typed secret, evil-j.example saw ${bits.length} of ${total} sockets close; their bits spell "${String.fromCharCode(...codes)}"`,
    );
  });

  test('requests pending before a password is typed, aborted after it, tell the attacker its bits', async () => {
    const agentMcp = await agent();
    holdHangs();
    const mine = () => rig.site.seen.filter((request) => request.path.startsWith('/hang-abort'));
    await agentMcp.call('new_page', { url: url('login-k.example', '/login-abort') });
    await waitFor('the requests hang', () => mine().length >= 8);
    const snapshot = await agentMcp.call('take_snapshot');
    const typedAt = Date.now();
    const typed = await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_K' });
    assert.equal(typed.isError, false, typed.text);
    await quietly(1_500);
    const bits = aborted
      .filter((entry) => entry.at >= typedAt && entry.url.startsWith('/hang-abort'))
      .map((entry) => Number(/k=(\d+)/.exec(entry.url)?.[1]));
    let code = 0;
    for (const k of bits) code |= 1 << k;
    letGo();
    // Cut all at once as the secret is about to be typed, or none: either way the set says nothing of the secret.
    assert.ok(
      bits.length === 0 || bits.length === 8,
      `while the tab held the typed secret, ${bits.length} of the attacker's 8 pending requests were cut; their bits spell "${String.fromCharCode(code)}"`,
    );
  });
});
