// The WebMCP bridge keeps its promises when the link breaks (issue 17): a question waiting in the popup is
// withdrawn when the relay gives up on its call or the link drops (a crashed relay), saying why, so no later
// approval can run a call the agent was told had failed; an outcome that comes back after the relay stopped
// waiting is logged; an idempotency key keeps a retried write from running twice; and a relay stopped with
// SIGTERM answers the calls in flight before it goes.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { startWebmcpSite } from '../fixtures/webmcpSite.ts';
import type { Fixture } from '../helpers/fixtureServer.ts';
import { waitFor, within } from '../helpers/waitFor.ts';
import {
  callTool,
  connectAgent,
  openAndShare,
  type Rig,
  startRelayProcess,
  startRig,
  type ToolText,
  waitForTools,
} from '../helpers/webmcpRig.ts';

type Calls = [string, Record<string, unknown>][];
// Long enough for a crashed relay to come back (started through tsx on a busy machine) while a call runs.
const relayArgs = ['--call-timeout', '20'];

describe('WebMCP bridge: promises kept across drops, deadlines and retries', () => {
  let site: Fixture;
  let rig: Rig;
  let shop: Page;
  let popup: Page;
  let origin: string;
  let agent: Client;

  const call = (tool: string, args: Record<string, unknown> = {}, idempotencyKey?: string) =>
    callTool(agent, 'callSiteTool', {
      site: origin,
      tool,
      arguments: args,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });
  /** A call whose request may fail outright (its relay crashed): the error, as text. */
  const settled = (pending: Promise<ToolText>): Promise<ToolText> =>
    pending.catch((error: unknown) => ({ text: String(error), isError: true }));
  const calls = async (): Promise<Calls> => (await shop.evaluate('window.calls')) as Calls;
  const pendingShown = () => popup.locator('#pending .approval').first().waitFor({ timeout: 10_000 });
  const noPending = () =>
    waitFor(
      'the popup to show no waiting call',
      async () => (await popup.locator('#pending .approval').count()) === 0,
    );
  const withdrawnSays = (text: RegExp) =>
    popup.locator('#withdrawn li', { hasText: text }).first().waitFor({ timeout: 10_000 });

  /** Crashes the relay and starts it again on the same port and database; the extension reconnects itself. */
  const restartAfterCrash = async (): Promise<void> => {
    const port = rig.relay.port;
    await rig.relay.crash();
    await popup.locator('#link:not(.connected)').waitFor({ timeout: 10_000 });
    rig.relay = await startRelayProcess(rig.db, relayArgs, port);
    await popup.locator('#link.connected').waitFor({ timeout: 40_000 });
    await agent.close().catch(() => undefined);
    agent = await connectAgent(rig.relay.url, rig.token);
    await waitForTools(
      agent,
      (text) => text.includes('placeOrder') && !text.includes('not connected'),
      40_000,
    );
  };

  before(async () => {
    site = await startWebmcpSite();
    rig = await startRig({ webmcp: true, relayArgs });
    agent = rig.agent;
    origin = site.url('127.0.0.1', '').replace(/\/$/, '');
    ({ page: shop, popup } = await openAndShare(rig, site.url('127.0.0.1', '/shop'), true));
    await waitForTools(agent, (text) => text.includes('placeOrder'));
  });
  after(async () => {
    await agent?.close().catch(() => undefined);
    await rig?.close();
    await site?.close();
  });

  test('the relay gives up on a call (deadline): its question is withdrawn and the popup says why', async () => {
    const result = call('addToCart', { sku: 'LATE', qty: 1 });
    await pendingShown();
    assert.ok((await result).isError);
    await noPending();
    await withdrawnSays(/addToCart .*no answer within the call's deadline \(\d+ s\)/);
    assert.ok(!(await calls()).some(([, input]) => input.sku === 'LATE'));
  });

  test('the link drops (the relay crashes) while a question waits: withdrawn, nothing can run it', async () => {
    const result = settled(call('addToCart', { sku: 'DROP', qty: 1 }));
    await pendingShown();
    await rig.relay.crash();
    // Withdrawn at once: well before the call's own 20 s deadline would have taken it down.
    await waitFor(
      'the question to be withdrawn',
      async () => (await popup.locator('#pending .approval').count()) === 0,
      { timeoutMs: 3000 },
    );
    await withdrawnSays(/addToCart .*connection to the relay dropped.*nothing was run/);
    // (The SDK client hears nothing of a cut stream; closing it ends the request.)
    await restartAfterCrash();
    assert.ok((await within('the agent hears of the crash', result)).isError);
    assert.equal(await popup.locator('#pending .approval').count(), 0);
    assert.ok(!(await calls()).some(([, input]) => input.sku === 'DROP'));
  });

  test('a write running when the relay crashed: its retry is refused while the outcome is unknown, its late outcome is logged and answers the next retry', async () => {
    const first = settled(call('placeOrder', {}, 'order-1'));
    await pendingShown();
    await popup.locator('#pending .approve').first().click();
    await waitFor('the page to run placeOrder', async () =>
      (await calls()).some(([name]) => name === 'placeOrder'),
    );
    await restartAfterCrash();
    assert.ok((await first).isError);

    const refused = await call('placeOrder', {}, 'order-1');
    assert.ok(refused.isError, refused.text);
    assert.match(
      refused.text,
      /idempotency key "order-1" \(task-\w+\) may or may not have run .*this retry was not run/,
    );
    assert.equal(await popup.locator('#pending .approval').count(), 0, 'no question for a refused retry');

    await shop.evaluate('window.release()');
    const logged = await waitFor(
      'the relay to log the late outcome',
      () =>
        /late answer for (task-\w+) \(placeOrder on http:\/\/127\.0\.0\.1:\d+\).*: ok/.exec(
          rig.relay.stderr(),
        ) ?? undefined,
    );
    // The stderr line and the audit record are written one after the other: wait for the record too.
    const lateRecord = new RegExp(`"task":"${logged[1]}","site":"[^"]+","late":"outcome"`);
    const audit = await waitFor('the late outcome in the audit log', () => {
      const text = readFileSync(join(rig.home, 'audit.jsonl'), 'utf8');
      return lateRecord.test(text) ? text : undefined;
    }).catch(() => readFileSync(join(rig.home, 'audit.jsonl'), 'utf8'));
    assert.match(audit, lateRecord);

    const replayed = await call('placeOrder', {}, 'order-1');
    assert.equal(replayed.isError, false, replayed.text);
    assert.match(replayed.text, /done earlier \(same idempotencyKey\): not run again\.\n[\s\S]*order placed/);
    assert.equal((await calls()).filter(([name]) => name === 'placeOrder').length, 1);
  });

  test('a retried write with the same key gets the earlier outcome and runs once; another key asks again', async () => {
    const first = call('addToCart', { sku: 'KEY', qty: 2 }, 'cart-1');
    await pendingShown();
    await popup.locator('#pending .approve').first().click();
    assert.match((await first).text, /added 2 x KEY/);
    const retried = await call('addToCart', { sku: 'KEY', qty: 2 }, 'cart-1');
    assert.match(retried.text, /done earlier \(same idempotencyKey\): not run again\.\n[\s\S]*added 2 x KEY/);
    assert.equal(await popup.locator('#pending .approval').count(), 0);
    assert.equal((await calls()).filter(([, input]) => input.sku === 'KEY').length, 1);
    // A key names one call: with other arguments or another tool it is refused, and the first outcome not handed on.
    for (const [tool, args] of [
      ['addToCart', { sku: 'KEY', qty: 3 }],
      ['placeOrder', {}],
    ] as const) {
      const reused = await call(tool, args, 'cart-1');
      assert.ok(reused.isError, reused.text);
      assert.match(reused.text, /bad_input: The idempotency key "cart-1" was given to another call/);
      assert.doesNotMatch(reused.text, /added 2 x KEY/);
    }
    assert.equal(await popup.locator('#pending .approval').count(), 0);
    assert.equal((await calls()).filter(([name]) => name === 'placeOrder').length, 1, 'nothing more ran');

    const other = call('addToCart', { sku: 'KEY', qty: 2 }, 'cart-2');
    await pendingShown();
    await popup.locator('#pending .deny').first().click();
    assert.ok((await other).isError);
    const bad = await call('addToCart', { sku: 'KEY', qty: 2 }, 'x'.repeat(201));
    assert.match(bad.text, /bad_input: "idempotencyKey" must be a string of 1 to 200 printable characters/);
  });

  test('SIGTERM: calls in flight are answered "relay stopping, outcome unknown", a waiting question withdrawn', async () => {
    const running = settled(call('hang'));
    await waitFor('the page to run hang', async () => (await calls()).some(([name]) => name === 'hang'));
    const asking = settled(call('addToCart', { sku: 'STOP', qty: 1 }));
    await pendingShown();
    const stopped = rig.relay.stop();
    const [ran, asked] = await within(
      'the answers of the calls in flight',
      Promise.all([running, asking]),
      8000,
    );
    assert.ok(ran.isError);
    assert.match(
      ran.text,
      /task-\w+: The relay is stopping while task-\w+ runs in the browser\. The outcome is unknown/,
    );
    assert.ok(asked.isError);
    assert.match(asked.text, /The relay is stopping; nothing was run/);
    await stopped;
    await withdrawnSays(/addToCart .*The relay is stopping/);
    assert.ok(!(await calls()).some(([, input]) => input.sku === 'STOP'));
  });
});
