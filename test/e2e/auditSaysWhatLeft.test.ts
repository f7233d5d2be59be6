// The audit says what left the browser (docs/architecture.md, "The choke point", What left), found by an attack
// review: an approved write into a sensitive page whose server answers only after the action returned was named
// nowhere (the proxy told it only with its answer, after the action's record was written), and a page's own posts
// after a read filled the record's ten lines, pushing out the approved write itself. A page's own large post after
// an approved click is refused unasked, its body too long for a question to show, and the record says so.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

describe("an action's audit record names what left, whatever the server and the page do", () => {
  let site: Fixture;
  let tw: InProcessBrowser;
  const url = (path: string) => site.url('github.com', path);
  const form = (action: string, extra = '') =>
    `<title>Emails</title><form method="post" action="${action}"><input name="email" value="me@example.com" aria-label="Email"><button>Save email</button></form>${extra}`;

  before(async () => {
    site = await startFixture(
      {
        // The page saves by a fetch of its own (held and asked: the human approves it).
        'GET /settings/slow': (_req, _body, res) =>
          html(
            res,
            form(
              '/settings/slow',
              `<script>document.forms[0].addEventListener('submit', (event) => {
                event.preventDefault();
                fetch('/settings/slow', { method: 'POST', body: 'email=me' });
              })</script>`,
            ),
          ),
        // Answered 4 s later: the click returns long before (a settle waits 500 ms at most for a fetch).
        'POST /settings/slow': (_req, _body, res) => {
          setTimeout(() => res.writeHead(204).end(), 4_000);
        },
        'GET /settings/busy': (_req, _body, res) =>
          html(
            res,
            form(
              '/settings/busy',
              // Its own posts first, all answered, then the form: each is in the record before the action ends.
              `<script>document.forms[0].addEventListener('submit', async (event) => {
                event.preventDefault();
                await Promise.all(Array.from({ length: 12 }, (_, i) => fetch('/_stats?i=' + i, { method: 'POST', body: 'x' })));
                event.target.submit();
              })</script>`,
            ),
          ),
        'POST /settings/busy': (_req, _body, res) => html(res, '<title>Saved</title><p>saved</p>'),
        // A large upload the server takes only 3 s later: its body is still going when the click returns.
        'GET /settings/upload': (_req, _body, res) =>
          html(
            res,
            form(
              '/settings/upload',
              `<script>document.forms[0].addEventListener('submit', (event) => {
                event.preventDefault();
                fetch('/settings/upload', { method: 'POST', body: 'x'.repeat(16 * 1024 * 1024) });
              })</script>`,
            ),
          ),
        'POST /settings/upload': (_req, _body, res) => {
          res.writeHead(204).end();
        },
        'GET /settings/tokens': (_req, _body, res) =>
          html(
            res,
            `<title>Tokens</title><p>ghp_auditTok3n</p><a href="${site.url('tracker.example', '/landing?d=ghp_auditTok3n')}">Share</a>`,
          ),
        'GET /landing': (_req, _body, res) => html(res, '<title>Thanks</title><p>thanks</p>'),
        // A page of another site that, once open, posts what it can to its own host, on a timer of its own.
        'GET /tracker': (_req, _body, res) =>
          html(
            res,
            // Each to an address of its own, as a page flooding the audit would (a review of the first version).
            `<title>Tracker</title><script>let n = 0; setInterval(() => fetch('/collect/' + n++ + '?d=' + Date.now(), { method: 'POST', body: 'x' }).catch(() => {}), 100)</script>`,
          ),
        'POST /collect': (_req, _body, res) => {
          res.writeHead(204).end();
        },
        'POST /_stats': (_req, _body, res) => {
          res.writeHead(204).end();
        },
      },
      {
        tls: true,
        beforeBody: (req) =>
          req.url === '/settings/upload' ? new Promise((resolve) => setTimeout(resolve, 3_000)) : undefined,
      },
    );
    tw = await startInProcess();
  });
  after(async () => {
    await tw?.close();
    await site?.close();
  });

  const clickRecord = async (path: string) => {
    const mcp = await tw.connect();
    try {
      mcp.human.policy = () => ({ decision: 'approve' });
      await mcp.call('new_page', { url: url(path) });
      const snapshot = await mcp.call('take_snapshot');
      const click = await mcp.call('click', { ref: refOf(snapshot.text, 'Save email') });
      assert.ok(!click.isError, click.text);
      const record = mcp.audit().findLast((entry) => entry.tool === 'click' && 'decision' in entry);
      assert.ok(record && 'decision' in record, 'no record of the click');
      // The write arrived whole before the tab closes (an upload cut short would be a different story).
      await waitFor('the write at the server', () =>
        site.seen.some((seen) => seen.method === 'POST' && seen.path === path),
      );
      return record;
    } finally {
      await mcp.close();
    }
  };

  test('an approved write answered after the action returned is named as sent', async () => {
    const record = await clickRecord('/settings/slow');
    assert.equal(
      site.seen.filter((seen) => seen.method === 'POST' && seen.path === '/settings/slow').length,
      1,
    );
    assert.deepEqual(record.sent, [`POST ${url('/settings/slow')}: sent`], JSON.stringify(record));
  });

  // The page's own 16 MB post into the sensitive page (not the form the human approved) is held; a question cannot
  // show its body, so it is refused without asking, and the record says so (core/heldRequests.ts).
  test("a page's own large post into a sensitive page after an approved click is refused unasked, and the record says why", async () => {
    const mcp = await tw.connect();
    try {
      mcp.human.policy = () => ({ decision: 'approve' });
      await mcp.call('new_page', { url: url('/settings/upload') });
      const snapshot = await mcp.call('take_snapshot');
      await mcp.call('click', { ref: refOf(snapshot.text, 'Save email') });
      const record = mcp.audit().findLast((entry) => entry.tool === 'click' && 'decision' in entry);
      assert.ok(record && 'held' in record, JSON.stringify(record));
      assert.match(
        JSON.stringify(record.held),
        /settings\/upload: held .*refused without asking: (its body could not be read|The arguments are too long)/,
      );
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      assert.equal(
        site.seen.filter((seen) => seen.method === 'POST' && seen.path === '/settings/upload').length,
        0,
      );
    } finally {
      await mcp.close();
    }
  });

  test('a request refused in a tab where no action runs is an audit event of its own, naming the tab', async () => {
    const mcp = await tw.connect();
    try {
      mcp.human.policy = () => ({ decision: 'approve' });
      const tracker = await mcp.call('new_page', { url: site.url('tracker.example', '/tracker') });
      assert.ok(!tracker.isError, tracker.text);
      await mcp.call('new_page', { url: url('/settings/tokens') });
      await mcp.call('take_snapshot');
      // After the read the tracker's posts are refused, with no action in its tab to tell: the audit says so. (A
      // post judged before the read that reaches the proxy after it is refused there, untied, an event with no tab:
      // on a loaded machine that can be the first.)
      const event = await waitFor('an audit event for the tracker, naming its tab', () =>
        mcp
          .audit()
          .find(
            (entry) =>
              entry.tool === '(egress)' &&
              'url' in entry &&
              String(entry.url).includes('tracker.example') &&
              'tab' in entry,
          ),
      );
      assert.match(JSON.stringify(event), /"tab":"p\d+"/, JSON.stringify(event));
      assert.match(JSON.stringify(event), /"outcome":"blocked"/);
      // The rest of the tab's refusals within the window are told together when it ends, counted.
      const tracked = () =>
        mcp
          .audit()
          .filter(
            (entry) => entry.tool === '(egress)' && String('url' in entry && entry.url).includes('tracker'),
          );
      const summary = await waitFor('the told count of the rest', () =>
        tracked().find((entry) =>
          /the last of \d+ requests of this tab/.test(String('reason' in entry && entry.reason)),
        ),
      );
      assert.ok(summary);
      assert.ok(tracked().length <= 4, `${tracked().length} events for one tab's refusals`);
    } finally {
      await mcp.close();
    }
  });

  test('what went with data to a host the human allowed after a read is named as sent', async () => {
    const mcp = await tw.connect();
    try {
      mcp.human.policy = () => ({ decision: 'approve' });
      await mcp.call('new_page', { url: url('/settings/tokens') });
      const snapshot = await mcp.call('take_snapshot');
      const click = await mcp.call('click', { ref: refOf(snapshot.text, 'Share') });
      assert.ok(!click.isError, click.text);
      const record = mcp.audit().findLast((entry) => entry.tool === 'click' && 'decision' in entry);
      assert.ok(record && 'decision' in record);
      assert.match(
        (record.sent ?? []).join('\n'),
        /^GET https:\/\/tracker\.example:\d+\/landing\?d=.*: sent/m,
        JSON.stringify(record),
      );
    } finally {
      await mcp.close();
    }
  });

  test("the page's own posts after a read do not push the approved write out of the record", async () => {
    const record = await clickRecord('/settings/busy');
    const sent = record.sent ?? [];
    assert.match(
      sent[0] ?? '',
      /^POST https:\/\/github\.com:\d+\/settings\/busy: sent, answered 200$/,
      sent.join('\n'),
    );
    assert.equal(
      site.seen.filter((seen) => seen.path.startsWith('/_stats')).length,
      12,
      'the page posted its stats',
    );
    assert.equal(sent.length, 11, sent.join('\n'));
    assert.equal(sent.at(-1), '(and 3 more)');
    // What the page issued, as the element's: a write it attempted, not one the record says left.
    const issued = Object.values(record.targets ?? {}).map((target) => target.issued);
    assert.match(String(issued[0]), /^POST /);
  });
});
