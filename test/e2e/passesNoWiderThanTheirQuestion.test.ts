// A pass is no wider than its question: a form's pass was origin + path, spent by the tab's first write, so the page's
// script, or a cross-site frame, posting its own values there rode the approval. Now a pass names the full URL and is
// spent only by the approved frame's own navigation (the form submitting; core/actionPasses.ts). A red-team review's
// attacks (test/helpers/chokePointRig.ts).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chokePointRig } from '../helpers/chokePointRig.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe('a pass is no wider than its question', () => {
  const rig = chokePointRig();
  const { url, from, quietly, agent, tabOf } = rig;

  test('a cross-site frame posting all along rides the pass of the form the human approved in its tab', async () => {
    const agentMcp = await agent();
    // As chokePoint's resize test: the frame's own load after the read is asked, and let go; every write is refused.
    agentMcp.human.policy = (message) => ({
      decision: /did not predict/.test(message) && /POST/.test(message) ? 'reject' : 'approve',
    });
    const opened = await agentMcp.call('new_page', { url: url('github.com', '/settings/emails') });
    await waitFor('the frame loads', () => from('ads-l.example', '/spam').length > 0);
    // The frame posts all the while: on a loaded machine a read may need another go before it shows the button.
    const snapshot = await waitFor('the form in a snapshot', async () => {
      const read = await agentMcp.call('take_snapshot', { pageId: tabOf(opened.text) });
      return read.text.includes('Save email') ? read : undefined;
    });
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Save email') });
    await quietly(1_000);
    await agentMcp.call('navigate_page', { url: 'about:blank', pageId: tabOf(opened.text) });
    const writes = from('github.com', '/settings/emails').filter((request) => request.method === 'POST');
    assert.deepEqual(
      writes.filter((request) => request.body.includes('attacker')),
      [],
      `${clicked.text}\n${JSON.stringify(writes)}`,
    );
  });

  test('a page’s script posts its own values on the pass of the form the human approved', async () => {
    const agentMcp = await agent();
    const opened = await agentMcp.call('new_page', { url: url('evil-m.example', '/newsletter') });
    const snapshot = await agentMcp.call('take_snapshot', { pageId: tabOf(opened.text) });
    const asked = agentMcp.human.questions.length;
    const clicked = await agentMcp.call('click', { ref: refOf(snapshot.text, 'Save email') });
    await quietly(1_000);
    const writes = from('github.com', '/settings/emails').filter((request) => request.method === 'POST');
    const questions = agentMcp.human.questions.slice(asked).join('\n---\n');
    assert.deepEqual(
      writes.filter((request) => request.body.includes('attacker')),
      [],
      `the human was asked:\n${questions}\n\n${clicked.text}\n${JSON.stringify(writes)}`,
    );
  });
});
