// Makes docs/popup.png for the README: the real extension popup, paired with a real relay, sharing the
// fixture shop, with one call done and one write waiting for approval. Run: npx tsx scripts/popupScreenshot.ts

import { fileURLToPath } from 'node:url';
import { startWebmcpSite } from '../test/fixtures/webmcpSite.ts';
import { callTool, openAndShare, startRig, waitForTools } from '../test/helpers/webmcpRig.ts';

const site = await startWebmcpSite();
const rig = await startRig({ webmcp: true });
try {
  const { popup } = await openAndShare(rig, site.url('127.0.0.1', '/shop'), true);
  await waitForTools(rig.agent, (text) => text.includes('addToCart'));
  const origin = site.url('127.0.0.1', '').replace(/\/$/, '');
  await callTool(rig.agent, 'callSiteTool', {
    site: origin,
    tool: 'searchProducts',
    arguments: { query: 'wool socks' },
  });
  const waiting = callTool(rig.agent, 'callSiteTool', {
    site: origin,
    tool: 'addToCart',
    arguments: { sku: 'SOCK-42', qty: 2 },
  });
  await popup.locator('#pending .approval').waitFor();
  await popup.setViewportSize({ width: 404, height: 560 });
  await popup.waitForTimeout(1200);
  const out = fileURLToPath(new URL('../docs/popup.png', import.meta.url));
  await popup.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);
  await popup.locator('#pending .deny').click();
  await waiting;
} finally {
  await rig.close();
  await site.close();
}
