// An agent's session in the audit log, turned into a recipe: which calls become which steps, what is marked
// write, where waits go, secrets by name only, and where the recipe stops when a call cannot be replayed.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AuditEntry, AuditTarget } from '../../../src/core/audit.ts';
import type { TabwardError } from '../../../src/core/errors.ts';
import { redactionMark } from '../../../src/core/redact.ts';
import { browsingSessions, recipeFromAudit } from '../../../src/recipes/recipeFromAudit.ts';

const site = 'http://intranet.acme.test:8080';
let seq = 0;

function call(
  tool: string,
  kind: string,
  args: Record<string, unknown>,
  more: Partial<AuditEntry> = {},
): AuditEntry {
  seq++;
  return {
    time: new Date(Date.UTC(2026, 0, 1, 10, 0, seq)).toISOString(),
    session: 'sA',
    call: `x-${seq}`,
    frontEnd: 'mcp',
    tool,
    kind,
    args,
    mode: 'isolated',
    decision: 'allow',
    outcome: 'ok',
    durationMs: 5,
    ...more,
  };
}

const at = (selector: string, more: Partial<AuditTarget> = {}): AuditTarget => ({
  selector,
  tag: 'BUTTON',
  ...more,
});

/** The demo's story as the log holds it: login with a secret, a sensitive page, a rejected and an approved click. */
function story(): AuditEntry[] {
  const login = `${site}/login?next=%2Fwiki%2Fprivate`;
  return [
    call('new_page', 'navigate', { url: `${site}/wiki/public` }, { url: `${site}/wiki/public` }),
    call('take_snapshot', 'read', {}, { url: `${site}/wiki/public` }),
    call('navigate_page', 'navigate', { url: `${site}/wiki/private` }, { url: `${site}/wiki/private` }),
    call(
      'fill_form',
      'write',
      {
        fields: [
          { ref: 'e3', value: 'alice' },
          { ref: 'e4', secret: 'ACME_PASSWORD' },
        ],
      },
      {
        url: login,
        targets: {
          e3: at('input[name="username"]', { tag: 'INPUT' }),
          e4: at('input[name="password"]', { tag: 'INPUT' }),
        },
      },
    ),
    call('click', 'write', { ref: 'e5' }, { url: login, targets: { e5: at('role=button[name="Sign in"]') } }),
    call(
      'navigate_page',
      'navigate',
      { url: `${site}/admin/settings` },
      { url: `${site}/admin/settings`, decision: 'ask', choice: 'approve' },
    ),
    call(
      'click',
      'write',
      { ref: 'e7' },
      {
        url: `${site}/admin/settings`,
        decision: 'ask',
        outcome: 'rejected',
        targets: { e7: at('role=button[name="Delete workspace"]', { destructive: 'its label' }) },
      },
    ),
    call(
      'click',
      'write',
      { ref: 'e6' },
      {
        url: `${site}/admin/settings`,
        decision: 'ask',
        choice: 'approve',
        targets: { e6: at('role=button[name="Save"]') },
      },
    ),
  ];
}

describe('recipes from the audit log', () => {
  test("the demo's story becomes gotos, typing, clicks and waits, writes marked from the guard's decisions", () => {
    const { recipe, session, notes } = recipeFromAudit(story());
    assert.equal(session, 'sA');
    assert.deepEqual(notes, []);
    assert.equal(recipe.url, `${site}/wiki/public`);
    assert.deepEqual(recipe.steps, [
      { action: 'goto', url: `${site}/wiki/private` },
      { action: 'waitFor', selector: 'input[name="username"]' },
      { action: 'type', selector: 'input[name="username"]', text: 'alice' },
      { action: 'type', selector: 'input[name="password"]', secret: 'ACME_PASSWORD' },
      { action: 'click', selector: 'role=button[name="Sign in"]' },
      { action: 'goto', url: `${site}/admin/settings`, write: true },
      { action: 'waitFor', selector: 'role=button[name="Save"]' },
      { action: 'click', selector: 'role=button[name="Save"]', write: true },
    ]);
    assert.match(recipe.description ?? '', /session sA/);
  });

  test('a literal that was a secret is saved by its name; a value holding part of one ends the recipe', () => {
    const page = `${site}/login`;
    const typed = (value: string, target: AuditTarget) =>
      call('fill', 'write', { ref: 'e1', value }, { url: page, targets: { e1: target } });
    const named = recipeFromAudit([
      call('new_page', 'navigate', { url: page }, { url: page }),
      typed(redactionMark, at('#password', { tag: 'INPUT', secret: 'ACME_PASSWORD' })),
    ]);
    assert.deepEqual(named.recipe.steps.at(-1), {
      action: 'type',
      selector: '#password',
      secret: 'ACME_PASSWORD',
    });
    const partial = recipeFromAudit([
      call('new_page', 'navigate', { url: page }, { url: page }),
      typed(`user ${redactionMark}`, at('#password', { tag: 'INPUT' })),
      call('click', 'write', { ref: 'e2' }, { url: page, targets: { e2: at('#go') } }),
    ]);
    assert.deepEqual(partial.recipe.steps, []);
    assert.match(partial.notes[0] ?? '', /stopped at call .* typed a value holding a secret/);
    assert.ok(!JSON.stringify(partial.recipe).includes(redactionMark));
  });

  test('an element with no lasting selector ends the recipe there: no step after a hole', () => {
    const page = `${site}/portal/orders`;
    const { recipe, notes } = recipeFromAudit([
      call('new_page', 'navigate', { url: page }, { url: page }),
      call('click', 'write', { ref: 'e1' }, { url: page, targets: { e1: at('#export') } }),
      call(
        'click',
        'write',
        { ref: 'e2' },
        { url: page, targets: { e2: { tag: 'BUTTON', unreplayable: 'no test id, id...' } } },
      ),
      call('click', 'write', { ref: 'e3' }, { url: page, targets: { e3: at('#next') } }),
    ]);
    assert.deepEqual(
      recipe.steps.map((step) => step.action),
      ['waitFor', 'click'],
    );
    assert.match(notes[0] ?? '', /stopped at call .*cannot be found again: no test id/);
  });

  test('writes outside the isolated browser and destructive-looking clicks are marked write; selects and key presses', () => {
    const page = `${site}/portal/orders`;
    const { recipe } = recipeFromAudit([
      call('new_page', 'navigate', { url: page }, { url: page }),
      call(
        'fill',
        'write',
        { ref: 'e1', value: 'paid' },
        { url: page, mode: 'shared', targets: { e1: at('#status', { tag: 'SELECT' }) } },
      ),
      call(
        'click',
        'write',
        { ref: 'e2' },
        { url: page, targets: { e2: at('[data-testid="refund"]', { destructive: 'its label' }) } },
      ),
      call('press_key', 'write', { key: 'Enter' }, { url: page }),
    ]);
    assert.deepEqual(recipe.steps, [
      { action: 'waitFor', selector: '#status' },
      { action: 'select', selector: '#status', value: 'paid', write: true },
      { action: 'click', selector: '[data-testid="refund"]', write: true },
      { action: 'press', key: 'Enter' },
    ]);
  });

  test('a call that made the page post is marked write, whatever its label: click, Enter without a ref, a field', () => {
    const page = `${site}/comments`;
    const posted = { sent: `POST ${site}/comment` };
    const { recipe } = recipeFromAudit([
      call('new_page', 'navigate', { url: page }, { url: page }),
      call(
        'fill',
        'write',
        { ref: 'e1', value: 'hi' },
        { url: page, targets: { e1: at('#text', { tag: 'INPUT', ...posted }) } },
      ),
      call('click', 'write', { ref: 'e2' }, { url: page, targets: { e2: at('#post', posted) } }),
      call('press_key', 'write', { key: 'Enter' }, { url: page, targets: { '(focused)': posted } }),
      call('press_key', 'write', { key: 'Tab' }, { url: page }),
    ]);
    assert.deepEqual(recipe.steps, [
      { action: 'waitFor', selector: '#text' },
      { action: 'type', selector: '#text', text: 'hi', write: true },
      { action: 'click', selector: '#post', write: true },
      { action: 'press', key: 'Enter', write: true },
      { action: 'press', key: 'Tab' },
    ]);
  });

  test('a click that changed the page is followed by a wait for the next element', () => {
    const { recipe } = recipeFromAudit([
      call('new_page', 'navigate', {}, { url: `${site}/a` }),
      call('click', 'write', { ref: 'e1' }, { url: `${site}/a`, targets: { e1: at('#next') } }),
      call('click', 'write', { ref: 'e2' }, { url: `${site}/b`, targets: { e2: at('#more') } }),
      call('click', 'write', { ref: 'e3' }, { url: `${site}/b`, targets: { e3: at('#again') } }),
    ]);
    assert.deepEqual(
      recipe.steps.map((step) => `${step.action} ${'selector' in step ? step.selector : ''}`),
      ['waitFor #next', 'click #next', 'waitFor #more', 'click #more', 'click #again'],
    );
  });

  test('sessions: the latest that browsed by default, another by id; recipe runs are not browsing', () => {
    const older = story().map((entry) => ({ ...entry, session: 'sOld' }));
    const runs = [call('recipe goto', 'goto', {}, { session: 'sRun', frontEnd: 'run', url: `${site}/x` })];
    const log = [...older, ...story(), ...runs];
    assert.deepEqual(
      browsingSessions(log).map((each) => each.session),
      ['sOld', 'sA'],
    );
    assert.equal(recipeFromAudit(log).session, 'sA');
    assert.equal(recipeFromAudit(log, { session: 'sOld' }).session, 'sOld');
    const said = (work: () => unknown) => {
      try {
        work();
      } catch (error) {
        return (error as TabwardError).describe();
      }
      return 'no error';
    };
    assert.match(
      said(() => recipeFromAudit(log, { session: 'sRun' })),
      /No browsing session sRun.*Latest sessions: sA/,
    );
    assert.match(
      said(() => recipeFromAudit([])),
      /no browsing session to save/,
    );
  });

  test('a session whose first page needs confirming starts at its origin and reaches the page by a write step', () => {
    const { recipe, notes } = recipeFromAudit([
      call('new_page', 'navigate', {}, { url: `${site}/admin/settings`, decision: 'ask', choice: 'approve' }),
    ]);
    assert.equal(recipe.url, `${site}/`);
    assert.deepEqual(recipe.steps, [{ action: 'goto', url: `${site}/admin/settings`, write: true }]);
    assert.match(notes[0] ?? '', /starts at/);
  });
});
