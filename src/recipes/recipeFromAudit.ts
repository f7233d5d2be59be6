// An agent's browsing saved as a recipe: the successful steps of one session of the audit log (core/audit.ts),
// turned into recipe v1 steps. Navigations become `goto`, fills `type` (secrets by name: the log never holds a
// value) or `select`, clicks and key presses `click` and `press` on the selectors recorded when they acted; reads
// are left out. A step is marked `write` when the guard asked about it, when it changed something outside the
// isolated browser, or when it reads as destructive: more steps marked than fewer. A `waitFor` the next element
// follows each navigation. A call that cannot be replayed ends the recipe there (a prefix of what happened is
// safe to run; a sequence with a hole in it is not), and the notes say why.

import { type AuditEntry, type AuditTarget, focusedTargetKey } from '../core/audit.ts';
import { destructiveReason } from '../core/destructive.ts';
import { TabwardError } from '../core/errors.ts';
import { redactionMark } from '../core/redact.ts';
import { parseRecipe } from './parseRecipe.ts';
import type { Recipe, RecipeStep } from './recipeSchema.ts';

/** The front ends whose calls are an agent's browsing (recipe runs and the relay are not). */
const browsingFrontEnds = new Set(['mcp', 'agent']);

export interface SessionSummary {
  readonly session: string;
  readonly first: string;
  readonly last: string;
  readonly calls: number;
}

export interface RecipeFromAudit {
  readonly recipe: Recipe;
  readonly session: string;
  /** Calls left out, and why. */
  readonly notes: string[];
}

/** The sessions that browsed, oldest first. */
export function browsingSessions(entries: readonly AuditEntry[]): SessionSummary[] {
  const byId = new Map<string, SessionSummary>();
  for (const entry of entries) {
    if (!entry.session || !entry.call || !browsingFrontEnds.has(entry.frontEnd)) continue;
    const known = byId.get(entry.session);
    byId.set(entry.session, {
      session: entry.session,
      first: known?.first ?? entry.time,
      last: entry.time,
      calls: (known?.calls ?? 0) + 1,
    });
  }
  return [...byId.values()].sort((a, b) => a.last.localeCompare(b.last));
}

/** The recipe of one session (default: the latest that browsed). */
export function recipeFromAudit(
  entries: readonly AuditEntry[],
  options: {
    readonly session?: string | undefined;
    readonly name?: string | undefined;
    /** The agent's own session only (save_recipe): an error names no other session, another agent's included. */
    readonly ownOnly?: boolean;
  } = {},
): RecipeFromAudit {
  const sessions = browsingSessions(entries);
  const session = options.session ?? sessions.at(-1)?.session;
  const summary = sessions.find((each) => each.session === session);
  if (!session || !summary) throw noSession(options.session, options.ownOnly ? [] : sessions);
  const calls = entries.filter(
    (entry) => entry.session === session && entry.call && browsingFrontEnds.has(entry.frontEnd),
  );
  const notes: string[] = [];
  const planned: Planned[] = [];
  for (const entry of calls) {
    if (entry.outcome !== 'ok' || entry.kind === 'read' || entry.kind === 'mode') continue;
    const converted = stepsOf(entry);
    if ('stop' in converted) {
      notes.push(
        `stopped at call ${entry.call} (${entry.tool}): ${converted.stop}; later calls are left out`,
      );
      break;
    }
    if (converted.note) notes.push(`call ${entry.call} (${entry.tool}) left out: ${converted.note}`);
    planned.push(...converted.steps);
  }
  const start = startAndSteps(planned, notes);
  const steps = withWaits(start.steps);
  const recipe = parseRecipe(
    {
      version: 1,
      name: options.name ?? `Saved from tabward session ${session}`,
      description: describe(summary, steps.length, notes),
      url: start.url,
      steps,
    },
    `the recipe of session ${session}`,
  );
  return { recipe, session, notes };
}

/** A step with the page it acted on (the destination, for a goto): where the waits go comes from it. */
interface Planned {
  readonly step: RecipeStep;
  readonly page: string;
}

type Converted = { steps: Planned[]; note?: string } | { stop: string };

/**
 * By the tool's name, not its declared effects: an audit record is data (written by this process or another, or an
 * older tabward), and the name is all it keeps of the tool. Each name maps to the recipe step it replays as.
 */
function stepsOf(entry: AuditEntry): Converted {
  const page = entry.url ?? '';
  const args = entry.args;
  switch (entry.tool) {
    case 'new_page':
    case 'navigate_page': {
      if (!entry.url) return { stop: 'the audit has no destination for it' };
      if (entry.url.includes(redactionMark)) return { stop: "its URL held a secret's value" };
      // A goto to an address that reads destructive is refused unmarked at run time (recipes/steps.ts lookAt).
      const write = entry.decision === 'ask' || destructiveReason('', [entry.url]) !== undefined;
      const step: RecipeStep = { action: 'goto', url: entry.url, ...writeFlag(write) };
      return { steps: [{ step, page: entry.url }] };
    }
    case 'click': {
      const target = targetOf(entry, args.ref);
      if ('stop' in target) return target;
      const note = args.doubleClick === true ? 'a double click is saved as one click' : undefined;
      const step: RecipeStep = {
        action: 'click',
        selector: target.selector,
        ...writeFlag(writes(entry, target)),
      };
      return { steps: [{ step, page }], ...(note ? { note } : {}) };
    }
    case 'press_key': {
      const key = typeof args.key === 'string' ? args.key : '';
      // The audit masks a character pressed into a password field (tools/inputTools.ts pressKey).
      if (key.includes(redactionMark))
        return {
          steps: [],
          note: 'a key pressed into a password field is not kept; type the password there with a `type` step and a secret',
        };
      if (args.ref === undefined) {
        const reached = entry.targets?.[focusedTargetKey];
        const step: RecipeStep = { action: 'press', key, ...writeFlag(writes(entry, reached)) };
        return { steps: [{ step, page }] };
      }
      const target = targetOf(entry, args.ref);
      if ('stop' in target) return target;
      const step: RecipeStep = {
        action: 'press',
        key,
        selector: target.selector,
        ...writeFlag(writes(entry, target)),
      };
      return { steps: [{ step, page }] };
    }
    case 'fill':
      return fillSteps(entry, [args]);
    case 'fill_form':
      return fillSteps(entry, Array.isArray(args.fields) ? (args.fields as Record<string, unknown>[]) : []);
    case 'hover':
    case 'resize_page':
      return { steps: [], note: 'recipes have no such step (it changes nothing a later step relies on)' };
    case 'select_page':
    case 'close_page':
      return { steps: [], note: 'a recipe runs in one tab' };
    default:
      return { stop: `recipes have no step for ${entry.tool}` };
  }
}

function fillSteps(entry: AuditEntry, fields: readonly Record<string, unknown>[]): Converted {
  const steps: Planned[] = [];
  for (const field of fields) {
    const target = targetOf(entry, field.ref);
    if ('stop' in target) return target;
    const write = writeFlag(writes(entry, target));
    const secret = typeof field.secret === 'string' ? field.secret : target.secret;
    const value = typeof field.value === 'string' ? field.value : '';
    let step: RecipeStep;
    if (secret !== undefined) step = { action: 'type', selector: target.selector, secret, ...write };
    // What the log shows of a value that held a secret is its mark: neither the value nor a name to type.
    else if (value.includes(redactionMark))
      return { stop: 'it typed a value holding a secret; type secrets by name ({"secret": "NAME"})' };
    else if (target.tag === 'SELECT') step = { action: 'select', selector: target.selector, value, ...write };
    else step = { action: 'type', selector: target.selector, text: value, ...write };
    steps.push({ step, page: entry.url ?? '' });
  }
  return { steps };
}

function targetOf(entry: AuditEntry, ref: unknown): (AuditTarget & { selector: string }) | { stop: string } {
  const target = typeof ref === 'string' ? entry.targets?.[ref] : undefined;
  if (!target) return { stop: 'the audit has no selector for its element (recorded by an older tabward?)' };
  if (!target.selector)
    return { stop: `its element cannot be found again: ${target.unreplayable ?? 'no selector'}` };
  if (target.selector.includes(redactionMark))
    return { stop: "its element's selector held a secret's value" };
  return { ...target, selector: target.selector };
}

/**
 * Whether a replay must be confirmed: the guard asked a human, the write happened outside the isolated browser
 * (an account was reachable), the element reads as destructive (the runner refuses those unmarked), or the page
 * sent a request that may change state while it ran (a form's POST, Enter in a form, a field that saves itself).
 */
function writes(entry: AuditEntry, target?: AuditTarget): boolean {
  return (
    entry.decision === 'ask' ||
    entry.mode !== 'isolated' ||
    target?.destructive !== undefined ||
    (target?.issued ?? target?.sent) !== undefined
  );
}

function writeFlag(write: boolean): { write?: true } {
  return write ? { write: true } : {};
}

/** The recipe's start is its first goto (unless that one needs confirming: the start cannot be marked `write`). */
function startAndSteps(planned: Planned[], notes: string[]): { url: string; steps: Planned[] } {
  const deduped = planned.filter((each, index) => {
    const before = planned[index - 1];
    return !(each.step.action === 'goto' && before?.step.action === 'goto' && before.page === each.page);
  });
  const [first] = deduped;
  if (!first) throw new TabwardError('not_found', 'The session has no successful steps to save as a recipe.');
  if (first.step.action === 'goto' && first.step.write !== true)
    return { url: first.step.url, steps: deduped.slice(1) };
  const at = first.page;
  let origin: string;
  try {
    origin = new URL(at).origin;
  } catch {
    throw new TabwardError(
      'not_found',
      `The session's first step was on ${at || 'no page'}: no place to start.`,
    );
  }
  notes.push(`the run starts at ${origin}/ (the session's first page is reached by a step)`);
  const start: Planned[] =
    first.step.action === 'goto' ? [] : [{ step: { action: 'goto', url: at }, page: at }];
  return { url: `${origin}/`, steps: [...start, ...deduped] };
}

/** A wait for the next element after each navigation: a goto, or a click or key press that changed the page. */
function withWaits(planned: readonly Planned[]): RecipeStep[] {
  const out: RecipeStep[] = [];
  planned.forEach((each, index) => {
    const before = planned[index - 1];
    const selector = 'selector' in each.step ? each.step.selector : undefined;
    const navigated =
      before === undefined ||
      before.step.action === 'goto' ||
      ((before.step.action === 'click' || before.step.action === 'press') && before.page !== each.page);
    if (selector && navigated) out.push({ action: 'waitFor', selector });
    out.push(each.step);
  });
  return out;
}

function describe(summary: SessionSummary, steps: number, notes: readonly string[]): string {
  const said = notes.length > 0 ? ` Notes: ${notes.join('; ')}.` : '';
  return (
    `Saved by tabward from the audit of session ${summary.session} (${summary.first} to ${summary.last}): ` +
    `${steps} steps from its successful calls; reads left out. Add an "extract" to read data at the end.${said}`
  );
}

function noSession(asked: string | undefined, sessions: readonly SessionSummary[]): TabwardError {
  const known = sessions
    .slice(-5)
    .reverse()
    .map((each) => `${each.session} (${each.calls} calls, last ${each.last})`)
    .join(', ');
  return new TabwardError(
    'not_found',
    asked
      ? `No browsing session ${asked} in the audit log.`
      : 'The audit log has no browsing session to save.',
    known ? `Latest sessions: ${known}.` : 'Browse with tabward mcp or tabward agent first.',
  );
}
