// A frame the snapshot cannot read in time (its script busy looping) must not let what it knows out through the
// rest of the page: its password values are unknown then, and before it hung it may have posted one to the page.
// The snapshot fails within a third of its deadline, saying why, rather than show the page unmasked or hang;
// shown or hidden (display:none), the frame of another site's process.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';

const value = 'busy-frame-Pw-2246';
let site: Fixture;
let tw: InProcessBrowser;
let mcp: InProcessMcp;

before(async () => {
  site = await startFixture({
    '/page': (req, _body, res) => {
      const hidden = new URL(req.url ?? '/', 'http://x').searchParams.has('hidden');
      // A site of its own for each case: a frame of the same site would share the busy frame's process.
      html(
        res,
        `<title>Top</title><h1>Top</h1><div id="sink"></div>
        <script>addEventListener('message', (e) => { const p = document.createElement('p'); p.textContent = 'Got ' + e.data; sink.append(p); });</script>
        <iframe ${hidden ? 'style="display:none"' : ''} src="${site.url(hidden ? 'hidden.test' : 'shown.test', '/busy')}"></iframe>`,
      );
    },
    // Gets its value once the test says so (as a user typing it), posts it to the page, then never answers again.
    '/busy': (_req, _body, res) =>
      html(
        res,
        `<input type="password"><script>
          addEventListener('message', () => {
            document.querySelector('input').value = '${value}';
            top.postMessage(document.querySelector('input').value, '*');
            setTimeout(() => { for (;;) {} }, 50);
          });
        </script>`,
      ),
  });
  // A short deadline: the frame's budget is a third of it.
  tw = await startInProcess({ timeoutMs: 6_000 });
  mcp = await tw.connect();
});

after(async () => {
  await mcp?.close();
  await tw?.close();
  await site?.close();
});

for (const hidden of [false, true])
  test(`a ${hidden ? 'hidden' : 'shown'} frame that hangs after posting its password fails the snapshot, unshown`, async () => {
    await mcp.call('new_page', { url: site.url('site.test', `/page${hidden ? '?hidden' : ''}`) });
    // Read once while the frame answers (its session is open), then the frame gets its value and hangs.
    const first = await mcp.call('take_snapshot');
    assert.equal(first.isError, false, first.text);
    await mcp.call('evaluate_script', {
      function: "() => { document.querySelector('iframe').contentWindow.postMessage('go', '*'); }",
    });
    // Up to 30 s: a hidden frame on a loaded machine (a core kept busy) took more than 10 to post.
    const deadline = Date.now() + 30_000;
    let posted = false;
    while (!posted && Date.now() < deadline) {
      const shown = await mcp.call('evaluate_script', {
        function: "() => document.getElementById('sink').textContent",
      });
      posted = shown.text.includes('Got');
    }
    assert.ok(posted, 'the frame posted its value');
    // Its loop has begun.
    await new Promise((done) => setTimeout(done, 500));
    const started = Date.now();
    const snapshot = await mcp.call('take_snapshot');
    assert.ok(!snapshot.text.includes(value), `shown:\n${snapshot.text}`);
    assert.ok(snapshot.isError, snapshot.text);
    assert.match(snapshot.text, /did not answer within 2000 ms, so its password fields could not be read/);
    assert.ok(Date.now() - started < 6_000, 'failed before the deadline');
  });
