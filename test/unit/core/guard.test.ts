// The guard's rule table (docs/architecture.md "The guard's rules"), one case per rule and the edges between them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decide, type GuardFacts } from '../../../src/core/guard.ts';
import { defaultRules, RuleSet } from '../../../src/core/sensitiveRules.ts';
import { siteCallFacts } from '../../../src/core/siteCalls.ts';
import { compilePattern } from '../../../src/core/urlPattern.ts';

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
      closesTab: true,
      mode: 'shared',
      tab: { id: 'p3', ownedByAgent: false },
      approveAll: true,
    });
    assert.equal(decision.verdict, 'block');
    // What the agent reads tells it what to do instead (PaiCLI's advice).
    assert.match(decision.reason, /tab p3 is the user's.*ask the user to close that tab themselves\.$/);
    assert.equal(verdict({ tool: 'close_page', closesTab: true, mode: 'shared' }).verdict, 'ask');
  });

  test('rule 1 goes by the declared effect, not the name', () => {
    const userTab = { mode: 'shared', tab: { id: 'p3', ownedByAgent: false } } as const;
    assert.equal(verdict({ ...userTab, tool: 'close_page' }).verdict, 'ask');
    assert.equal(verdict({ ...userTab, tool: 'shut_tab', closesTab: true }).verdict, 'block');
    assert.equal(verdict({ tool: 'browser_connect', kind: 'mode', frames: [] }).verdict, 'allow');
    assert.equal(
      verdict({ tool: 'use_chrome', attachesUserBrowser: true, kind: 'mode', frames: [] }).verdict,
      'ask',
    );
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
    // Any write on another origin's page may make it send what it was given: a click asks too.
    assert.equal(
      verdict({ ...tainted, carriesData: false, frames: [{ url: 'https://evil.example/' }] }).verdict,
      'ask',
    );
    const read = verdict({
      ...tainted,
      kind: 'read',
      tool: 'take_snapshot',
      carriesData: false,
      frames: [{ url: 'https://evil.example/' }],
    });
    assert.equal(read.verdict, 'allow', 'reading another page carries nothing');
    const byPath = verdict({
      ...tainted,
      carriesData: false,
      tool: 'new_page',
      kind: 'navigate',
      frames: [],
      destination: 'https://evil.example/ghp_x',
    });
    assert.equal(byPath.verdict, 'ask', 'a path carries data as well as a query');
  });

  test('external tools, destructive-looking writes and typed secrets', () => {
    const external = verdict({ tool: 'notes__write', frames: [], external: true });
    assert.ok(external.verdict === 'ask' && external.rule === 'external-tool' && external.approveAllAllowed);
    assert.equal(verdict({ tool: 'notes__read', kind: 'read', frames: [], external: true }).verdict, 'allow');
    const refund = verdict({
      policy: 'destructive-asks',
      looksDestructive: 'its label "Refund" reads as destructive',
    });
    assert.ok(refund.verdict === 'ask' && refund.rule === 'destructive');
    assert.equal(verdict({ policy: 'destructive-asks' }).verdict, 'allow');
    const shot = verdict({ tool: 'take_screenshot', kind: 'read', touchesTypedSecret: true });
    assert.ok(shot.verdict === 'ask' && shot.rule === 'typed-secret' && !shot.approveAllAllowed);
    const repost = verdict({
      tool: 'navigate_page',
      kind: 'navigate',
      repostsForm: true,
      destination: 'https://shop.example/pay',
    });
    assert.ok(repost.verdict === 'ask' && repost.rule === 'form-resubmission');
  });

  test('a frame is judged by where it was loaded from as well as the URL it shows', () => {
    const renamed = verdict({
      frames: [{ url: 'https://github.com/acme', loadedUrl: 'https://github.com/settings/tokens' }],
    });
    assert.ok(renamed.verdict === 'ask' && renamed.sensitive);
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
    const decision = verdict({
      tool: 'browser_connect',
      attachesUserBrowser: true,
      kind: 'mode',
      frames: [],
    });
    assert.ok(decision.verdict === 'ask' && decision.rule === 'use-your-chrome');
    assert.equal(
      verdict({
        tool: 'browser_connect',
        attachesUserBrowser: true,
        kind: 'mode',
        mode: 'remote',
        frames: [],
      }).verdict,
      'ask',
    );
    assert.equal(verdict({ tool: 'browser_disconnect', kind: 'mode', frames: [] }).verdict, 'allow');
  });
});

describe('guard: relay site calls (facts from core/siteCalls.ts)', () => {
  const site = (
    tool: { name: string; readOnly: boolean },
    documentUrl: string,
    standingAllow: boolean,
    more: Partial<GuardFacts> = {},
  ) =>
    decide(
      { ...base, mode: 'shared', ...siteCallFacts({ tool, documentUrl, standingAllow }), ...more },
      rules,
    );
  const write = { name: 'addToCart', readOnly: false };
  const read = { name: 'searchProducts', readOnly: true };

  test('a read-only tool runs; a write asks, approve-all allowed; "always allow" lets a write run', () => {
    assert.equal(site(read, 'https://shop.example/', false).verdict, 'allow');
    const asked = site(write, 'https://shop.example/', false);
    assert.ok(asked.verdict === 'ask' && asked.rule === 'site-write' && asked.approveAllAllowed);
    const always = site(write, 'https://shop.example/', true);
    assert.equal(always.verdict, 'allow');
    assert.match(always.reason, /always allow/);
  });

  test('the document that will run it decides: a sensitive one asks even under "always allow" or read-only', () => {
    for (const tool of [read, write])
      for (const standingAllow of [true, false]) {
        const decision = site(tool, 'https://github.com/acme/repo/settings/keys', standingAllow);
        assert.ok(
          decision.verdict === 'ask' && decision.sensitive && !decision.approveAllAllowed,
          `${tool.name} always=${standingAllow}`,
        );
        assert.equal(decision.rule, '*://github.com/*/settings/*');
        assert.match(decision.reason, /every call asks/);
      }
    assert.equal(site(write, 'https://github.com/acme/repo', true).verdict, 'allow');
  });

  test('a read-only hint on a name that reads destructive is not believed', () => {
    for (const name of ['deleteAllItems', 'refund_order', 'cancel-subscription', 'transferFunds']) {
      const decision = site({ name, readOnly: true }, 'https://shop.example/', false);
      assert.ok(decision.verdict === 'ask' && decision.rule === 'site-write', name);
    }
    assert.equal(
      site({ name: 'listOrders', readOnly: true }, 'https://shop.example/', false).verdict,
      'allow',
    );
  });

  test('the general rules reach site calls: taint and a rule added to the set', () => {
    const tainted = site(write, 'https://shop.example/', true, {
      taintedOrigins: ['https://www.paypal.com'],
    });
    assert.ok(tainted.verdict === 'ask' && tainted.rule === 'taint');
    const extra = new RuleSet([
      ...defaultRules(),
      { pattern: compilePattern('*://shop.example/admin/*'), origin: 'test' },
    ]);
    const decision = decide(
      {
        ...base,
        mode: 'shared',
        ...siteCallFacts({ tool: write, documentUrl: 'https://shop.example/admin/x', standingAllow: true }),
      },
      extra,
    );
    assert.ok(decision.verdict === 'ask' && decision.rule === '*://shop.example/admin/*');
  });
});

test('a script on any page of an origin with a path rule is judged by that rule; other tools are not', () => {
  const rules = new RuleSet(defaultRules());
  const facts = {
    tool: 'evaluate_script',
    kind: 'write' as const,
    mode: 'isolated' as const,
    frames: [{ url: 'https://github.com/acme/repo' }],
    carriesData: true,
    runsScript: true,
    taintedOrigins: [],
    policy: 'default' as const,
    approveAll: false,
  };
  const decision = decide(facts, rules);
  assert.equal(decision.verdict, 'ask');
  assert.match(decision.reason, /can reach its sensitive pages \(rule \*:\/\/github\.com\/settings\/\*\)/);
  const moved = decide(
    { ...facts, frames: [{ url: 'https://gist.example/x', loadedUrl: 'https://github.com/a' }] },
    rules,
  );
  assert.equal(moved.verdict, 'ask');
  assert.equal(decide({ ...facts, runsScript: false, tool: 'click' }, rules).verdict, 'allow');
  assert.equal(decide({ ...facts, frames: [{ url: 'https://notes.example/' }] }, rules).verdict, 'allow');
});

test("after a sensitive read, a read-only site tool's arguments toward another origin ask (they carry data)", () => {
  const rules = new RuleSet(defaultRules());
  const facts = {
    tool: 'call_site_tool',
    kind: 'read' as const,
    mode: 'isolated' as const,
    frames: [{ url: 'https://shop.example/search' }],
    carriesData: true,
    taintedOrigins: ['https://github.com'],
    policy: 'default' as const,
    approveAll: false,
  };
  const decision = decide(facts, rules);
  assert.equal(decision.verdict, 'ask');
  assert.match(
    decision.reason,
    /data read on sensitive https:\/\/github\.com could be sent to https:\/\/shop\.example/,
  );
  assert.equal(decide({ ...facts, taintedOrigins: [] }, rules).verdict, 'allow');
  assert.equal(decide({ ...facts, carriesData: false }, rules).verdict, 'allow');
});

test('a yes to a taint question allows only the hosts it names, and it names only what fits whole', () => {
  const rules = new RuleSet(defaultRules());
  const longHost = (n: number) =>
    `https://${'payroll-benefits-and-pension-self-service'.repeat(2)}-${n}.corp.example`;
  const facts: GuardFacts = {
    tool: 'click',
    kind: 'write',
    mode: 'isolated',
    frames: [{ url: 'https://docs.example/post' }],
    carriesData: false,
    // Many sensitive sites read, with long names: they must not push the hosts allowed out of the line.
    taintedOrigins: ['https://github.com', longHost(1), longHost(2), longHost(3), 'https://mail.google.com'],
    effects: [
      // A form whose long action comes first: shown cut, so not covered, and not allowed.
      { url: `https://docs.example/search?q=${'a'.repeat(1_200)}`, submitsForm: true },
      { url: 'https://evil.example/x', submitsForm: false },
    ],
    policy: 'default',
    approveAll: false,
  };
  const decision = decide(facts, rules);
  assert.equal(decision.verdict, 'ask');
  if (decision.verdict !== 'ask') return;
  assert.ok(decision.reason.length <= 300, `${decision.reason.length}: ${decision.reason}`);
  for (const origin of decision.taintAllows ?? [])
    assert.ok(decision.reason.includes(origin), `${origin} is allowed but not named`);
  assert.ok(
    !decision.taintAllows?.includes('https://evil.example'),
    'a link the Sends: line left out is allowed',
  );
  assert.match(
    decision.reason,
    /github\.com and 4 more could be sent to https:\/\/docs\.example;.*\(1 other place/,
  );
  // Shown whole, a place is named and allowed.
  const short = decide({ ...facts, effects: [{ url: 'https://blog.example/p', submitsForm: false }] }, rules);
  assert.ok(short.verdict === 'ask' && short.taintAllows?.includes('https://blog.example'));
  assert.ok(short.verdict === 'ask' && short.taintAllows?.includes('https://docs.example'));
});
