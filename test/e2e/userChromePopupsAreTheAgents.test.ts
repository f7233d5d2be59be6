// Attacks on the user's Chrome (shared mode), after the browser-wide Fetch gate (browser/browserFetchGate.ts): an
// obedient agent and hostile pages, a human who approves what tabward predicted and refuses everything it did not
// (test/helpers/userChromeRig.ts). Each test asserts on what the fixture server received: a request that arrived
// where it may not makes it fail.
// Invariant: a popup of an agent tab is the agent's and is judged from its first request: opened by a link click
// (its early burst), by a tab that closed itself at once, from a cross-site frame of the agent's tab, navigating
// itself into a sensitive page. Harm: a state-changing request into a sensitive page with no human's yes, or after a
// sensitive read data reaching another host.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { refOf } from '../helpers/mcpClient.ts';
import { token, userChromeRig } from '../helpers/userChromeRig.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe("popups of the agent's tabs in the user's Chrome are the agent's", () => {
  const rig = userChromeRig();
  const { url, arrived, shown, quietly, agent, readTokens } = rig;

  test('a popup opened by a link click posts into a sensitive page before tabward watches it', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/opens-link-flood') });
    const snapshot = await agentMcp.call('take_snapshot');
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Open help') });
    assert.equal(clicked.isError, false, clicked.text);
    await quietly(2_000);
    const posts = rig.site.seen.filter((r) => r.path.startsWith('/settings/delete?from=popup-burst'));
    assert.deepEqual(posts.length, 0, `${posts.length} POSTs arrived:\n${shown(posts.slice(0, 5))}`);
  });

  test('an agent tab that closes itself as its link opens a popup leaves that popup unwatched', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/opens-and-closes') });
    const snapshot = await agentMcp.call('take_snapshot');
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Open help') });
    assert.equal(clicked.isError, false, clicked.text);
    // The popup is adopted as it appears: on a loaded machine that can take a moment after the click returned.
    let middle = '';
    await waitFor(
      'the help popup listed as the agent’s',
      async () => {
        middle = /(p\d+) \[agent\] \S+\/middle/.exec((await agentMcp.call('list_pages')).text)?.[1] ?? '';
        return middle !== '';
      },
      { timeoutMs: 10_000 },
    );
    await agentMcp.call('select_page', { pageId: middle });
    const inMiddle = await agentMcp.call('take_snapshot');
    const continued = await agentMcp.call('click', { ref: refOf(inMiddle.text, 'Continue') });
    assert.match(continued.text, /closed|Clicked/, continued.text);
    await waitFor('the popup runs', () => arrived('/lingering-ran?closes').length > 0, {
      timeoutMs: 10_000,
    }).catch(() => undefined);
    await quietly(1_500);
    const pages = (await agentMcp.call('list_pages')).text;
    assert.deepEqual(shown([...arrived('/settings/delete?from=lingering-closes')]), '', pages);
  });

  test('after a sensitive read, a popup whose opener closed itself sends what the agent typed in its own tab', async () => {
    const agentMcp = await agent();
    const notes = await agentMcp.call('new_page', { url: url('evil.example', '/broadcasts') });
    const notesTab = /Tab (p\d+)/.exec(notes.text)?.[1] ?? '';
    await agentMcp.call('new_page', { url: url('evil.example', '/opens-home') });
    await agentMcp.call('click', { ref: refOf((await agentMcp.call('take_snapshot')).text, 'Open help') });
    // The popup is adopted as it appears: on a loaded machine that can take a moment after the click returned.
    let middle = '';
    await waitFor(
      'the help popup listed as the agent’s',
      async () => {
        middle =
          /(p\d+) \[agent\] \S+\/middle-home/.exec((await agentMcp.call('list_pages')).text)?.[1] ?? '';
        return middle !== '';
      },
      { timeoutMs: 10_000 },
    );
    await agentMcp.call('select_page', { pageId: middle });
    await agentMcp.call('click', { ref: refOf((await agentMcp.call('take_snapshot')).text, 'Continue') });
    // Adopted as it appears (its opener's popup event, or the gate's record of who opened it): on a loaded machine
    // that can take a moment after the click returned.
    await waitFor(
      'the popup listed as the agent’s, its opener gone or not',
      async () => /\[agent\] \S+\/sends-home/.test((await agentMcp.call('list_pages')).text),
      { timeoutMs: 10_000 },
    );
    await readTokens(agentMcp);
    await agentMcp.call('select_page', { pageId: notesTab });
    const typed = await agentMcp.call('fill', {
      ref: refOf((await agentMcp.call('take_snapshot')).text, 'Note'),
      value: token,
    });
    assert.equal(typed.isError, false, typed.text);
    await quietly(1_500);
    assert.deepEqual(shown(arrived('/home?d=').filter((r) => r.path.includes(token))), '');
  });

  test('a popup opened from a cross-site frame of the agent’s tab is the agent’s and is watched', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/frame-link') });
    const snapshot = await agentMcp.call('take_snapshot');
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Sponsored help') });
    assert.equal(clicked.isError, false, clicked.text);
    await waitFor('the popup runs', () => arrived('/lingering-ran?frame').length > 0, { timeoutMs: 10_000 });
    await quietly(1_500);
    assert.deepEqual(shown([...arrived('/settings/delete?from=lingering-frame')]), '');
  });

  test('a popup opened by a link click navigates itself into a sensitive page', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil.example', '/opens-nav-flood') });
    const tab = /Tab (p\d+)/.exec(opened.text)?.[1] ?? '';
    // A race: tabward wins it some of the time, so the agent tries up to three times.
    for (let attempt = 0; attempt < 3 && arrived('/settings/admin?from=popup-nav').length === 0; attempt++) {
      await agentMcp.call('select_page', { pageId: tab });
      const snapshot = await agentMcp.call('take_snapshot');
      await agentMcp.call('click', { ref: refOf(snapshot.text, 'Open help') });
      await quietly(2_000);
    }
    assert.deepEqual(shown(arrived('/settings/admin?from=popup-nav')), '');
  });
});
