// Attacks on the user's Chrome (shared mode), after the browser-wide Fetch gate (browser/browserFetchGate.ts): an
// obedient agent and hostile pages, a human who approves what tabward predicted and refuses everything it did not
// (test/helpers/userChromeRig.ts). Each test asserts on what the fixture server received: a request that arrived
// where it may not makes it fail.
// Invariant: every frame and worker of an agent tab is judged from its first request: a removed frame's keepalive POST
// redirected later, sandboxed grandchildren of cross-site frames (while the page floods tabward too), frames nested
// three deep, a sandboxed frame's dedicated workers; after a sensitive read prefetch, icon, manifest, preload,
// EventSource, font, beacon, worker, sandboxed frame and ping carry nothing.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { refOf } from '../helpers/mcpClient.ts';
import { token, userChromeRig } from '../helpers/userChromeRig.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe("frames and workers of the agent's tabs in the user's Chrome are judged", () => {
  const rig = userChromeRig();
  const { url, arrived, shown, quietly, agent, typeTokenInto } = rig;

  test('a keepalive POST of a removed frame that redirects into a sensitive page seconds later is judged', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/slow-hop-repo') });
    const snapshot = await agentMcp.call('take_snapshot');
    await agentMcp.call('click', { ref: refOf(snapshot.text, 'Hide ads') });
    await waitFor('the first hop arrives', () => arrived('/slow-hop?frame').length > 0, { timeoutMs: 5_000 });
    await quietly(3_500);
    assert.deepEqual(shown(arrived('/settings/delete?from=slow-hop-frame')), '');
  });

  test('a sandboxed grandchild of a cross-site frame posts into a sensitive page before its parent is watched', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/nest-repo') });
    await quietly(2_500);
    const posts = rig.site.seen.filter((r) =>
      r.path.startsWith('/settings/delete?from=sandboxed-grandchild'),
    );
    assert.equal(posts.length, 0, `${posts.length} POSTs arrived:\n${shown(posts.slice(0, 5))}`);
  });

  test('a sandboxed grandchild of a cross-site frame posts into a sensitive page while the page floods tabward', async () => {
    const agentMcp = await agent();
    const before = rig.site.seen.filter((r) =>
      r.path.startsWith('/settings/delete?from=sandboxed-grandchild'),
    ).length;
    const ran = arrived('/ran?grandchild').length;
    const posted = () =>
      rig.site.seen.filter((r) => r.path.startsWith('/settings/delete?from=sandboxed-grandchild')).length >
      before;
    // A race: tabward wins it some of the time, so the page is opened up to three times.
    for (let attempt = 0; attempt < 3 && !posted(); attempt++) {
      await agentMcp.call('new_page', { url: url('github.com', '/nest-repo-flood') });
      await quietly(3_000);
    }
    assert.ok(arrived('/ran?grandchild').length > ran, 'the grandchild ran');
    const posts = rig.site.seen
      .filter((r) => r.path.startsWith('/settings/delete?from=sandboxed-grandchild'))
      .slice(before);
    assert.equal(posts.length, 0, `${posts.length} POSTs arrived:\n${shown(posts.slice(0, 5))}`);
  });

  test('frames nested three deep through sandboxed and cross-site frames post nothing into a sensitive page', {
    todo: "residual, under load: an in-process child of an agent's out-of-process frame is known to the browser-wide gate only once tabward's hook attaches to that frame's process (no target event names it)",
  }, async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/deep-repo') });
    await quietly(2_500);
    const posts = rig.site.seen.filter((r) => r.path.startsWith('/settings/delete?from=deep'));
    assert.ok(
      arrived('/ran?deep').length > 0 && arrived('/ran?deep-worker').length > 0,
      'the frame and worker ran',
    );
    const ran = rig.site.seen.filter((r) => r.path.startsWith('/deep-middle')).length;
    assert.ok(ran > 0, 'the middle frame loaded');
    assert.equal(
      posts.length,
      0,
      `${posts.length} POSTs arrived (middle frame loaded ${ran}x):\n${shown(posts.slice(0, 5))}`,
    );
  });

  test('dedicated workers of a sandboxed frame post nothing into a sensitive page', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('github.com', '/sandbox-worker') });
    await quietly(2_500);
    const posts = rig.site.seen.filter((r) =>
      /^\/settings\/delete\?from=sandbox-(data-)?worker/.test(r.path),
    );
    assert.ok(
      arrived('/ran?sandbox-worker').length > 0 && arrived('/ran?sandbox-data-worker').length > 0,
      shown(arrived('/ran')),
    );
    assert.equal(posts.length, 0, shown(posts));
  });

  test('after a sensitive read, prefetch, icon, manifest, preload, EventSource, font, beacon, worker, sandboxed frame and ping carry nothing', async () => {
    const agentMcp = await agent();
    const typed = await typeTokenInto(agentMcp, '/initiators');
    assert.match(typed, /\/i\/(prefetch|beacon|ping|font)\?d=/);
    await quietly(2_500);
    assert.deepEqual(
      shown(rig.site.seen.filter((r) => r.path.startsWith('/i/') && r.path.includes(token))),
      '',
    );
  });
});
