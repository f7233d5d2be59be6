// No request slips the choke point by its shape (held from the first, kept here as attacks of a red-team review of
// browser/egressProxy.ts and browser/requestJudge.ts): a page's own x-tabward-request header, odd-case methods, a
// service worker's and a page's 307 into a sensitive page, other spellings of the attacker's address after a read,
// pagehide beacons on navigate_page, a streaming upload across a read (test/helpers/chokePointRig.ts).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chokePointRig } from '../helpers/chokePointRig.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('no request slips the choke point by its shape', () => {
  const rig = chokePointRig();
  const { url, from, quietly, agent, readTokens, tabOf } = rig;

  test('a page’s own x-tabward-request header, and odd-case methods, ride nothing into a sensitive page', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('github.com', '/forge') });
    const tab = tabOf(opened.text);
    await quietly(500);
    // An action running in the tab: its human is asked about each held write (and refuses it).
    await agentMcp.call('take_snapshot');
    await agentMcp.call('resize_page', { width: 700, height: 500 });
    await quietly(1_000);
    await agentMcp.call('navigate_page', { url: 'about:blank', pageId: tab });
    assert.deepEqual(from('github.com', '/settings/forged'), []);
  });

  test('a service worker’s and a page’s POST 307-redirected into a sensitive page never arrives', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil-f.example', '/sw-page') });
    await waitFor('the service worker posts', () => from('evil-f.example', '/r307?sw').length > 0);
    await agentMcp.call('navigate_page', {
      url: url('evil-f.example', '/page-307'),
      pageId: tabOf(opened.text),
    });
    await waitFor('the page posts', () => from('evil-f.example', '/r307?page').length > 0);
    await quietly(1_500);
    await agentMcp.call('navigate_page', { url: 'about:blank', pageId: tabOf(opened.text) });
    assert.deepEqual(from('github.com', '/settings/sw-'), []);
  });

  test('after a sensitive read, the attacker’s server under other spellings of its address receives nothing', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil-g.example', '/loopback') });
    await waitFor('the page reaches its server', () => rig.site.seen.some((r) => r.path.startsWith('/lb?')));
    await readTokens(agentMcp);
    const mark = rig.site.seen.length;
    await quietly(2_000);
    const later = rig.site.seen
      .slice(mark)
      .filter((request) => request.path.startsWith('/lb'))
      .map((request) => `${request.method} ${request.host}${request.path.slice(0, 40)}`);
    // At most one round was on its way as the read happened.
    assert.ok(later.length <= 14, `after the read: ${later.join(' | ')}`);
    const mark2 = rig.site.seen.length;
    await quietly(1_000);
    const last = rig.site.seen
      .slice(mark2)
      .filter((request) => request.path.startsWith('/lb'))
      .map((request) => `${request.method} ${request.host}${request.path.slice(0, 40)}`);
    assert.deepEqual(last, []);
  });

  test('a page the agent navigates away from after a sensitive read beacons nothing home', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil-h.example', '/goodbye') });
    await readTokens(agentMcp);
    await agentMcp.call('navigate_page', { url: url('github.com', '/repo'), pageId: tabOf(opened.text) });
    await quietly(1_000);
    assert.deepEqual(from('evil-h.example', '/bye'), []);
  });

  test('an upload still streaming its body across a sensitive read carries nothing after it', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil-i.example', '/stream') });
    await quietly(800);
    await readTokens(agentMcp);
    const readAt = Date.now();
    await quietly(3_000);
    const chunks = from('evil-i.example', '/upload')
      .flatMap((request) => request.body.split('\n'))
      .map((line) => Number(/at=(\d+)/.exec(line)?.[1] ?? 0))
      .filter((at) => at > readAt);
    const titles = (await agentMcp.call('list_pages')).text;
    assert.deepEqual(chunks, [], titles);
  });
});
