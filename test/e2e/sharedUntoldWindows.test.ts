// In the user's Chrome, a window an agent tab opened does not outlive tabward's watch when Playwright has not told of
// it yet. Playwright tells of a window once its first document commits: one whose page is answered slowly was open
// and untracked when the session ended, so it was never closed, and once tabward had let the browser go it sent
// whatever it liked, judged by nobody (here, a POST into a sensitive page: 36 in 3 s). The browser-wide gate knows each
// window's opener and closes the agent's windows before it lets go (BrowserFetchGate.close). Assertions on what the
// fixture server received.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { refOf, startMcp } from '../helpers/mcpClient.ts';

let site: Fixture;
let chrome: UserChrome;

before(async () => {
  site = await startFixture(
    {
      '/open': (req, _body, res) => {
        const opener = new URL(req.url ?? '/', 'http://x').searchParams.get('opener') ?? '';
        const features = opener === 'noopener' ? 'noopener' : '';
        html(
          res,
          `<title>Offer</title><button onclick="window.open('/slow-window?from=${opener}', '_blank', '${features}')">See the offer</button>`,
        );
      },
      '/slow-window': (_req, _body, res) => {
        setTimeout(
          () =>
            html(
              res,
              `<title>Offer</title><script>setInterval(() => fetch('https://github.com:' + location.port + '/settings/delete' + location.search, { method: 'POST', mode: 'no-cors', body: 'repo' }).catch(() => {}), 50);</script>`,
            ),
          1_500,
        );
      },
    },
    { tls: true },
  );
  chrome = await startUserChrome({ chromeArgs: testChromeArgs });
});

after(async () => {
  await chrome?.close();
  await site?.close();
});

// A window opened with its opener shares the crashed tab's renderer and went with it; one with none did not.
for (const opener of ['noopener'])
  test(`a window an agent tab opened (${opener}), its page not loaded yet, is closed as the session ends`, async () => {
    const mcp = await startMcp({ args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint] });
    mcp.human.policy = () => ({ decision: 'approve' });
    const opened = await mcp.call('new_page', { url: site.url('evil.example', `/open?opener=${opener}`) });
    assert.equal(opened.isError, false, opened.text);
    const snapshot = await mcp.call('take_snapshot');
    const clicked = await mcp.call('click', { ref: refOf(snapshot.text, 'See the offer') });
    assert.equal(clicked.isError, false, clicked.text);
    await mcp.close();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const writes = site.seen.filter((request) => request.path.startsWith(`/settings/delete?from=${opener}`));
    assert.deepEqual(
      writes.map((request) => `${request.method} ${request.host}${request.path}`),
      [],
      `the window tabward left open posted into a sensitive page ${writes.length} times`,
    );
  });
