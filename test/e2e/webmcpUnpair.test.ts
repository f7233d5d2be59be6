// Unpairing revokes, and one socket speaks for one browser: tried as an attacker who holds a copy of a paired
// browser's credential, and as another paired browser of the same workspace, against the real relay process
// and the real extension in Chromium. A copy of the credential opening its own socket while the browser is
// connected is refused (the browser's popup says so) and the calls go on running in the real page; another
// browser's forged approval and outcome for a call it was never sent change nothing and are audited as
// ignored; Unpair in the popup kills the credential at the relay (tickets 401, a ticket taken before refused,
// the sites gone from the agents' list), and says how to revoke it there when the relay cannot be told;
// `tabward relay browsers revoke` does the same for a browser that is gone, its live socket closed the next
// time it speaks; a socket that stopped answering gives way to its browser's new one.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import WebSocket from 'ws';
import { bundledExtensionId, type RelayToExtension } from '../../src/protocol/siteTools.ts';
import { startWebmcpSite } from '../fixtures/webmcpSite.ts';
import type { Fixture } from '../helpers/fixtureServer.ts';
import { runCli } from '../helpers/runCli.ts';
import { waitFor } from '../helpers/waitFor.ts';
import {
  callTool,
  openAndShare,
  pairInPopup,
  pairingCode,
  type Rig,
  startRelayProcess,
  startRig,
  waitForTools,
} from '../helpers/webmcpRig.ts';

const extensionOrigin = `chrome-extension://${bundledExtensionId}`;

interface OpenSocket {
  readonly socket: WebSocket;
  readonly closed: Promise<number>;
  readonly messages: RelayToExtension[];
}

function post(relayUrl: string, path: string, credential?: string, body: unknown = {}): Promise<Response> {
  return fetch(`${relayUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      origin: extensionOrigin,
      ...(credential ? { authorization: `Bearer ${credential}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** The relay's answer to a ticket request: the ticket, or the status and error. */
async function ticketFor(
  relayUrl: string,
  credential: string,
): Promise<{ status: number; ticket?: string; error?: string }> {
  const response = await post(relayUrl, '/ticket', credential);
  return { status: response.status, ...((await response.json()) as { ticket?: string; error?: string }) };
}

/** Pairs a browser the way the extension does, over HTTP: its credential and id. */
async function pairOverHttp(rig: Rig): Promise<{ credential: string; browser: string }> {
  const response = await post(rig.relay.url, '/pair', undefined, { code: await pairingCode(rig.db, 'team') });
  assert.equal(response.status, 200);
  return (await response.json()) as { credential: string; browser: string };
}

/** Opens the extension socket with a fresh ticket, as a copy of the credential would. */
async function openSocket(
  relayUrl: string,
  credential: string,
  options: { autoPong?: boolean } = {},
): Promise<OpenSocket> {
  const { ticket } = await ticketFor(relayUrl, credential);
  assert.ok(ticket, 'the credential gets a ticket');
  const socket = new WebSocket(`${relayUrl.replace('http', 'ws')}/extension?ticket=${ticket}`, {
    headers: { origin: extensionOrigin },
    autoPong: options.autoPong ?? true,
  });
  const messages: RelayToExtension[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as RelayToExtension));
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
  });
  return { socket, closed, messages };
}

function within<T>(what: string, promise: Promise<T>, ms = 10_000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)),
  ]);
}

function auditOf(rig: Rig): string {
  return readFileSync(join(rig.home, 'audit.jsonl'), 'utf8');
}

const shopTools = [{ name: 'read', description: 'r', inputSchema: { type: 'object' }, readOnly: true }];

describe('a copy of a connected browser’s credential, and another browser of the workspace', () => {
  let site: Fixture;
  let rig: Rig;
  let shop: Page;
  let popup: Page;
  let shopOrigin: string;
  let credential: string;
  let browserId: string;

  const stored = async (): Promise<{ credential?: string; browserId?: string }> => {
    const worker = rig.context.serviceWorkers().find((w) => w.url().includes(bundledExtensionId));
    assert.ok(worker, 'the extension’s service worker runs');
    return (await worker.evaluate("chrome.storage.local.get(['credential', 'browserId'])")) as {
      credential?: string;
      browserId?: string;
    };
  };
  const shopCalls = async (): Promise<[string, Record<string, unknown>][]> =>
    (await shop.evaluate('window.calls')) as [string, Record<string, unknown>][];

  before(async () => {
    site = await startWebmcpSite();
    rig = await startRig({ webmcp: true });
    const shopUrl = site.url('127.0.0.1', '/shop');
    shopOrigin = new URL(shopUrl).origin;
    ({ page: shop, popup } = await openAndShare(rig, shopUrl, true));
    await shop.waitForFunction('window.ready');
    await waitForTools(rig.agent, (text) => text.includes('addToCart'));
    const pairing = await stored();
    credential = pairing.credential ?? '';
    browserId = pairing.browserId ?? '';
    assert.match(credential, /^twe_/);
    assert.match(browserId, /^ext-/, 'the extension keeps the id the relay knows it by');
  });
  after(async () => {
    await rig?.close();
    await site?.close();
  });

  test('a second socket with the credential is refused while the browser is connected; its popup says so; calls still run in the page', async () => {
    const copy = await openSocket(rig.relay.url, credential);
    assert.equal(await within('the copy to be closed', copy.closed), 4409, 'closed as "taken"');
    await popup
      .locator('#alerts .alert', { hasText: 'Another connection to the relay used this browser' })
      .waitFor({ timeout: 10_000 });
    const result = await callTool(rig.agent, 'callSiteTool', {
      site: shopOrigin,
      tool: 'searchProducts',
      arguments: { query: 'still-mine' },
    });
    assert.match(result.text, /3 results for still-mine/);
    assert.ok(
      (await shopCalls()).some(([, input]) => input.query === 'still-mine'),
      'the real page ran it',
    );
    assert.match(
      rig.relay.stderr(),
      new RegExp(`browser ${browserId} .*a second connection claimed .*refused`),
    );
    assert.match(
      auditOf(rig),
      new RegExp(`"tool":"\\(browser\\)".*"browser":"${browserId}".*"outcome":"blocked"`),
    );
  });

  test('another paired browser of the workspace cannot approve or answer a call sent to this one', async () => {
    const other = await pairOverHttp(rig);
    const intruder = await openSocket(rig.relay.url, other.credential);
    intruder.socket.send(JSON.stringify({ t: 'sites', sites: [] }));
    // The activity feed names each task to every browser of the workspace: the intruder answers as soon as it
    // sees the write waiting, approving it and claiming it ran.
    intruder.socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as RelayToExtension;
      if (message.t !== 'activity') return;
      for (const entry of message.entries)
        if (entry.tool === 'addToCart') {
          intruder.socket.send(JSON.stringify({ t: 'decision', taskId: entry.taskId, decision: 'approved' }));
          intruder.socket.send(
            JSON.stringify({
              t: 'outcome',
              taskId: entry.taskId,
              outcome: { ok: true, result: 'forged: done' },
            }),
          );
        }
    });
    const call = callTool(rig.agent, 'callSiteTool', {
      site: shopOrigin,
      tool: 'addToCart',
      arguments: { sku: 'FORGED', qty: 1 },
    });
    await popup.locator('#pending .approval', { hasText: 'addToCart' }).waitFor({ timeout: 10_000 });
    const forged = await waitFor(
      'the intruder’s outcome to be logged as ignored',
      () =>
        /browser (ext-\w+) sent an outcome for (task-\w+), a call (?:it was never sent|sent to browser (ext-\w+)): ignored/.exec(
          rig.relay.stderr(),
        ) ?? undefined,
    );
    assert.equal(forged[1], other.browser);
    // Sent while the human is still asked: the call went to no browser yet (else to this one).
    assert.ok(forged[3] === undefined || forged[3] === browserId, forged[0]);
    assert.equal(
      await popup.locator('#pending .approval').count(),
      1,
      'the question still waits for the human',
    );
    await popup.locator('#pending .approval', { hasText: 'addToCart' }).locator('.deny').click();
    const result = await call;
    assert.ok(result.isError, result.text);
    assert.doesNotMatch(result.text, /forged/);
    assert.ok(!(await shopCalls()).some(([, input]) => input.sku === 'FORGED'), 'nothing ran in the page');
    assert.match(
      auditOf(rig),
      new RegExp(`"task":"${forged[2]}".*"browser":"${other.browser}".*"outcome":"blocked"`),
    );
    intruder.socket.close();
  });

  test('Unpair in the popup revokes at the relay: its tickets are refused, one taken before too, its sites leave the list', async () => {
    const takenBefore = await ticketFor(rig.relay.url, credential);
    assert.ok(takenBefore.ticket);
    await popup.click('#unpair');
    await popup.locator('#pairing').waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(await popup.locator('#error').textContent(), '', 'the relay confirmed');
    const refused = await ticketFor(rig.relay.url, credential);
    assert.equal(refused.status, 401);
    assert.match(
      refused.error ?? '',
      new RegExp(`This browser \\(${browserId}\\) was unpaired.*pair again`, 'is'),
    );
    const late = new WebSocket(
      `${rig.relay.url.replace('http', 'ws')}/extension?ticket=${takenBefore.ticket}`,
      {
        headers: { origin: extensionOrigin },
      },
    );
    const status = await new Promise<number>((resolve) => {
      late.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      late.once('open', () => resolve(101));
    });
    assert.equal(status, 401, 'a ticket issued before unpairing opens nothing');
    await waitForTools(rig.agent, (text) => !text.includes(shopOrigin), 5000);
    const gone = await callTool(rig.agent, 'callSiteTool', {
      site: shopOrigin,
      tool: 'searchProducts',
      arguments: { query: 'after-unpair' },
    });
    assert.ok(gone.isError);
    assert.match(gone.text, /is not shared with workspace "team"/);
    const listed = await runCli(['relay', 'browsers', 'list', '--db', rig.db], {});
    assert.match(listed.stdout, new RegExp(`${browserId}  team  paired \\S+  REVOKED`));
    assert.deepEqual(await stored(), {}, 'the extension forgot the credential');
  });

  test('Unpair while the relay cannot be told: forgotten here, and the popup names the command that revokes it there', async () => {
    await pairInPopup(popup, rig.relay.url, await pairingCode(rig.db, 'team'));
    const again = await stored();
    const port = rig.relay.port;
    await rig.relay.stop();
    await popup.click('#unpair');
    await popup
      .locator('#error', { hasText: `tabward relay browsers revoke ${again.browserId}` })
      .waitFor({ timeout: 15_000 });
    assert.match((await popup.locator('#error').textContent()) ?? '', /could not be told .*still works/);
    assert.deepEqual(await stored(), {});
    rig.relay = await startRelayProcess(rig.db, [], port);
    assert.equal((await ticketFor(rig.relay.url, again.credential ?? '')).status, 200, 'as the popup said');
    const revoked = await runCli(['relay', 'browsers', 'revoke', again.browserId ?? '', '--db', rig.db], {});
    assert.match(revoked.stdout, /^Revoked ext-/);
    assert.equal((await ticketFor(rig.relay.url, again.credential ?? '')).status, 401);
  });
});

describe('revoking a browser that is gone, and a socket that stopped answering', () => {
  let rig: Rig;

  before(async () => {
    rig = await startRig({ webmcp: false });
  });
  after(async () => {
    await rig?.close();
  });

  test('tabward relay browsers revoke: tickets refused at once, the site leaves the list, the live socket closes when it speaks', async () => {
    const ghost = await pairOverHttp(rig);
    const link = await openSocket(rig.relay.url, ghost.credential);
    link.socket.send(
      JSON.stringify({
        t: 'sites',
        sites: [
          { origin: 'https://ghost.example', url: 'https://ghost.example/', tools: shopTools, openTabs: 1 },
        ],
      }),
    );
    await waitForTools(rig.agent, (text) => text.includes('ghost.example'));
    const revoked = await runCli(['relay', 'browsers', 'revoke', ghost.browser, '--db', rig.db], {});
    assert.match(revoked.stdout, new RegExp(`Revoked ${ghost.browser}`));
    // Another process wrote the file: the running relay reads it on the next request, no restart.
    assert.doesNotMatch((await callTool(rig.agent, 'listSiteTools')).text, /ghost\.example/);
    assert.equal((await ticketFor(rig.relay.url, ghost.credential)).status, 401);
    link.socket.send(JSON.stringify({ t: 'ping' }));
    assert.equal(await within('the revoked socket to close', link.closed), 4401);
    const again = await runCli(['relay', 'browsers', 'revoke', ghost.browser, '--db', rig.db], {});
    assert.notEqual(again.code, 0);
    assert.match(
      again.stderr,
      /No paired browser with id ext-\w+ \(or it is revoked already\).*browsers list/s,
    );
    assert.match(auditOf(rig), new RegExp(`"tool":"\\(browser\\)".*"browser":"${ghost.browser}".*revoked`));
  });

  test('a socket whose peer stopped answering pings gives way to its browser’s new socket', async () => {
    const laptop = await pairOverHttp(rig);
    const asleep = await openSocket(rig.relay.url, laptop.credential, { autoPong: false });
    const woke = await openSocket(rig.relay.url, laptop.credential);
    assert.notEqual(await within('the silent socket to be dropped', asleep.closed), 4409);
    woke.socket.send(
      JSON.stringify({
        t: 'sites',
        sites: [
          { origin: 'https://laptop.example', url: 'https://laptop.example/', tools: shopTools, openTabs: 1 },
        ],
      }),
    );
    await waitForTools(rig.agent, (text) => text.includes('laptop.example'));
    assert.equal(woke.socket.readyState, WebSocket.OPEN, 'the new socket speaks for the browser');
    woke.socket.close();
  });
});
