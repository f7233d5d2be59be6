// A browser tabward starts sends nothing of its own about the pages the agent reads: Chromium's form-prediction
// queries (content-autofill.googleapis.com, one a page with a form) and its network-time pings are switched off
// (browserConnections.ts withOwnBrowserFeatures). Seen here through the audit: after a sensitive read the choke point
// refuses, and records, any request to another host, so a query the browser made would be an (egress) event of the
// session. What cannot be switched off (its sign-in check) is named in the audit as the browser's own.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { formatAuditEntry } from '../../src/audit/auditLog.ts';
import type { AuditEntry } from '../../src/core/audit.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { waitFor } from '../helpers/waitFor.ts';

const signupForm = `<title>Sign up</title><form action="/signup" method="post">
  <label>First name <input name="first_name" autocomplete="given-name"></label>
  <label>Last name <input name="last_name" autocomplete="family-name"></label>
  <label>Email <input type="email" name="email" autocomplete="email"></label>
  <label>Street <input name="street" autocomplete="address-line1"></label>
  <label>City <input name="city" autocomplete="address-level2"></label>
  <label>Phone <input type="tel" name="phone" autocomplete="tel"></label>
  <button>Create account</button></form>`;

describe("a browser of tabward's own", () => {
  let site: Fixture;
  let browser: InProcessBrowser;
  let mcp: InProcessMcp;

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, '<title>Tokens</title><p>ghp_quietToken271</p>'),
        '/signup': (_req, _body, res) => html(res, signupForm),
      },
      { tls: true },
    );
    browser = await startInProcess();
    mcp = await browser.connect();
  });
  after(async () => {
    await mcp?.close();
    await browser?.close();
    await site?.close();
  });

  test('asks no form predictions of Google for the pages the agent reads', async () => {
    mcp.human.policy = () => ({ decision: 'approve' });
    const read = await mcp.call('navigate_page', { url: site.url('github.com', '/settings/tokens') });
    assert.ok(!read.isError, read.text);
    for (const shop of ['shop.example', 'store.example', 'market.example']) {
      const page = await mcp.call('navigate_page', { url: site.url(shop, '/signup') });
      assert.ok(!page.isError, page.text);
      assert.match((await mcp.call('take_snapshot')).text, /Create account/);
    }
    // The queries go out as the forms are parsed; give the browser time to make them.
    await new Promise((done) => setTimeout(done, 1_500));
    const egress = mcp
      .audit()
      .filter((record) => record.tool === '(egress)')
      .map((record) => JSON.stringify(record));
    const ownTraffic = egress.filter((line) => /content-autofill|clients2\.google\.com\/time/.test(line));
    assert.deepEqual(ownTraffic, [], egress.join('\n'));
  });

  test("names the browser's own sign-in check in the audit, not as a page's request", async () => {
    const signIn = () =>
      mcp
        .audit()
        .find(
          (record): record is AuditEntry =>
            record.tool === '(egress)' && 'url' in record && /\/ListAccounts/.test(record.url ?? ''),
        );
    const record = await waitFor('the browser’s sign-in check in the audit', signIn, { timeoutMs: 10_000 });
    const line = formatAuditEntry(record);
    assert.match(line, /\(egress\) https:\/\/accounts\.google\.com\/ListAccounts\S* block blocked/);
    assert.match(
      line,
      / — the address of Chromium's own Google sign-in check, which the browser sends as it starts/,
    );
  });
});
