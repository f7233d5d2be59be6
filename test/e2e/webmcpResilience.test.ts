// The WebMCP bridge when things move underneath it: a site whose tools come from the @mcp-b/global polyfill
// (no native WebMCP: the MAIN-world observer attaches late), the extension's service worker stopped by the
// browser and woken again, and the relay restarted (the extension reconnects with backoff).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startWebmcpSite } from '../fixtures/webmcpSite.ts';
import type { Fixture } from '../helpers/fixtureServer.ts';
import {
  callTool,
  connectAgent,
  openAndShare,
  popupUrl,
  type Rig,
  startRelayProcess,
  startRig,
  waitForTools,
} from '../helpers/webmcpRig.ts';

describe('WebMCP bridge, polyfilled site (observer path)', () => {
  let site: Fixture;
  let rig: Rig;
  let page: Page;
  let popup: Page;
  let origin: string;
  const call = (tool: string, args: Record<string, unknown> = {}) =>
    callTool(rig.agent, 'callSiteTool', { site: origin, tool, arguments: args });

  before(async () => {
    site = await startWebmcpSite();
    rig = await startRig({ webmcp: false });
    origin = site.url('127.0.0.1', '').replace(/\/$/, '');
    ({ page, popup } = await openAndShare(rig, site.url('127.0.0.1', '/poly'), true));
    // Shared while open: without native WebMCP its tools show from the next load (the popup says so).
    await popup.locator('#site-tools', { hasText: 'reload this tab' }).waitFor({ timeout: 5000 });
    await page.reload();
  });
  after(async () => {
    await rig?.close();
    await site?.close();
  });

  test('the polyfill installed after document_start is found; its tools list and run', async () => {
    assert.equal(
      await page.evaluate('typeof navigator.modelContextTesting'),
      'object',
      'the polyfill, not native',
    );
    const list = await waitForTools(
      rig.agent,
      (text) => text.includes('addToCart') && text.includes('searchProducts'),
    );
    assert.match(list, /searchProducts \(read-only\)/);
    const result = await call('searchProducts', { query: 'wool' });
    assert.match(result.text, /3 results for wool/);
  });

  test('a write through the polyfill waits for approval, and a withdrawn tool fails its call at once', async () => {
    const write = call('addToCart', { sku: 'P1', qty: 3 });
    await popup.locator('#pending .approve').click({ timeout: 10_000 });
    assert.match((await write).text, /added 3 x P1/);

    const order = call('placeOrder');
    await popup.locator('#pending .approve').click({ timeout: 10_000 });
    await page.waitForFunction('window.calls.some((c) => c[0] === "placeOrder")', null, { timeout: 5000 });
    await page.evaluate('window.withdraw("placeOrder")');
    const failed = await order;
    assert.ok(failed.isError);
    assert.match(failed.text, /withdrew "placeOrder" during the call\. The outcome is unknown/);
  });

  test('re-registering a name through the polyfill replaces it', async () => {
    await page.evaluate('window.reregister()');
    await waitForTools(rig.agent, (text) => text.includes('(v2)'));
    const write = call('addToCart', { sku: 'P2', qty: 1 });
    await popup.locator('#pending .approve').click({ timeout: 10_000 });
    assert.match((await write).text, /v2 added P2/);
  });
});

describe('WebMCP bridge, service worker and relay restarts', () => {
  let site: Fixture;
  let rig: Rig;
  let origin: string;

  before(async () => {
    site = await startWebmcpSite();
    rig = await startRig({ webmcp: true });
    origin = site.url('127.0.0.1', '').replace(/\/$/, '');
    await openAndShare(rig, site.url('127.0.0.1', '/shop'), true);
    await waitForTools(rig.agent, (text) => text.includes('searchProducts'));
  });
  after(async () => {
    await rig?.close();
    await site?.close();
  });

  const search = (query: string) =>
    callTool(rig.agent, 'callSiteTool', { site: origin, tool: 'searchProducts', arguments: { query } });

  test('a stopped service worker: calls fail clearly, and work again once it wakes', async () => {
    const page = await rig.context.newPage();
    const cdp = await rig.context.newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    // A call racing the socket's close gets "disconnected during task-…. The outcome is unknown"; once the relay
    // knows, every call gets "not connected" at once. On a loaded machine an extension event can wake the
    // worker again between two calls: then it is stopped again (a few times at most).
    const notConnected = /No browser of workspace "team" is connected/;
    const stoppedListing = /^http:\/\/127\.0\.0\.1:\d+ \(its browser is not connected now\)$/m;
    let listed = '';
    for (let attempt = 0; attempt < 5 && !stoppedListing.test(listed); attempt++) {
      await cdp.send('ServiceWorker.stopAllWorkers');
      let down = await search('while stopped');
      for (let i = 0; i < 30 && down.isError && !notConnected.test(down.text); i++) {
        assert.match(
          down.text,
          /not connected|disconnected during task-\w+(\. The outcome is unknown|; nothing was run)/,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
        down = await search('while stopped');
      }
      // Woken again before the relay saw it go (the call then ran, as it should): stopped again.
      if (!down.isError) continue;
      assert.match(down.text, notConnected);
      listed = (await callTool(rig.agent, 'listSiteTools')).text;
    }
    assert.match(listed, stoppedListing);
    // Any extension event wakes it; here the popup. The shop's document is remembered across the restart.
    await page.goto(popupUrl);
    let up = await search('after wake');
    for (let i = 0; i < 50 && up.isError; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      up = await search('after wake');
    }
    assert.match(up.text, /3 results for after wake/);
  });

  test('the relay restarted on the same port and database: the extension reconnects by itself', async () => {
    const port = rig.relay.port;
    await rig.agent.close();
    await rig.relay.stop();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    rig.relay = await startRelayProcess(rig.db, [], port);
    const agent = await connectAgent(rig.relay.url, rig.token);
    try {
      let result = await callTool(agent, 'callSiteTool', {
        site: origin,
        tool: 'searchProducts',
        arguments: { query: 'back' },
      });
      const started = Date.now();
      while (result.isError && Date.now() - started < 35_000) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        result = await callTool(agent, 'callSiteTool', {
          site: origin,
          tool: 'searchProducts',
          arguments: { query: 'back' },
        });
      }
      assert.match(result.text, /3 results for back/);
    } finally {
      await agent.close();
    }
  });
});
