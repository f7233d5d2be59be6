// Attacks on "only the browser a call was sent to answers it" (docs/architecture.md "Paired browsers"), split from
// attackPairing.test.ts (same rig: the real `tabward relay` process, fake extensions over real WebSockets, the
// agent over real MCP): an outcome replayed by another browser, a finished call's outcome sent again, a decision
// forged by another browser. Each test is one attack; a failing assertion is a hole. A10 and A11 were holes when
// written (a finished call rewritten by a resent outcome, a forged decision left out of the audit).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pairingRig } from '../helpers/pairingRig.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { callTool, type RelayProcess, startRelayProcess, waitForTools } from '../helpers/webmcpRig.ts';

let home: string;
let db: string;
let relay: RelayProcess;
const { withStore, audit, pair, agentFor, connect, share, behave } = pairingRig(() => ({
  home,
  db,
  relay,
}));

before(async () => {
  home = mkdtempSync(join(tmpdir(), 'tabward-attack-answers-'));
  db = join(home, 'relay.db');
  relay = await startRelayProcess(db);
});
after(async () => {
  await relay?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('attacks on who answers a call', () => {
  test('A9 another browser replays an outcome for a call that was sent (and dropped) elsewhere: the key stays unknown', async () => {
    const owner = await pair('replay');
    const rogue = await pair('replay');
    const link = await connect(owner.credential);
    share(link, 'https://replay.example');
    const intruder = await connect(rogue.credential);
    const agent = await agentFor('replay');
    await waitForTools(agent, (text) => text.includes('replay.example'));
    behave(link, () => link.socket.terminate());
    const dropped = await callTool(agent, 'callSiteTool', {
      site: 'https://replay.example',
      tool: 'read',
      idempotencyKey: 'k-replay',
    });
    assert.match(dropped.text, /outcome is unknown/);
    const taskId = /(task-[0-9a-f]+)/.exec(dropped.text)?.[1] ?? '';
    intruder.socket.send(
      JSON.stringify({ t: 'outcome', taskId, outcome: { ok: true, result: 'forged by rogue' } }),
    );
    await waitFor('the forgery logged', () =>
      relay.stderr().includes(`browser ${rogue.browser} sent an outcome for ${taskId}`),
    );
    const retry = await callTool(agent, 'callSiteTool', {
      site: 'https://replay.example',
      tool: 'read',
      idempotencyKey: 'k-replay',
    });
    assert.doesNotMatch(retry.text, /forged/);
    assert.match(retry.text, /may or may not have run/);
    assert.match(
      audit(),
      new RegExp(`"task":"${taskId}".*"browser":"${rogue.browser}".*"outcome":"blocked"`),
    );
    await agent.close();
    intruder.socket.close();
  });

  test('A10 a browser re-sends an outcome for its own finished call: ignored, audited as refused, the task stands', async () => {
    const laptop = await pair('rewrite');
    const link = await connect(laptop.credential);
    share(link, 'https://rewrite.example');
    const agent = await agentFor('rewrite');
    await waitForTools(agent, (text) => text.includes('rewrite.example'));
    behave(link, (message) =>
      link.socket.send(
        JSON.stringify({ t: 'outcome', taskId: message.taskId, outcome: { ok: true, result: 'real' } }),
      ),
    );
    const done = await callTool(agent, 'callSiteTool', { site: 'https://rewrite.example', tool: 'read' });
    assert.ok(!done.isError, done.text);
    const taskId = /(task-[0-9a-f]+)/.exec(done.text)?.[1] ?? '';
    await sleep(300);
    const before = audit();
    link.socket.send(
      JSON.stringify({
        t: 'outcome',
        taskId,
        outcome: { ok: false, error: { code: 'tool_failed', message: 'rewritten: it never worked' } },
      }),
    );
    await waitFor('the replay logged', () =>
      relay.stderr().includes(`sent an outcome for ${taskId}, which had already ended (done): ignored`),
    );
    await sleep(300);
    const added = audit().slice(before.length);
    const status = withStore((s) => s.task(taskId)?.status);
    link.socket.close();
    await agent.close();
    assert.doesNotMatch(
      added,
      /"decision":"allow".*the agent was told the outcome is unknown/,
      `a replayed outcome for a call the agent was told succeeded is audited as a taken late outcome: ${added.trim()}`,
    );
    assert.equal(status, 'done', `the finished task's status was rewritten to "${status}"`);
    assert.match(added, /"decision":"block".*which had already ended \(done\): ignored.*"outcome":"blocked"/);
    assert.ok(added.includes(laptop.browser), 'the record names the browser that sent it');
  });

  test('A11 another browser forges a decision for a pending question: refused, said as a forgery and audited', async () => {
    const owner = await pair('decide');
    const rogue = await pair('decide');
    const link = await connect(owner.credential);
    share(link, 'https://decide.example');
    const intruder = await connect(rogue.credential);
    const agent = await agentFor('decide');
    await waitForTools(agent, (text) => text.includes('decide.example'));
    behave(link, () => undefined, { approve: false });
    const asked = callTool(agent, 'callSiteTool', { site: 'https://decide.example', tool: 'write' });
    const ask = await waitFor('the ask', () => link.messages.find((m) => m.t === 'ask'));
    const taskId = 'taskId' in ask ? ask.taskId : '';
    const before = audit();
    intruder.socket.send(JSON.stringify({ t: 'decision', taskId, decision: 'approved' }));
    await waitFor('the forged decision logged', () =>
      relay.stderr().includes(`for ${taskId}, which waits on browser ${owner.browser}: ignored`),
    );
    link.socket.send(JSON.stringify({ t: 'decision', taskId, decision: 'denied' }));
    const result = await asked;
    assert.ok(result.isError, 'the forged approval ran nothing');
    assert.ok(!link.messages.some((m) => m.t === 'call'));
    const line =
      relay
        .stderr()
        .split('\n')
        .find((l) => l.includes(`for ${taskId}, which waits on browser`)) ?? '';
    const added = audit().slice(before.length);
    await agent.close();
    intruder.socket.close();
    link.socket.close();
    assert.ok(
      added.includes(rogue.browser),
      `another browser's forged approval leaves no audit record; stderr calls it: ${line}`,
    );
    assert.match(line, /sent a decision \("approved"\)/);
    assert.doesNotMatch(line, /late answer/);
  });
});
