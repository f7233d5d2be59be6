// The HTTP cache stays on in tabward's own browser although the backstop routes every page (browser/keptHttpCache.ts):
// a site's scripts, styles and images are fetched once, not on every visit; what the renderer's memory cache serves
// is still listed by list_network_requests (and does not hang the call); and the cache changes nothing the backstop
// decides, since a request is judged before the cache answers it (docs/architecture.md, "The choke point").
// Assertions are on what the fixture server received and what the page saw.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, type Route, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';

const token = 'ghp_keptCacheToken2718';

describe('the HTTP cache kept on', () => {
  let site: Fixture;
  let browser: InProcessBrowser;
  let mcp: InProcessMcp;
  const url = (host: string, path: string) => site.url(host, path);
  const arrived = (host: string, path: string) =>
    site.seen.filter((request) => request.host.startsWith(`${host}:`) && request.path.startsWith(path));
  const cacheable =
    (type: string, body: string): Route =>
    (_req, _body, res) => {
      res.writeHead(200, { 'content-type': type, 'cache-control': 'public, max-age=3600' }).end(body);
    };
  // A page of the site: its shared script and style, and the same image twice (the second is the memory cache's).
  const sitePage =
    (title: string): Route =>
    (_req, _body, res) =>
      html(
        res,
        `<title>${title}</title><link rel="stylesheet" href="/asset/site.css"><script src="/asset/app.js"></script>
        <p>${title}</p><img src="/asset/logo.png" alt="logo"><img src="/asset/logo.png" alt="logo again">`,
      );

  before(async () => {
    site = await startFixture({
      '/one': sitePage('Page one'),
      '/two': sitePage('Page two'),
      '/asset/site.css': cacheable('text/css', 'p { color: green }'),
      '/asset/app.js': cacheable('text/javascript', 'window.appLoaded = true;'),
      '/asset/logo.png': cacheable(
        'image/svg+xml',
        '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>',
      ),
      '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${token}</p>`),
      '/tracker.js': cacheable('text/javascript', 'window.tracked = true;'),
      '/lure': (_req, _body, res) =>
        html(
          res,
          `<title>Lure</title><script src="${url('cdn.example', '/tracker.js')}"></script><p>lure</p>`,
        ),
    });
    browser = await startInProcess({ rules: ['*://vault.example/*'], tools: ['core', 'devtools'] });
    mcp = await browser.connect();
    // The human approves what the guard asks about actions and refuses every request tabward did not predict.
    mcp.human.policy = (message) => ({ decision: /did not predict/.test(message) ? 'reject' : 'approve' });
  });
  after(async () => {
    await mcp?.close();
    await browser?.close();
    await site?.close();
  });

  test('a site’s scripts, styles and images are fetched once for two of its pages', async () => {
    const first = await mcp.call('navigate_page', { url: url('docs.example', '/one') });
    assert.equal(first.isError, false, first.text);
    const second = await mcp.call('navigate_page', { url: url('docs.example', '/two') });
    assert.equal(second.isError, false, second.text);
    assert.match(second.text, /Page two/);
    for (const asset of ['/asset/site.css', '/asset/app.js', '/asset/logo.png']) {
      assert.equal(
        arrived('docs.example', asset).length,
        1,
        `${asset} arrived ${arrived('docs.example', asset).length} times`,
      );
    }
  });

  test('what the cache served is listed with the page’s requests', async () => {
    await mcp.call('navigate_page', { url: url('docs.example', '/one') });
    const listed = await mcp.call('list_network_requests', { pageSize: 100 });
    assert.equal(listed.isError, false, listed.text);
    for (const asset of ['/asset/site.css', '/asset/app.js', '/asset/logo.png']) {
      assert.match(listed.text, new RegExp(`GET \\S+${asset.replaceAll('.', '\\.')}`), listed.text);
    }
  });

  test('after a sensitive read, a request another site’s page had cached is still refused before the cache answers', async () => {
    await mcp.call('navigate_page', { url: url('evil.example', '/lure') });
    assert.equal(arrived('cdn.example', '/tracker.js').length, 1);
    const read = await mcp.call('navigate_page', { url: url('vault.example', '/settings/tokens') });
    assert.equal(read.isError, false, read.text);
    assert.match((await mcp.call('take_snapshot')).text, new RegExp(token));
    // The tainted agent's fetch of the cached script from another site: judged (and refused by the human) before
    // the browser's cache could answer it, so the page sees a failure, not the cached script.
    await mcp.call('navigate_page', { url: url('evil.example', '/lure') });
    const fetched = await mcp.call('evaluate_script', {
      function: `() => fetch(${JSON.stringify(url('cdn.example', '/tracker.js'))}, { mode: 'no-cors' }).then((r) => 'served ' + r.status, (e) => 'refused ' + e)`,
    });
    assert.match(fetched.text, /refused/, fetched.text);
  });
});
