// Attacks on the user's Chrome (shared mode), after the browser-wide Fetch gate (browser/browserFetchGate.ts): an
// obedient agent and hostile pages, a human who approves what tabward predicted and refuses everything it did not
// (test/helpers/userChromeRig.ts). Each test asserts on what the fixture server received: a request that arrived
// where it may not makes it fail.
// Invariant: detaching from the user's Chrome leaves nothing of the agent's sending unjudged: its tabs are silenced
// before they close (a keepalive POST redirecting into a sensitive page afterwards never arrives) and their sites'
// service workers are stopped (a worker given data after a sensitive read sends nothing once tabward detaches).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { token, userChromeRig } from '../helpers/userChromeRig.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe("detaching from the user's Chrome leaves nothing of the agent's behind", () => {
  const rig = userChromeRig();
  const { url, arrived, shown, quietly, agent, typeTokenInto, closeTabward } = rig;

  test('a keepalive POST that redirects into a sensitive page after tabward detached goes unjudged', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil.example', '/slow-hop-page') });
    assert.equal(opened.isError, false, opened.text);
    const detached = await agentMcp.call('browser_disconnect');
    assert.equal(detached.isError, false, detached.text);
    await waitFor('the first hop arrives', () => arrived('/slow-hop').length > 0, { timeoutMs: 5_000 });
    await closeTabward(agentMcp);
    await quietly(3_500);
    assert.deepEqual(shown(arrived('/settings/delete?from=slow-hop')), '');
  });

  // Last: it leaves tabward detached (the next test, if any, starts a new one).
  test('after a sensitive read, a service worker of the agent’s page sends what it was given once tabward detaches', async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('evil.example', '/keeper') });
    await waitFor('the worker runs', () => arrived('/keeper-ready').length > 0, { timeoutMs: 10_000 });
    await typeTokenInto(agentMcp, '/keeper');
    await quietly(1_000);
    const whileAttached = arrived('/swhome?d=').filter((r) => r.path.includes(token)).length;
    const detached = await agentMcp.call('browser_disconnect');
    assert.equal(detached.isError, false, detached.text);
    await closeTabward(agentMcp);
    await quietly(2_000);
    const sent = arrived('/swhome?d=').filter((r) => r.path.includes(token));
    assert.equal(
      sent.length,
      0,
      `${whileAttached} while attached, ${sent.length} in all:\n${shown(sent.slice(0, 3))}`,
    );
  });
});
