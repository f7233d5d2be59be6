// The bundled demo's seller center as a WebMCP site, the way the README tells a user to try the bridge: log in
// through its real form, share it from the popup, and let an agent list orders (read-only, no asking) and
// refund one (waits for the popup). The demo server's own record says what really happened.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type DemoSite, startDemoSite } from '../../src/demo/demoSite.ts';
import {
  callTool,
  openPopup,
  pairInPopup,
  pairingCode,
  type Rig,
  shareInPopup,
  startRig,
  waitForTools,
} from '../helpers/webmcpRig.ts';

let demo: DemoSite;
let rig: Rig;
before(async () => {
  demo = await startDemoSite();
  rig = await startRig({ webmcp: true });
});
after(async () => {
  await rig?.close();
  await demo?.close();
});

test('log in, share, list orders freely, refund only with approval', async () => {
  const origin = `http://127.0.0.1:${demo.port}`;
  const page = await rig.context.newPage();
  await page.goto(`${origin}/portal/orders`);
  await page.fill('input[name=username]', 'alice');
  await page.fill('input[name=password]', 'demo-password');
  await page.click('button[type=submit]');
  await page.waitForURL(`${origin}/portal/orders`);
  const popup = await openPopup(rig.context, page.url());
  await pairInPopup(popup, rig.relay.url, await pairingCode(rig.db, 'team'));
  await shareInPopup(popup);
  await waitForTools(rig.agent, (text) => text.includes('listOrders') && text.includes('refundOrder'));

  const shipped = await callTool(rig.agent, 'callSiteTool', {
    site: origin,
    tool: 'listOrders',
    arguments: { status: 'shipped' },
  });
  const listed = JSON.parse(shipped.text.split('\n')[2] ?? '[]') as { id: string }[];
  assert.deepEqual(
    listed.map((order) => order.id),
    ['A-1001', 'A-1004', 'A-1007', 'A-1010'],
  );

  const malformed = await callTool(rig.agent, 'callSiteTool', {
    site: origin,
    tool: 'refundOrder',
    arguments: { order: '1002; drop' },
  });
  assert.match(malformed.text, /must match pattern/);
  const refund = callTool(rig.agent, 'callSiteTool', {
    site: origin,
    tool: 'refundOrder',
    arguments: { order: 'A-1002' },
  });
  await popup.locator('#pending .approval', { hasText: 'refundOrder' }).waitFor({ timeout: 10_000 });
  assert.deepEqual(demo.writes, [], 'nothing refunded before the human says yes');
  await popup.locator('#pending .approve').click();
  assert.match((await refund).text, /Order A-1002 refunded\./);
  assert.deepEqual(demo.writes, ['refund A-1002']);
});
