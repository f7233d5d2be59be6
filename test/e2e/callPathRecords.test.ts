// The call path in-process (test/helpers/inProcessMcp.ts), what it tells and keeps: declared secrets redacted
// from results, errors, questions and the audit; every call audited at its start and its end, paired by call id;
// the human asked through MCP elicitation (answered in this process), and refusals when nobody can be asked.
// Through a real `tabward mcp` process: sensitive.test.ts (secrets), survives*.test.ts (audit pairing).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { readAuditLog } from '../../src/audit/auditLog.ts';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

const ledgerRule = '*://ledger.test/*';
const noteSecret = 'S3cr3t-Value-9931';
const pin = 'PIN-7734-xyz';
const accountPage = `<title>Account</title><h1>Account</h1>
<form method="post" action="/account/close"><button>Close account</button></form>
<label>Memo <input name="memo"></label>`;

let site: Fixture;
let tw: InProcessBrowser;
const ledger = (path: string) => site.url('ledger.test', path);
const notes = (path: string) => site.url('notes.test', path);
const accountGets = () => site.seen.filter((seen) => seen.path === '/account').length;

before(async () => {
  site = await startFixture({
    'GET /account': (_req, _body, res) => html(res, accountPage),
    'POST /account/close': (_req, _body, res) => html(res, '<title>Closed</title>Closed'),
    'GET /form': (_req, _body, res) =>
      html(res, '<title>Notes</title><form action="/save"><label>Note <input name="note"></label></form>'),
    // Echoes what it was sent: the page itself then shows the secret.
    'GET /save': (req, _body, res) =>
      html(
        res,
        `<title>Saved</title><p>Saved: ${new URL(req.url ?? '/', 'http://x').searchParams.get('note')}</p>`,
      ),
  });
  tw = await startInProcess({
    rules: [ledgerRule],
    secrets: `NOTE_SECRET@${notes('').replace(/\/$/, '')}=${noteSecret}\nLEDGER_PIN=${pin}\n`,
  });
});
after(async () => {
  await tw?.close();
  await site?.close();
});

async function onAccount(mcp: InProcessMcp): Promise<string> {
  mcp.human.will({ decision: 'approve' });
  const opened = await mcp.call('new_page', { url: ledger('/account') });
  assert.ok(!opened.isError, opened.text);
  return (await mcp.call('take_snapshot')).text;
}

describe('secrets', { timeout: 120_000 }, () => {
  test('a secret typed by name reaches the page, and never shows in a result, an error, a question or the audit', async () => {
    const mcp = await tw.connect();
    mcp.human.policy = () => ({ decision: 'approve' });
    try {
      const outputs: string[] = [];
      const keep = async (name: string, args: Record<string, unknown> = {}) => {
        const outcome = await mcp.call(name, args);
        outputs.push(outcome.text);
        return outcome;
      };
      await keep('new_page', { url: notes('/form') });
      const note = refOf((await keep('take_snapshot')).text, 'Note');
      const filled = await keep('fill', { ref: note, secret: 'NOTE_SECRET' });
      assert.ok(!filled.isError, filled.text);
      await keep('take_snapshot');
      await keep('evaluate_script', { function: '() => document.querySelector("input").value' });
      const thrown = await keep('evaluate_script', {
        function: '() => { throw new Error("value: " + document.querySelector("input").value) }',
      });
      assert.ok(thrown.isError, thrown.text);
      await keep('press_key', { key: 'Enter' });
      await keep('wait_for', { text: 'Saved' });
      const saved = await keep('take_snapshot');
      assert.match(saved.text, /Saved: «redacted»/);
      await keep('list_pages');
      await keep('browser_status');

      const account = await onAccount(mcp);
      const typed = await keep('fill', { ref: refOf(account, 'Memo'), secret: 'LEDGER_PIN' });
      assert.ok(!typed.isError, typed.text);
      assert.match(mcp.human.questions.at(-1) ?? '', /"secret":"LEDGER_PIN"/, 'asked, naming the secret');
      await keep('take_snapshot');

      assert.ok(
        site.seen.some((seen) => seen.path.includes(encodeURIComponent(noteSecret))),
        'the secret was really typed and sent',
      );
      for (const shown of [...outputs, ...mcp.human.questions]) {
        assert.ok(!shown.includes(noteSecret) && !shown.includes(pin), shown);
      }
      assert.ok(
        outputs.filter((output) => output.includes('«redacted»')).length >= 4,
        outputs.join('\n--\n'),
      );
      const audit = readFileSync(mcp.auditPath, 'utf8');
      assert.ok(!audit.includes(noteSecret) && !audit.includes(pin), audit);
      assert.match(audit, /«redacted»/, 'the URL the secret was sent in is on record, redacted');
    } finally {
      await mcp.close();
    }
  });
});

describe('the audit log', { timeout: 120_000 }, () => {
  test('every call has a start and an end with the same call id; the end names what was acted on', async () => {
    const mcp = await tw.connect();
    try {
      await mcp.call('new_page', { url: notes('/form') });
      await mcp.call('no_such_tool', { x: 1 });
      const bad = await mcp.call('click', {});
      assert.ok(bad.isError && bad.text.startsWith('bad_input:'), bad.text);
      const account = await onAccount(mcp);
      const button = refOf(account, 'Close account');
      let openWhileAsking: string[] = [];
      const look = async () => {
        openWhileAsking = readAuditLog(mcp.auditPath).unfinished.map((start) => start.tool);
      };
      mcp.human.will({ decision: 'reject', reason: 'wait' }, { decision: 'approve', meanwhile: look });
      assert.ok((await mcp.call('click', { ref: button })).isError);
      assert.ok(!(await mcp.call('click', { ref: button })).isError);
      assert.deepEqual(openWhileAsking, ['click'], 'on record as started while the human decided');

      // The choke point's own events (the browser's sign-in ping, stopped at every start) are not calls.
      const records = mcp.audit().filter((record) => record.tool !== '(egress)');
      const starts = records.filter((record) => record.outcome === 'started');
      const ends = records.filter((record) => record.outcome !== 'started');
      assert.equal(starts.length, 7, 'one start per call');
      assert.equal(new Set(starts.map((start) => start.call)).size, starts.length, 'call ids are unique');
      for (const start of starts) {
        const matching = ends.filter((end) => end.call === start.call);
        assert.equal(matching.length, 1, `one end for ${start.call}`);
        assert.equal(matching[0]?.tool, start.tool);
      }
      assert.equal(ends.length, starts.length);
      assert.deepEqual(readAuditLog(mcp.auditPath).unfinished, []);

      const byTool = (tool: string) => ends.filter((end) => end.tool === tool);
      assert.match(JSON.stringify(byTool('no_such_tool')), /"outcome":"error".*Unknown tool no_such_tool/);
      assert.match(JSON.stringify(byTool('click')[0]), /"outcome":"error".*Bad arguments for click/);
      const [, rejected, approved] = byTool('click');
      assert.match(rejected?.error ?? '', /^The user rejected click: wait/);
      assert.deepEqual(
        {
          ...rejected,
          sent: undefined,
          time: undefined,
          durationMs: undefined,
          call: undefined,
          error: undefined,
          targets: undefined,
        },
        {
          ...approved,
          // What left: the approved click's form POST, as the choke point sent it.
          sent: undefined,
          time: undefined,
          durationMs: undefined,
          call: undefined,
          choice: 'reject',
          outcome: 'rejected',
          error: undefined,
          // Recorded as it acts: how a saved recipe finds the button again.
          targets: undefined,
        },
        'the same action, refused then approved',
      );
      assert.equal(approved?.targets?.[button]?.selector, 'role=button[name="Close account"]');
      assert.match(
        JSON.stringify(approved && 'sent' in approved ? approved.sent : []),
        /POST https?:\/\/[^"]+: sent, answered \d+/,
      );
      assert.ok(approved && 'decision' in approved);
      assert.deepEqual(
        {
          frontEnd: approved.frontEnd,
          kind: approved.kind,
          mode: approved.mode,
          owner: approved.owner,
          element: approved.element,
          rule: approved.rule,
          decision: approved.decision,
          approver: approved.approver,
          choice: approved.choice,
          outcome: approved.outcome,
          args: approved.args,
        },
        {
          frontEnd: 'mcp',
          kind: 'write',
          mode: 'isolated',
          owner: 'agent',
          element: 'button "Close account"',
          rule: ledgerRule,
          decision: 'ask',
          approver: 'elicitation',
          choice: 'approve',
          outcome: 'ok',
          args: { ref: button },
        },
      );
      assert.match(approved.url ?? '', /^http:\/\/ledger\.test:\d+\/account$/);
      assert.match(approved.tab ?? '', /^p\d+$/);
    } finally {
      await mcp.close();
    }
  });
});

describe('who is asked', { timeout: 120_000 }, () => {
  test('elicitation shows the element, the page, where it sends, the rule and the arguments; a decline rejects', async () => {
    const mcp = await tw.connect();
    try {
      const account = await onAccount(mcp);
      const ref = refOf(account, 'Close account');
      const click = await mcp.call('click', { ref });
      assert.match(click.text, /^rejected: The user rejected click: the user chose decline/);
      const question = mcp.human.questions.at(-1) ?? '';
      assert.match(question, /^tabward: click on button "Close account" — SENSITIVE PAGE$/m);
      assert.match(question, /^Page: http:\/\/ledger\.test:\d+\/account$/m);
      assert.match(question, /form submit to \S*ledger\.test:\d+\/account\/close/);
      assert.match(question, /\(rule \*:\/\/ledger\.test\/\*\)/);
      assert.ok(question.includes(`Arguments: {"ref":"${ref}"}`), question);
    } finally {
      await mcp.close();
    }
  });

  test('nobody to ask: a client without elicitation, --approval elicit without it, --approval deny (said as such)', async () => {
    const cases = [
      { options: { elicitation: false }, says: /No human approver is reachable.*--approval auto or inbox/ },
      { options: { elicitation: false, approval: 'elicit' }, says: /does not support elicitation/ },
      { options: { approval: 'deny' }, says: /No human approver is reachable/ },
    ] as const;
    for (const { options, says } of cases) {
      const mcp = await tw.connect(options);
      mcp.human.policy = () => ({ decision: 'approve' });
      try {
        const before = accountGets();
        const refused = await mcp.call('new_page', { url: ledger('/account') });
        assert.ok(refused.isError && refused.text.startsWith('rejected:'), refused.text);
        assert.match(refused.text, says);
        // Nobody was asked, and the error says so: no "the user rejected", no "asked through none".
        assert.match(
          refused.text,
          /^rejected: new_page needs a human's approval and nobody could be asked; nothing was done/,
        );
        assert.doesNotMatch(refused.text, /The user rejected|asked through/);
        assert.equal(accountGets(), before, 'the sensitive page was never requested');
        assert.equal(mcp.human.questions.length, 0);
        const read = await mcp.call('new_page', { url: notes('/form') });
        assert.ok(!read.isError, `an ordinary page needs nobody: ${read.text}`);
      } finally {
        await mcp.close();
      }
    }
  });
});
