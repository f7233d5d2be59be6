// Human-verified approvals (issue 31), end to end: `tabward approvals enroll` registers a passkey from a real
// Chromium with a virtual authenticator (CDP WebAuthn domain); `tabward mcp --human-verified` then takes an approval
// of a sensitive write only from that question's page with an assertion that verified the user. `tabward
// approvals approve`, a form elicitation "approve", a page post without an assertion, a forged one and an
// authenticator that does not verify the user all leave the question open and the write undone.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, type CDPSession, chromium, type Page } from 'playwright-core';
import { findChrome } from '../../src/browser/findChrome.ts';
import { inboxOf } from '../helpers/approvalInbox.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { binPath, startMcp } from '../helpers/mcpClient.ts';
import { runCli } from '../helpers/runCli.ts';
import { waitFor, within } from '../helpers/waitFor.ts';

describe('human-verified approvals', { timeout: 240_000 }, () => {
  let home = '';
  let site: Fixture;
  let browser: Browser;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId = '';
  const vaultGets = () => site.seen.filter((request) => request.path === '/settings/vault').length;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'tabward-passkey-'));
    site = await startFixture(
      { 'GET /settings/vault': (_req, _body, res) => html(res, '<title>Vault</title>Vault') },
      { tls: true },
    );
    browser = await chromium.launch({ executablePath: findChrome(), headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage();
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }));
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    rmSync(home, { recursive: true, force: true });
  });

  test('without a passkey, --human-verified refuses to start and says how to enroll', async () => {
    const started = await runCli(['mcp', '--human-verified'], { TABWARD_HOME: home });
    assert.equal(started.code, 2, started.stderr);
    assert.match(
      started.stderr,
      /--human-verified needs a passkey, and .* has none\. Enroll one first: tabward approvals enroll\./,
    );
  });

  test('tabward approvals enroll registers the passkey of the browser that opens its page', async () => {
    const enrol: ChildProcess = spawn(process.execPath, [binPath, 'approvals', 'enroll', '--timeout', '60'], {
      env: { ...process.env, TABWARD_HOME: home },
    });
    let out = '';
    enrol.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => enrol.once('exit', resolve));
    const url = await waitFor(
      'the enrolment address',
      () => /(http:\/\/localhost:\d+\/enroll\/\S+\/)/.exec(out)?.[1],
    );
    await page.goto(url);
    await page.click('#enroll');
    await waitFor('enrolled on the page', async () =>
      /^Enrolled\./.test((await page.textContent('#status')) ?? ''),
    );
    assert.equal(await within('the command to end', exited), 0);
    assert.match(out, /Enrolled passkey \S+… in /);
    const file = join(home, 'passkeys.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { passkeys: { id: string; publicKey: string }[] };
    assert.equal(saved.passkeys.length, 1);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(
      credentials[0]?.credentialId.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'),
      saved.passkeys[0]?.id,
    );
  });

  test('only the passkey, with the user verified, on the question’s page approves; nothing else does', async () => {
    const mcp = await startMcp({
      args: ['--mode', 'isolated', '--human-verified', '--approval-wait', '60'],
      // The client's own form: a hook could answer "approve" here for nobody.
      elicitation: {
        capability: { form: {} },
        answer: async () => ({ action: 'accept', content: { decision: 'approve' } }),
      },
      env: { TABWARD_HOME: home },
    });
    try {
      const before = vaultGets();
      const opening = mcp.client.callTool(
        { name: 'new_page', arguments: { url: site.url('github.com', '/settings/vault') } },
        undefined,
        { timeout: 120_000 },
      );
      const human = inboxOf(home);
      const question = await human.question('new_page');
      const url = question.pageUrl ?? '';
      // The form's "approve" was refused: the question is still open.
      await new Promise((done) => setTimeout(done, 500));
      assert.deepEqual(
        (await human.questions()).map((q) => q.id),
        [question.id],
      );
      // tabward approvals cannot approve it either, and says where it can be.
      const cli = await runCli(['approvals', 'approve', question.id], { TABWARD_HOME: home });
      assert.notEqual(cli.code, 0);
      assert.match(cli.stderr, /needs a human-verified approval: approve it on its page with your passkey/);
      // Nor a post to the page without an assertion, or with a made-up one.
      const post = (body: object) =>
        fetch(`${url}decide`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ decision: { choice: 'approve' }, ...body }),
        });
      assert.equal((await post({})).status, 403);
      await fetch(`${url}challenge`);
      const forged = await post({
        assertion: {
          id: 'AAAA',
          rawId: 'AAAA',
          type: 'public-key',
          response: {},
          clientExtensionResults: {},
        },
      });
      assert.equal(forged.status, 403);
      assert.match(
        ((await forged.json()) as { error: string }).error,
        /not approved: not an enrolled passkey/,
      );
      // The passkey without the user verified: refused.
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
      await page.goto(url);
      await page.getByRole('button', { name: 'Approve with passkey' }).click();
      await waitFor('the refusal on the page', async () =>
        /^Not approved/.test((await page.textContent(`#msg-${question.id}`)) ?? ''),
      );
      assert.equal(vaultGets(), before, 'nothing ran');
      assert.deepEqual(
        (await human.questions()).map((q) => q.id),
        [question.id],
      );
      // The person, verified: approved, and it runs once.
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
      await page.getByRole('button', { name: 'Approve with passkey' }).click();
      const result = await within('the approved call', opening);
      assert.ok(!result.isError, JSON.stringify(result.content));
      assert.equal(vaultGets(), before + 1);
      const audit = readFileSync(mcp.auditPath, 'utf8');
      assert.match(audit, /"approver":"the approval page"/);
      assert.match(
        audit,
        /"tool":"\(approval\)".*approval \(approve\) through elicitation of question [a-z2-9]{4} was refused: it needs a human-verified approval/,
      );
      assert.match(
        audit,
        /approval \(approve\) through tabward approvals of question [a-z2-9]{4} was refused/,
      );
    } finally {
      await mcp.close();
    }
  });
});
