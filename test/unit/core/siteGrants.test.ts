// Site grants ("allow writes like this on this site for 15 min / 1 h"): the store (expiry on an injected clock,
// exact-origin match, revocation), which writes one may cover, and the call path offering, honouring and auditing
// them, never on a sensitive page.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApprovalChoice, ApprovalRequest, Approver } from '../../../src/core/approvals.ts';
import type { AuditEntry, AuditStart } from '../../../src/core/audit.ts';
import { type ActionFacts, CallPath, type GuardedAction } from '../../../src/core/callPath.ts';
import { decide, type GuardFacts } from '../../../src/core/guard.ts';
import { Redactor } from '../../../src/core/redact.ts';
import { RuleSet } from '../../../src/core/sensitiveRules.ts';
import { SiteGrants, siteGrantOrigin } from '../../../src/core/siteGrants.ts';
import { compilePattern } from '../../../src/core/urlPattern.ts';

const shop = 'https://shop.example';
const write: ActionFacts = {
  tool: 'click',
  kind: 'write',
  tab: { id: 'p1', ownedByAgent: true },
  frames: [{ url: `${shop}/cart` }],
  carriesData: false,
};
const rules = new RuleSet([{ pattern: compilePattern('*://shop.example/account/*'), origin: 'test' }]);

describe('the site grant store', () => {
  test('covers its tool on its exact origin until it expires (injected clock)', () => {
    let now = 0;
    const grants = new SiteGrants(() => now);
    grants.grant(shop, 'click', 15, 'terminal');
    assert.equal(grants.covering('click', write)?.origin, shop);
    assert.equal(grants.covering('fill', write), undefined, 'another tool');
    const at = (url: string) => ({ ...write, frames: [{ url }] });
    assert.equal(grants.covering('click', at('https://shop.example:8443/cart')), undefined, 'another port');
    assert.equal(grants.covering('click', at('http://shop.example/cart')), undefined, 'another scheme');
    assert.equal(grants.covering('click', at('https://www.shop.example/cart')), undefined, 'a subdomain');
    assert.ok(
      grants.covering('click', at('https://shop.example:443/other')),
      'the default port is the origin',
    );
    assert.match(
      grants.describe(grants.list()[0] ?? assert.fail()),
      /click on https:\/\/shop\.example, 15 min left/,
    );
    now = 15 * 60_000 - 1;
    assert.ok(grants.covering('click', write), 'still live a moment before');
    now = 15 * 60_000;
    assert.equal(grants.covering('click', write), undefined, 'expired');
    assert.deepEqual(grants.list(), []);
  });

  test('one hour; renewing replaces; revoked by position or all at once', () => {
    let now = 0;
    const grants = new SiteGrants(() => now);
    grants.grant(shop, 'click', 15, 'terminal');
    grants.grant('https://notes.example', 'fill', 60, 'elicitation');
    grants.grant(shop, 'click', 60, 'terminal');
    assert.deepEqual(
      grants.list().map((grant) => `${grant.tool} ${grant.origin} ${grant.minutes}`),
      ['fill https://notes.example 60', 'click https://shop.example 60'],
    );
    now = 59 * 60_000;
    assert.ok(grants.covering('click', write));
    assert.equal(grants.revoke(3), undefined, 'no third grant');
    assert.equal(grants.revoke(2)?.origin, shop);
    assert.equal(grants.covering('click', write), undefined, 'revoked');
    assert.equal(grants.clear(), 1);
    assert.equal(grants.lines(), undefined);
  });
});

describe('which writes a site grant may cover', () => {
  test('one http(s) origin from the target frame to the top page, nothing sent elsewhere', () => {
    assert.equal(siteGrantOrigin(write), shop);
    const frames = (...urls: string[]) => ({ ...write, frames: urls.map((url) => ({ url })) });
    assert.equal(siteGrantOrigin(frames(`${shop}/frame`, `${shop}/`)), shop);
    assert.equal(
      siteGrantOrigin(frames('https://pay.example/f', `${shop}/`)),
      undefined,
      'cross-origin frame',
    );
    assert.equal(siteGrantOrigin(frames(`${shop}/frame`, 'https://evil.example/')), undefined, 'framed');
    assert.equal(
      siteGrantOrigin({
        ...write,
        frames: [{ url: 'about:blank', creatorUrl: `${shop}/` }, { url: `${shop}/` }],
      }),
      shop,
      'about:blank inherits its creator',
    );
    assert.equal(siteGrantOrigin(frames('data:text/html,x')), undefined, 'opaque');
    assert.equal(siteGrantOrigin({ ...write, frames: [] }), undefined, 'no page');
    const effect = (url: string, submitsForm = true) => ({ ...write, effects: [{ url, submitsForm }] });
    assert.equal(siteGrantOrigin(effect(`${shop}/save`)), shop);
    assert.equal(
      siteGrantOrigin(effect('https://other.example/save')),
      undefined,
      'a form posting elsewhere',
    );
    assert.equal(siteGrantOrigin(effect('https://other.example/', false)), undefined, 'a link elsewhere');
    assert.equal(
      siteGrantOrigin({ ...write, frames: [{ url: `${shop}/a`, loadedUrl: 'https://other.example/a' }] }),
      undefined,
      'loaded elsewhere',
    );
  });

  test('never for scripts, uploads, secrets, site tools, other servers, destructive reads or the user tab', () => {
    const never: Partial<ActionFacts>[] = [
      { kind: 'navigate' },
      { kind: 'read' },
      { runsScript: true },
      { exportsLocalFiles: true },
      { external: true },
      { site: {} },
      { secrets: [{ name: 'PW', origin: shop, placement: 'bound-here' }] },
      { touchesTypedSecret: true },
      { looksDestructive: 'its label says "Delete"' },
      { repostsForm: true },
      { tab: { id: 'p2', ownedByAgent: false } },
    ];
    for (const more of never)
      assert.equal(siteGrantOrigin({ ...write, ...more }), undefined, JSON.stringify(more));
  });

  test('the guard honours one only for an ordinary write (rule 6): never sensitive pages, taint or user tabs', () => {
    const facts: GuardFacts = {
      ...write,
      mode: 'shared',
      taintedOrigins: [],
      policy: 'default',
      approveAll: false,
      siteGrant: 'click on https://shop.example, 15 min left (given through terminal)',
    };
    assert.equal(decide(facts, rules).verdict, 'allow');
    const sensitive = decide({ ...facts, frames: [{ url: `${shop}/account/close` }] }, rules);
    assert.ok(sensitive.verdict === 'ask' && sensitive.sensitive);
    const tainted = decide({ ...facts, taintedOrigins: ['https://bank.example'] }, rules);
    assert.ok(tainted.verdict === 'ask' && tainted.rule === 'taint');
    const userTab = decide({ ...facts, tab: { id: 'p3', ownedByAgent: false } }, rules);
    assert.ok(userTab.verdict === 'ask' && userTab.rule === 'user-tab');
  });
});

/** A call path in shared mode over fake actions, its human answering from a queue. */
function rig() {
  let now = 0;
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
  const path = new CallPath({
    rules,
    audit: { record: (entry) => records.push(entry) },
    policy: 'default',
    mode: () => 'shared',
    redactor: () => new Redactor([]),
    clock: () => now,
    passMaxMs: 1_000,
  });
  const acted: string[] = [];
  const action = (url: string, tool = 'click'): GuardedAction<string> => ({
    name: tool,
    args: {},
    look: async () => ({ facts: { ...write, tool, frames: [{ url }] }, binding: `${tool}@${url}`, url }),
    act: async () => {
      acted.push(url);
      return 'done';
    },
    skipped: () => 'skipped',
  });
  const run = (url: string, tool?: string) =>
    path.run(action(url, tool), { frontEnd: 'test', approver, signal: new AbortController().signal });
  const last = () => records.at(-1) as AuditEntry;
  return { path, run, questions, answers, acted, last, tick: (ms: number) => (now += ms) };
}

describe('site grants on the call path', () => {
  test('offered on an ordinary write, given, honoured on the same origin and audited as the grant', async () => {
    const { path, run, questions, answers, last, tick } = rig();
    answers.push({ choice: 'site-grant', minutes: 15 });
    await run(`${shop}/cart`);
    assert.deepEqual(questions[0]?.siteGrant, { origin: shop, tool: 'click' });
    assert.equal(last().choice, 'site-grant https://shop.example 15m');
    assert.equal(last().approver, 'test human');

    await run(`${shop}/other`);
    assert.equal(questions.length, 1, 'the same tool on the same origin: not asked');
    assert.equal(last().decision, 'allow');
    assert.match(last().reason ?? '', /^covered by a site grant: click on https:\/\/shop\.example/);
    assert.equal(last().choice, 'site-grant https://shop.example 15m');
    assert.equal(last().approver, 'site grant (given through test human)');

    await assert.rejects(run('https://other.example/'), /rejected/);
    assert.equal(questions.length, 2, 'another origin asks');
    assert.deepEqual(questions[1]?.siteGrantsInForce, [
      'click on https://shop.example, 15 min left (given through test human)',
    ]);
    await assert.rejects(run(`${shop}/cart`, 'fill'), /rejected/);
    assert.equal(questions.length, 3, 'another tool asks');

    tick(15 * 60_000);
    await assert.rejects(run(`${shop}/cart`), /rejected/);
    assert.equal(questions.length, 4, 'expired: asks again');
    assert.deepEqual(path.state.siteGrantList(), []);
  });

  test('never offered nor honoured on a sensitive page; a forged answer there counts as one approval', async () => {
    const { path, run, questions, answers, acted, last } = rig();
    answers.push({ choice: 'site-grant', minutes: 60 });
    await run(`${shop}/account/close`);
    assert.equal(questions[0]?.siteGrant, undefined, 'not offered');
    assert.equal(questions[0]?.sensitive, true);
    assert.equal(last().choice, 'approve', 'approved once, nothing granted');
    assert.deepEqual(path.state.siteGrantList(), []);

    path.state.grantSite(shop, 'click', 60, 'test human');
    await assert.rejects(run(`${shop}/account/close`), /rejected/);
    assert.equal(questions.length, 2, 'a grant on the origin does not cover its sensitive pages');
    assert.deepEqual(acted, [`${shop}/account/close`]);
  });

  test('the revoke choice ends every site grant and rejects the call', async () => {
    const { path, run, answers } = rig();
    path.state.grantSite(shop, 'click', 15, 'test human');
    answers.push({ choice: 'revoke-site-grants' });
    await assert.rejects(run('https://other.example/'), /revoked the site grants \(1\)/);
    assert.deepEqual(path.state.siteGrantList(), []);
  });
});
