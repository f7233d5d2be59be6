// Attacks on the user's Chrome (shared mode), after the browser-wide Fetch gate (browser/browserFetchGate.ts): an
// obedient agent and hostile pages, a human who approves what tabward predicted and refuses everything it did not
// (test/helpers/userChromeRig.ts). Each test asserts on what the fixture server received: a request that arrived
// where it may not makes it fail.
// Invariant: after a sensitive read, nothing the browser sends on a page's behalf carries data to another host:
// Reporting API and CSP reports (the agent's documents lose Report-To, Reporting-Endpoints, NEL headers). Background
// Fetch and FedCM stay todo: the browser process's own fetches reach no CDP interception.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { token, userChromeRig } from '../helpers/userChromeRig.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe("reports and the browser's own fetches carry nothing from the agent's tabs", () => {
  const rig = userChromeRig();
  const { url, arrived, shown, quietly, agent, typeTokenInto } = rig;

  test('a Background Fetch of the agent page’s service worker posts into a sensitive page', {
    todo: 'residual: Background Fetch is fetched by the browser process, which no CDP hook sees, and denying its permission over CDP does not stop it (measured)',
  }, async () => {
    const agentMcp = await agent();
    await agentMcp.call('new_page', { url: url('bgpost.example', '/bgfetch-post') });
    await waitFor(
      'the background fetch ends',
      () =>
        rig.site.seen.some(
          (r) => r.host.startsWith('bgpost.example') && r.path.startsWith('/bgfetch-done'),
        ) || arrived('/settings/delete?from=bgfetch').length > 0,
      { timeoutMs: 15_000 },
    ).catch(() => undefined);
    await quietly(500);
    const ran = shown(
      rig.site.seen.filter((r) => r.host.startsWith('bgpost.example') && /bgfetch|err/.test(r.path)),
    );
    assert.deepEqual(shown(arrived('/settings/delete?from=bgfetch')), '', ran);
  });

  test('after a sensitive read, a Background Fetch carries the token to another host', {
    todo: 'residual: Background Fetch is fetched by the browser process, which no CDP hook sees, and denying its permission over CDP does not stop it (measured)',
  }, async () => {
    const agentMcp = await agent();
    await typeTokenInto(agentMcp, '/bgfetch-leak', 'bgleak.example');
    await quietly(3_000);
    assert.deepEqual(
      shown(rig.site.seen.filter((r) => r.path.startsWith('/bgfetch?') && r.path.includes(token))),
      '',
    );
  });

  test('after a sensitive read, a FedCM config URL carries the token to another host', {
    todo: "residual: FedCM's config fetch is the browser process's own, which no CDP hook sees",
  }, async () => {
    const agentMcp = await agent();
    await typeTokenInto(agentMcp, '/fedcm-leak');
    await quietly(3_000);
    assert.deepEqual(
      shown(rig.site.seen.filter((r) => r.path.startsWith('/fedcm.json') && r.path.includes(token))),
      '',
    );
  });

  // The headers are taken out of the document at its response: answered with them gone (fulfilled), since Chromium
  // keeps the network service's parse of a response let go with other headers (measured: with continueResponse the
  // report left every time, alone or in a full run). Measured on Chromium 156 and not kept: a legacy Report-To
  // group named by the CSP, and deprecation reports (an unload listener, execCommand) to the default endpoint,
  // send nothing within 25 s even with the headers left in.
  for (const [name, path, made, endpoint] of [
    ['a Reporting API report (Reporting-Endpoints)', '/report-leak', 'img', '/report-to'],
    ['a Reporting API report of a compressed page', '/report-leak-gzip', 'img', '/report-to?from=gzip'],
  ] as const)
    test(`after a sensitive read, ${name} carries nothing to another host`, async () => {
      // Each page its own endpoint: a report one test let out is not counted against the next.
      const agentMcp = await agent();
      await typeTokenInto(agentMcp, path);
      // The page works without the headers: what was typed reached its script, which made its element.
      const madeCount = await agentMcp.call('evaluate_script', {
        function: `() => document.querySelectorAll(${JSON.stringify(made)}).length`,
      });
      assert.match(madeCount.text, /\b[1-9]\d*\b/, madeCount.text);
      await quietly(4_000);
      assert.deepEqual(shown(rig.site.seen.filter((r) => r.path === endpoint && r.body.includes(token))), '');
    });

  test('after a sensitive read, a legacy CSP report-uri report carries nothing to another host', async () => {
    const agentMcp = await agent();
    const typed = await typeTokenInto(agentMcp, '/report-uri-leak');
    // The report is sent by the frame (a hook sees it), unlike the Reporting API's.
    assert.match(typed, /POST \S+\/report-uri: the agent has read sensitive pages/);
    await quietly(3_000);
    assert.deepEqual(
      shown(rig.site.seen.filter((r) => r.path.startsWith('/report-uri') && r.body.includes(token))),
      '',
    );
  });
});
