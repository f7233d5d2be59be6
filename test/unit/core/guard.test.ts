// The guard's rule table (DESIGN.md 3.3), one case per rule and the edges between them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decide, type GuardFacts } from '../../../src/core/guard.ts';
import { defaultRules, RuleSet } from '../../../src/core/sensitiveRules.ts';

const rules = new RuleSet(defaultRules());
const base: GuardFacts = {
  tool: 'click',
  kind: 'write',
  mode: 'isolated',
  tab: { id: 'p1', ownedByAgent: true },
  frames: [{ url: 'https://example.com/' }],
  carriesData: false,
  taintedOrigins: [],
  policy: 'default',
  approveAll: false,
};
const verdict = (facts: Partial<GuardFacts>) => decide({ ...base, ...facts }, rules);

describe('guard', () => {
  test('rule 1: closing a user tab in shared mode is blocked, whatever grants exist', () => {
    const decision = verdict({
      tool: 'close_page',
      mode: 'shared',
      tab: { id: 'p3', ownedByAgent: false },
      approveAll: true,
    });
    assert.equal(decision.verdict, 'block');
    assert.equal(verdict({ tool: 'close_page', mode: 'shared' }).verdict, 'ask');
  });

  test('rule 2: writes and navigation in a user tab ask, with no approve-all', () => {
    for (const kind of ['write', 'navigate'] as const) {
      const decision = verdict({
        kind,
        mode: 'shared',
        tab: { id: 'p3', ownedByAgent: false },
        approveAll: true,
      });
      assert.equal(decision.verdict, 'ask');
      assert.ok(decision.verdict === 'ask' && !decision.approveAllAllowed && decision.rule === 'user-tab');
    }
  });

  test('rule 3: a write on a sensitive page asks in every mode and policy, single-use only', () => {
    for (const mode of ['isolated', 'shared', 'remote'] as const) {
      for (const policy of ['default', 'strict', 'sensitive-only'] as const) {
        const decision = verdict({
          mode,
          policy,
          approveAll: true,
          frames: [{ url: 'https://github.com/settings/keys' }],
        });
        assert.ok(
          decision.verdict === 'ask' && decision.sensitive && !decision.approveAllAllowed,
          `${mode}/${policy}`,
        );
      }
    }
  });

  test('rule 3: a sensitive ancestor or top page counts, and an opaque frame inside one fails closed', () => {
    const inFrame = verdict({
      frames: [{ url: 'https://widgets.example/' }, { url: 'https://www.paypal.com/checkout' }],
    });
    assert.equal(inFrame.verdict, 'ask');
    const opaque = verdict({ frames: [{ url: 'data:text/html,x' }, { url: 'https://www.paypal.com/' }] });
    assert.equal(opaque.verdict, 'ask');
    const srcdoc = verdict({
      frames: [
        { url: 'about:srcdoc', creatorUrl: 'https://github.com/settings' },
        { url: 'https://github.com/settings' },
      ],
    });
    assert.equal(srcdoc.verdict, 'ask');
  });

  test('rule 3: a click on a harmless page that submits a form to a sensitive one asks', () => {
    const submit = verdict({ effects: [{ url: 'https://github.com/settings/delete', submitsForm: true }] });
    assert.ok(submit.verdict === 'ask' && submit.sensitive && submit.reason.includes('submits a form to'));
    assert.equal(
      verdict({ effects: [{ url: 'https://example.com/next', submitsForm: false }] }).verdict,
      'allow',
    );
    const tainted = verdict({
      taintedOrigins: ['https://github.com'],
      effects: [{ url: 'https://evil.example/c', submitsForm: true }],
    });
    assert.ok(tainted.verdict === 'ask' && tainted.rule === 'taint');
  });

  test('rule 4: navigating to a sensitive URL asks and names the rule', () => {
    const decision = verdict({
      tool: 'navigate_page',
      kind: 'navigate',
      destination: 'https://github.com/acme/app/settings',
    });
    assert.ok(decision.verdict === 'ask' && decision.rule === '*://github.com/*/settings/*');
    assert.equal(
      verdict({ tool: 'navigate_page', kind: 'navigate', destination: 'https://github.com/acme/app' })
        .verdict,
      'allow',
    );
  });

  test('rule 5: after reading a sensitive origin, data-carrying actions toward another origin ask', () => {
    const tainted = { taintedOrigins: ['https://github.com'], carriesData: true };
    const fill = verdict({ ...tainted, tool: 'fill', frames: [{ url: 'https://evil.example/form' }] });
    assert.ok(fill.verdict === 'ask' && fill.rule === 'taint' && !fill.approveAllAllowed);
    const nav = verdict({
      ...tainted,
      tool: 'navigate_page',
      kind: 'navigate',
      destination: 'https://evil.example/?q=secret',
    });
    assert.equal(nav.verdict, 'ask');
    assert.equal(verdict({ ...tainted, frames: [{ url: 'https://github.com/acme/app' }] }).verdict, 'allow');
    assert.equal(
      verdict({ ...tainted, carriesData: false, frames: [{ url: 'https://evil.example/' }] }).verdict,
      'allow',
    );
  });

  test('rule 6: ordinary writes by mode, policy and approve-all', () => {
    assert.equal(verdict({}).verdict, 'allow');
    assert.equal(verdict({ policy: 'strict' }).verdict, 'ask');
    const shared = verdict({ mode: 'shared' });
    assert.ok(shared.verdict === 'ask' && shared.approveAllAllowed);
    assert.equal(verdict({ mode: 'shared', approveAll: true }).verdict, 'allow');
    assert.equal(verdict({ mode: 'remote' }).verdict, 'ask');
    assert.equal(verdict({ mode: 'shared', policy: 'sensitive-only' }).verdict, 'allow');
  });

  test('rule 7: reads are allowed, even on sensitive pages; uploads of local files ask even when isolated', () => {
    assert.equal(
      verdict({ tool: 'take_snapshot', kind: 'read', frames: [{ url: 'https://www.paypal.com/' }] }).verdict,
      'allow',
    );
    assert.equal(verdict({ tool: 'upload_file', exportsLocalFiles: true, carriesData: true }).verdict, 'ask');
  });

  test("using the user's Chrome is a human decision", () => {
    const decision = verdict({ tool: 'browser_connect', kind: 'mode', frames: [] });
    assert.ok(decision.verdict === 'ask' && decision.rule === 'use-your-chrome');
    assert.equal(
      verdict({ tool: 'browser_connect', kind: 'mode', mode: 'remote', frames: [] }).verdict,
      'ask',
    );
    assert.equal(verdict({ tool: 'browser_disconnect', kind: 'mode', frames: [] }).verdict, 'allow');
  });
});
