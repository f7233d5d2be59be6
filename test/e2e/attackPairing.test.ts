// Attacks on "unpairing revokes at the relay; one socket speaks for one browser" (issue 38), written after it by
// a review as an attacker would: the real `tabward relay` process on 127.0.0.1, fake extensions over real
// WebSockets, the agent over real MCP, and revocation from another process (a second SQLite connection on the
// relay's file, as the CLI does, and the CLI itself). Each test is one attack; a failing assertion is a hole.
// A2-A5, A10, A11 and A13 were holes when written (a socket admitted while its browser was unpaired, the
// activity feed sent to a revoked socket, a silent revoked socket kept, a finished call rewritten by a resent
// outcome, a forged decision and a give-way left out of the audit).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { RelayToExtension } from '../../src/protocol/siteTools.ts';
import { extensionOrigin, pairingRig } from '../helpers/pairingRig.ts';
import { runCli } from '../helpers/runCli.ts';
import { waitFor, within } from '../helpers/waitFor.ts';
import { callTool, type RelayProcess, startRelayProcess, waitForTools } from '../helpers/webmcpRig.ts';

let home: string;
let db: string;
let relay: RelayProcess;
const { withStore, audit, post, pair, ticketOf, agentFor, socketWith, connect, share, behave } = pairingRig(
  () => ({
    home,
    db,
    relay,
  }),
);

before(async () => {
  home = mkdtempSync(join(tmpdir(), 'tabward-attack-pairing-'));
  db = join(home, 'relay.db');
  relay = await startRelayProcess(db);
});
after(async () => {
  await relay?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('attacks on revocation and one socket per browser', () => {
  test('A1 a revoked credential on every door, in every spelling; /unpair naming another browser', async () => {
    const victim = await pair('doors');
    const other = await pair('doors');
    // /unpair with the victim's credential, naming the other browser in body and query: only the caller goes.
    const unpaired = await fetch(`${relay.url}/unpair?browser=${other.browser}&id=${other.browser}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: extensionOrigin,
        authorization: `Bearer ${victim.credential}`,
      },
      body: JSON.stringify({ browser: other.browser, id: other.browser, extension: other.browser }),
    });
    assert.equal(unpaired.status, 200);
    assert.deepEqual(await unpaired.json(), { revoked: victim.browser });
    assert.equal((await ticketOf(other.credential)).status, 200, 'the other browser is untouched');
    const c = victim.credential;
    const spellings = [
      `Bearer ${c}`,
      `bearer ${c}`,
      `BEARER ${c}`,
      `Bearer   ${c}`,
      `Bearer\t${c}`,
      `Bearer ${c} `,
      ` Bearer ${c}`,
      `Bearer ${c.toUpperCase()}`,
      `Bearer ${encodeURIComponent(c)}`,
      `Bearer ${c}, Bearer ${other.credential}`,
      `Basic ${Buffer.from(`x:${c}`).toString('base64')}`,
    ];
    for (const authorization of spellings) {
      const response = await post('/ticket', { authorization });
      assert.equal(response.status, 401, `/ticket with ${JSON.stringify(authorization.slice(0, 12))}`);
    }
    // Query instead of header, the credential where a ticket goes, the credential as an agent token.
    assert.equal((await post(`/ticket?credential=${c}&authorization=Bearer%20${c}`, {})).status, 401);
    const { opened } = socketWith(c);
    assert.equal(await opened, 401, 'the credential is not a ticket');
    const mcp = await fetch(`${relay.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${c}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    assert.equal(mcp.status, 401);
    // /unpair again with the dead credential: a no-op (200), never a re-pair nor another browser's revocation.
    const again = await post('/unpair', { authorization: `Bearer ${c}` });
    assert.equal(again.status, 200);
    assert.equal((await ticketOf(c)).status, 401);
    assert.equal((await ticketOf(other.credential)).status, 200);
    // /pair with the dead credential instead of a code.
    assert.equal((await post('/pair', { authorization: `Bearer ${c}` }, { code: c })).status, 401);
  });

  test('A2 a socket being admitted while the revocation (popup Unpair) lands is refused 4401', async () => {
    const thief = await pair('race');
    // The thief holds the credential; its first socket never answers pings, so a second one waits 3 s to be
    // weighed. The owner clicks Unpair in that window.
    const first = await connect(thief.credential, false);
    const { ticket } = await ticketOf(thief.credential);
    assert.ok(ticket);
    const { fake: second, opened } = socketWith(ticket);
    await sleep(300);
    const unpair = await post('/unpair', { authorization: `Bearer ${thief.credential}` });
    assert.equal(unpair.status, 200);
    assert.equal(await within('the first socket closed', first.closed), 4401);
    const admitted = await within('the second socket refused or admitted', opened, 6000);
    await sleep(3000);
    const state = second.socket.readyState === WebSocket.OPEN ? 'OPEN' : `closed ${second.code}`;
    const welcome = second.messages.find((m) => m.t === 'welcome');
    second.socket.close();
    assert.ok(
      admitted !== 'open' || state !== 'OPEN',
      `a revoked browser's socket is open 3 s after Unpair (admitted: ${admitted}, now ${state}, welcome sent: ${!!welcome})`,
    );
  });

  test('A3 the same race with a revocation by another process (CLI): refused too', async () => {
    const thief = await pair('race-cli');
    const first = await connect(thief.credential, false);
    const { ticket } = await ticketOf(thief.credential);
    assert.ok(ticket);
    const { fake: second, opened } = socketWith(ticket);
    await sleep(300);
    assert.ok(
      withStore((s) => s.revokeExtension(thief.browser)),
      'revoked as `browsers revoke` does',
    );
    const admitted = await within('the second socket refused or admitted', opened, 6000);
    const firstCode = await within('the first socket closed', first.closed, 6000);
    await sleep(2000);
    const state = second.socket.readyState === WebSocket.OPEN ? 'OPEN' : `closed ${second.code}`;
    second.socket.close();
    assert.ok(
      admitted !== 'open' || state !== 'OPEN',
      `revoked by the CLI while a second socket was weighed: that socket was admitted (${admitted}) and is ${state}; the first closed ${firstCode}`,
    );
  });

  test('A4 CLI revoke while a call of another browser is in flight: the revoked socket gets none of the workspace’s activity', async () => {
    const revokee = await pair('feed');
    const owner = await pair('feed');
    const lost = await connect(revokee.credential);
    const desk = await connect(owner.credential);
    share(desk, 'https://desk.example');
    const agent = await agentFor('feed');
    await waitForTools(agent, (text) => text.includes('desk.example'));
    // The desk asks its human about a write; the answer comes after the lost laptop was revoked.
    let approve: () => void = () => undefined;
    desk.socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as RelayToExtension;
      if (message.t === 'locate')
        desk.socket.send(
          JSON.stringify({
            t: 'located',
            taskId: message.taskId,
            target: { documentId: 'd', url: 'https://desk.example/page' },
          }),
        );
      if (message.t === 'ask')
        approve = () =>
          desk.socket.send(JSON.stringify({ t: 'decision', taskId: message.taskId, decision: 'approved' }));
      if (message.t === 'call')
        desk.socket.send(
          JSON.stringify({
            t: 'outcome',
            taskId: message.taskId,
            outcome: { ok: true, result: 'secret-ish' },
          }),
        );
    });
    const call = callTool(agent, 'callSiteTool', {
      site: 'https://desk.example',
      tool: 'write',
      arguments: { note: 'private' },
    });
    await waitFor('the ask', () => desk.messages.some((m) => m.t === 'ask'));
    await sleep(200);
    const revoked = await runCli(['relay', 'browsers', 'revoke', revokee.browser, '--db', db], {});
    assert.match(revoked.stdout, /within 5 s/);
    const revokedAt = Date.now();
    approve();
    const result = await call;
    assert.ok(!result.isError, result.text);
    await sleep(500);
    const leaked = lost.messages.filter((m) => m.receivedAt > revokedAt && m.t === 'activity');
    assert.equal(
      leaked.length,
      0,
      `the revoked browser got the feed after its revocation: ${JSON.stringify(leaked.map((m) => (m.t === 'activity' ? m.entries.map((e) => `${e.event} ${e.detail}`) : [])))}`,
    );
    await agent.close();
    desk.socket.close();
    lost.socket.close();
  });

  test('A5 CLI revoke of a silent socket: the running relay drops it within seconds', async () => {
    const ghost = await pair('silent');
    const link = await connect(ghost.credential);
    share(link, 'https://silent.example');
    const revoked = await runCli(['relay', 'browsers', 'revoke', ghost.browser, '--db', db], {});
    assert.match(revoked.stdout, /drops its socket \(within 5 s\)/);
    // The socket never speaks again (a thief's client need not send the extension's 20 s pings); it answers
    // the relay's WebSocket pings as any client library does.
    const code = await Promise.race([link.closed, sleep(12_000).then(() => 'still open')]);
    link.socket.close();
    assert.equal(
      code,
      4401,
      'the revoked socket is closed as revoked, not left open 12 s after `browsers revoke`',
    );
  });

  test('A6 CLI revoke while the revoked browser holds a question, then a call: its answers settle nothing', async () => {
    const laptop = await pair('inflight');
    const link = await connect(laptop.credential);
    share(link, 'https://inflight.example');
    const agent = await agentFor('inflight');
    await waitForTools(agent, (text) => text.includes('inflight.example'));
    // (a) A question pending in the revoked browser: its "approved" after revocation runs nothing.
    link.socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as RelayToExtension;
      if (message.t === 'locate')
        link.socket.send(
          JSON.stringify({
            t: 'located',
            taskId: message.taskId,
            target: { documentId: 'd', url: 'https://inflight.example/page' },
          }),
        );
    });
    const asked = callTool(agent, 'callSiteTool', {
      site: 'https://inflight.example',
      tool: 'write',
      idempotencyKey: 'k-ask',
    });
    const ask = await waitFor('the ask', () => link.messages.find((m) => m.t === 'ask'));
    withStore((s) => s.revokeExtension(laptop.browser));
    const t0 = Date.now();
    link.socket.send(
      JSON.stringify({ t: 'decision', taskId: 'taskId' in ask ? ask.taskId : '', decision: 'approved' }),
    );
    assert.equal(await within('the revoked socket closed', link.closed), 4401);
    const result = await asked;
    assert.ok(result.isError, result.text);
    assert.ok(Date.now() - t0 < 5000, 'the call failed at once');
    assert.ok(!link.messages.some((m) => m.t === 'call'), 'no call was sent to the revoked browser');
    await agent.close();
  });

  test('A7 CLI revoke during a running call: the revoked socket’s outcome does not settle it or its key', async () => {
    const laptop = await pair('inflight2');
    const link = await connect(laptop.credential);
    share(link, 'https://inflight2.example');
    const agent = await agentFor('inflight2');
    await waitForTools(agent, (text) => text.includes('inflight2.example'));
    behave(link, () => undefined);
    const running = callTool(agent, 'callSiteTool', {
      site: 'https://inflight2.example',
      tool: 'read',
      idempotencyKey: 'k-run',
    });
    const call = await waitFor('the call', () => link.messages.find((m) => m.t === 'call'));
    withStore((s) => s.revokeExtension(laptop.browser));
    link.socket.send(
      JSON.stringify({
        t: 'outcome',
        taskId: 'taskId' in call ? call.taskId : '',
        outcome: { ok: true, result: 'forged after revoke' },
      }),
    );
    assert.equal(await within('the revoked socket closed', link.closed), 4401);
    const result = await running;
    assert.ok(result.isError, result.text);
    assert.doesNotMatch(result.text, /forged/);
    // (The site left the list with the revocation, so a retry is refused earlier; the key itself is read.)
    const taskId = 'taskId' in call ? call.taskId : '';
    const key = withStore((s) => s.keyOfTask(taskId));
    assert.equal(key?.state, 'unknown', `the key after the revoked socket's outcome: ${JSON.stringify(key)}`);
    assert.doesNotMatch(key?.detail ?? '', /forged/);
    assert.match(audit(), new RegExp(`"tool":"\\(browser\\)".*"browser":"${laptop.browser}".*revoked`));
    await agent.close();
  });

  test('A8 Unpair during a running call: the call fails at once and the socket is 4401', async () => {
    const laptop = await pair('inflight3');
    const link = await connect(laptop.credential);
    share(link, 'https://inflight3.example');
    const agent = await agentFor('inflight3');
    await waitForTools(agent, (text) => text.includes('inflight3.example'));
    behave(link, () => undefined);
    const running = callTool(agent, 'callSiteTool', { site: 'https://inflight3.example', tool: 'read' });
    await waitFor('the call', () => link.messages.find((m) => m.t === 'call'));
    const t0 = Date.now();
    assert.equal((await post('/unpair', { authorization: `Bearer ${laptop.credential}` })).status, 200);
    assert.equal(await within('closed', link.closed), 4401);
    const result = await running;
    assert.ok(result.isError);
    assert.match(result.text, /outcome is unknown/);
    assert.ok(Date.now() - t0 < 3000);
    await agent.close();
  });

  test('A12 a third socket while the second is being weighed is refused; a burst of sockets with no live one admits one', async () => {
    const laptop = await pair('burst');
    const first = await connect(laptop.credential, false);
    const t2 = (await ticketOf(laptop.credential)).ticket ?? '';
    const t3 = (await ticketOf(laptop.credential)).ticket ?? '';
    const second = socketWith(t2);
    await sleep(200);
    const third = socketWith(t3);
    assert.equal(await within('third', third.opened), 'open', 'the third is upgraded, then closed');
    assert.equal(await within('third closed', third.fake.closed), 4409);
    assert.equal(await within('second', second.opened, 6000), 'open');
    await within('first dropped', first.closed, 6000);
    second.fake.socket.close();
    await second.fake.closed;
    // A burst: ten sockets at once, no live one. One may speak for the browser; the rest must be 4409.
    const tickets = await Promise.all(Array.from({ length: 10 }, () => ticketOf(laptop.credential)));
    const burst = tickets.map((t) => socketWith(t.ticket ?? ''));
    await Promise.all(burst.map((b) => b.opened));
    await sleep(1500);
    const open = burst.filter((b) => b.fake.socket.readyState === WebSocket.OPEN).length;
    for (const b of burst) b.fake.socket.close();
    assert.equal(open, 1, `${open} sockets speak for one browser at once`);
  });

  test('A13 a silent socket giving way to a new one leaves a trace in the audit log', async () => {
    const laptop = await pair('giveway');
    const asleep = await connect(laptop.credential, false);
    const before = audit();
    const woke = await connect(laptop.credential);
    await within('the silent one dropped', asleep.closed, 6000);
    await sleep(300);
    const added = audit().slice(before.length);
    woke.socket.close();
    assert.ok(
      added.includes(laptop.browser),
      'a socket replaced by a newcomer with the same credential: nothing in the audit log (nor stderr)',
    );
  });

  test('A14 `browsers revoke` with hostile ids revokes nothing', async () => {
    const keep = await pair('cli');
    for (const id of [
      `' OR '1'='1`,
      `${keep.browser}' --`,
      '%',
      'ext-%',
      `${keep.browser} `,
      keep.browser.toUpperCase(),
      '*',
    ]) {
      const out = await runCli(['relay', 'browsers', 'revoke', id, '--db', db], {});
      assert.notEqual(out.code, 0, `revoke ${JSON.stringify(id)}: ${out.stdout}`);
    }
    const agentId = withStore((s) => s.createAgentToken('cli', 'x').agent.id);
    assert.notEqual((await runCli(['relay', 'browsers', 'revoke', agentId, '--db', db], {})).code, 0);
    assert.equal((await ticketOf(keep.credential)).status, 200, 'the browser is still paired');
    const list = await runCli(['relay', 'browsers', 'list', '--db', db], {});
    assert.doesNotMatch(list.stdout, /twe_/, 'no credential listed');
  });
});
