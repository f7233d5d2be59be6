// Site grants through the real MCP SDK client (in process, elicitation answered by the scripted human), one
// Chromium for the file. With --policy strict every write asks, as in your Chrome: a site grant given for fill on
// one origin lets the next fills there run unasked (audited as the grant's), while another origin, a frame of
// another origin and a sensitive page of the same origin still ask; the grant expires (the test's clock), is
// listed in browser_status, is revoked through the revoke choice, and a mode switch clears it.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { type CallOutcome, refOf } from '../helpers/mcpClient.ts';

const notesPage = '<title>Notes</title><label>Note <input name="note"></label>';
const accountPage = '<title>Account</title><label>Memo <input name="memo"></label>';

let site: Fixture;
let tw: InProcessBrowser;
let now = Date.now();
const shop = (path: string) => site.url('shop.test', path);
const other = (path: string) => site.url('other.test', path);

before(async () => {
  site = await startFixture({
    'GET /form': (_req, _body, res) => html(res, notesPage),
    'GET /account/': (_req, _body, res) => html(res, accountPage),
    'GET /framed': (_req, _body, res) =>
      html(res, `<title>Framed</title><iframe src="${other('/form')}"></iframe>`),
  });
  tw = await startInProcess({ rules: ['*://shop.test/account/*'] });
});
after(async () => {
  await tw?.close();
  await site?.close();
});

async function succeeds(call: Promise<CallOutcome>): Promise<CallOutcome> {
  const outcome = await call;
  assert.ok(!outcome.isError, outcome.text);
  return outcome;
}

/** Opens `url` in a new tab and answers the ref of the field labelled `label`. */
async function fieldOn(mcp: InProcessMcp, url: string, label: string): Promise<string> {
  await succeeds(mcp.call('new_page', { url }));
  return refOf((await succeeds(mcp.call('take_snapshot'))).text, label);
}

/** The last completed audit record. */
const lastRecord = (mcp: InProcessMcp) =>
  mcp
    .audit()
    .filter((record) => record.outcome !== 'started')
    .at(-1);

describe('site grants', { timeout: 120_000 }, () => {
  test('given for fill on one origin: honoured there, asked elsewhere, listed, expired by the clock', async () => {
    const mcp = await tw.connect({ policy: 'strict', clock: () => now });
    try {
      const note = await fieldOn(mcp, shop('/form'), 'Note');
      mcp.human.will({ decision: 'site-15m' });
      await succeeds(mcp.call('fill', { ref: note, value: 'one' }));
      assert.deepEqual(mcp.human.offered.at(-1), [
        'approve',
        'approve-all',
        'approve-all-server',
        'site-15m',
        'site-1h',
        'reject',
        'skip',
        'modify',
      ]);
      const origin = new URL(shop('/')).origin;
      assert.match(mcp.human.questions.at(-1) ?? '', /Site grant available: fill on http:\/\/shop\.test:\d+/);
      assert.equal(lastRecord(mcp)?.choice, `site-grant ${origin} 15m`);

      const asked = mcp.human.questions.length;
      await succeeds(mcp.call('fill', { ref: note, value: 'two' }));
      assert.equal(mcp.human.questions.length, asked, 'covered by the grant: not asked');
      const covered = lastRecord(mcp);
      assert.ok(covered && 'decision' in covered);
      assert.equal(covered.decision, 'allow');
      assert.equal(covered.approver, 'site grant (given through elicitation)');
      assert.equal(covered.choice, `site-grant ${origin} 15m`);
      assert.match(
        (await mcp.call('browser_status')).text,
        new RegExp(`site grants: 1\\. fill on ${origin}, 15 min left \\(given through elicitation\\)`),
      );
      const hover = await mcp.call('hover', { ref: note });
      assert.ok(hover.isError, 'another tool still asks (declined)');

      // Another origin asks, and so does a frame of another origin inside the granted one (not offered there).
      const elsewhere = await fieldOn(mcp, other('/form'), 'Note');
      assert.ok((await mcp.call('fill', { ref: elsewhere, value: 'x' })).isError, 'asked and declined');
      assert.ok(mcp.human.offered.at(-1)?.includes('site-15m'), 'a grant may be given there too');
      assert.ok(mcp.human.offered.at(-1)?.includes('revoke-site-grants'), 'grants in force may be revoked');
      const framed = await fieldOn(mcp, shop('/framed'), 'Note');
      const asked2 = mcp.human.questions.length;
      assert.ok((await mcp.call('fill', { ref: framed, value: 'x' })).isError, 'asked and declined');
      assert.equal(mcp.human.questions.length, asked2 + 1);
      assert.ok(!mcp.human.offered.at(-1)?.includes('site-15m'), 'never across origins');

      // A sensitive page of the granted origin: asked, no site grant offered.
      mcp.human.will({ decision: 'approve' });
      const memo = await fieldOn(mcp, shop('/account/'), 'Memo');
      assert.ok((await mcp.call('fill', { ref: memo, value: 'x' })).isError, 'asked and declined');
      assert.match(mcp.human.questions.at(-1) ?? '', /SENSITIVE PAGE/);
      assert.deepEqual(mcp.human.offered.at(-1), [
        'approve',
        'reject',
        'skip',
        'modify',
        'revoke-site-grants',
      ]);

      // Fifteen minutes later (the test's clock): asked again.
      now += 15 * 60_000;
      const again = await fieldOn(mcp, shop('/form'), 'Note');
      const beforeExpiry = mcp.human.questions.length;
      assert.ok((await mcp.call('fill', { ref: again, value: 'late' })).isError, 'asked and declined');
      assert.equal(mcp.human.questions.length, beforeExpiry + 1, 'expired: asked again');
      assert.match((await mcp.call('browser_status')).text, /site grants: none/);
    } finally {
      await mcp.close();
    }
  });

  test('the revoke choice ends them; a mode switch clears them', async () => {
    const mcp = await tw.connect({ policy: 'strict', clock: () => now });
    try {
      const note = await fieldOn(mcp, shop('/form'), 'Note');
      mcp.human.will({ decision: 'site-1h' });
      await succeeds(mcp.call('fill', { ref: note, value: 'one' }));
      assert.match((await mcp.call('browser_status')).text, /site grants: 1\. fill on \S+, 60 min left/);
      const elsewhere = await fieldOn(mcp, other('/form'), 'Note');
      mcp.human.will({ decision: 'revoke-site-grants' });
      const revoked = await mcp.call('fill', { ref: elsewhere, value: 'x' });
      assert.match(revoked.text, /^rejected: The user revoked the site grants \(1\)/);
      assert.match((await mcp.call('browser_status')).text, /site grants: none/);

      const field = await fieldOn(mcp, shop('/form'), 'Note');
      mcp.human.will({ decision: 'site-1h' });
      await succeeds(mcp.call('fill', { ref: field, value: 'two' }));
      const granted = mcp.human.questions.length;
      await succeeds(mcp.call('fill', { ref: field, value: 'covered' }));
      assert.equal(mcp.human.questions.length, granted, 'covered before the switch');
      assert.match((await mcp.call('browser_status')).text, /site grants: 1\./);
      await succeeds(mcp.call('browser_disconnect'));
      assert.match((await mcp.call('browser_status')).text, /site grants: none/);
      const fresh = await fieldOn(mcp, shop('/form'), 'Note');
      const asked = mcp.human.questions.length;
      assert.ok((await mcp.call('fill', { ref: fresh, value: 'three' })).isError, 'asked and declined');
      assert.equal(mcp.human.questions.length, asked + 1, 'cleared by the switch: asked again');
    } finally {
      await mcp.close();
    }
  });
});
