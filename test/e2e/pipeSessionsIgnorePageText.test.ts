// What a page puts in what the browser tells over the pipe (titles, URLs, console text) shaped like the tail of a
// message for one of tabward's own pipe sessions (browser/pipeSession.ts sessionOf: `"sessionId":"…"}` at the end)
// never makes a message of Playwright's taken for tabward's and lost (Playwright would hang or assert). Found
// holding by an attack review; kept as a regression test.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { within } from '../helpers/waitFor.ts';

describe('page text shaped like a pipe session message', () => {
  let site: Fixture;
  let tw: InProcessBrowser;
  let mcp: InProcessMcp;
  before(async () => {
    const shaped = '","sessionId":"0123456789ABCDEF0123456789ABCDEF"}';
    site = await startFixture({
      '/shaped': (_req, _body, res) =>
        html(
          res,
          `<title>x${shaped}</title><p>shaped</p><script>
          const s = ${JSON.stringify(shaped)};
          setInterval(() => { console.log(s); document.title = 'x' + s; fetch('/api?' + s).catch(() => {}); }, 20);
          </script>`,
        ),
      '/api': (_req, _body, res) =>
        void res.writeHead(200, { 'x-sessionid': '"}' }).end('{"sessionId":"AAAA"}'),
    });
    tw = await startInProcess({ tools: ['core', 'devtools'] });
    mcp = await tw.connect();
    mcp.human.policy = () => ({ decision: 'approve' });
  });
  after(async () => {
    await mcp?.close();
    await tw?.close();
    await site?.close();
  });

  test('tools keep answering', async () => {
    await within('new_page', mcp.call('new_page', { url: site.url('blog.example', '/shaped') }), 20_000);
    for (let i = 0; i < 5; i++) {
      const snap = await within('take_snapshot', mcp.call('take_snapshot'), 20_000);
      assert.match(snap.text, /shaped/);
      await within('list_pages', mcp.call('list_pages'), 20_000);
    }
    const again = await within(
      'navigate_page',
      mcp.call('navigate_page', { url: site.url('docs.example', '/shaped') }),
      20_000,
    );
    assert.equal(again.isError, false, again.text);
  });
});
