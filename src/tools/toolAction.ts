// A browser tool call as the call path sees it (core/callPath.ts): arguments parsed when first looked at (inside
// the audited path), live facts from the browser, the binding an approval is given for, the work, the pages the
// result read (the path taints by them), and the read the `snapshot` option asks for once it acted.

import { loadedUrlOf } from '../browser/loadedUrls.ts';
import type { TrackedPage } from '../browser/pages.ts';
import type { FollowUp, GuardedAction } from '../core/callPath.ts';
import { TabwardError } from '../core/errors.ts';
import { redactionMark } from '../core/redact.ts';
import { bindingOf, guardFacts, secretUses } from './callFacts.ts';
import type { Tool, ToolContext, ToolResult, ToolTarget } from './tool.ts';
import { text } from './tool.ts';

export type Args = Record<string, unknown>;

/**
 * What a call did: the arguments it acted with (a human may have modified them) and the tab it worked in (for
 * new_page, the tab it opened). Unset when it did nothing (skipped by the human).
 */
export interface Worked {
  args?: Args;
  tab?: TrackedPage | undefined;
  /** Its `snapshot` read was left to the login-wall switch (tools/runner.ts), which makes it. */
  snapshotDeferred?: boolean;
}

export interface ToolActionOptions {
  readonly context: ToolContext;
  readonly worked: Worked;
  /** The read to make once the call acted, given what it did; undefined: none. */
  readonly followUp?: (result: ToolResult, worked: Worked) => FollowUp | undefined;
}

export function toolAction(
  tool: Tool,
  parse: () => Args,
  options: ToolActionOptions,
): GuardedAction<ToolResult> {
  const { context, worked } = options;
  let args: Args | undefined;
  let target: ToolTarget | undefined;
  /** Arguments the result said to mask (ToolResult.maskedArgs). */
  let maskedOnActing: readonly string[] = [];
  const current = () => {
    args ??= parse();
    return args;
  };
  return {
    name: tool.name,
    get args() {
      return args ?? {};
    },
    look: async () => {
      target = await tool.target(current(), context);
      const facts = guardFacts(tool, current(), target, context.secrets);
      // An about:blank or srcdoc frame has no address of its own: the page is the document around it.
      const frame = target.frames.find((each) => !each.url.startsWith('about:')) ?? target.frames[0];
      const url = target.destination ?? frame?.url;
      const loadedFrom =
        !target.destination && frame?.loadedUrl && frame.loadedUrl !== frame.url
          ? frame.loadedUrl
          : undefined;
      return {
        facts,
        binding: bindingOf(tool, current(), target),
        ...(url ? { url } : {}),
        ...(loadedFrom ? { loadedFrom } : {}),
        ...(target.element ? { element: target.element } : {}),
        ...(target.fields ? { fields: target.fields } : {}),
        ...(target.dropOnto ? { dropOnto: target.dropOnto } : {}),
        ...(target.tab?.holdsTypedSecret ? { holdsTypedSecret: true } : {}),
        questionArgs: typedIntoSecretMasked(current(), target),
      };
    },
    act: async () => {
      const acted = requireTarget(target);
      const result = await tool.handle(current(), context, acted);
      maskedOnActing = result.maskedArgs ?? [];
      worked.args = current();
      // new_page has no tab until it acts: its result reads from the tab it opened.
      worked.tab = acted.tab ?? result.readFrom?.[0];
      return result;
    },
    auditArgs: () => {
      const masked = [...(target?.maskedArgs ?? []), ...maskedOnActing];
      const shown = { ...(args ?? {}) };
      for (const name of masked) if (name in shown) shown[name] = redactionMark;
      return shown;
    },
    auditTargets: (result) => result.targets,
    readsOf: pagesRead,
    ...(options.followUp ? { followUp: (result: ToolResult) => options.followUp?.(result, worked) } : {}),
    skipped: () => ({
      content: [text(`The user skipped ${tool.name}; nothing was done. Carry on without it.`)],
    }),
    withArgs: (modified) => toolAction(tool, () => parseArgs(tool, modified), options),
    onApproved: () => {
      const { secrets } = context;
      for (const use of secretUses(tool, current(), requireTarget(target), secrets))
        if (use.placement === 'new-origin') secrets.approveOrigin(use.name, use.origin);
    },
  };
}

/**
 * The arguments as a question shows them: each value the call types into a password field (a `{ref, value}` whose
 * ref is one: fill, fill_form) masked where it stands, and the arguments the target masks (a key pressed into one).
 * Elsewhere in the question a typed literal shows as it is (core/questionRedaction.ts): a page may have chosen it.
 */
function typedIntoSecretMasked(args: Args, target: ToolTarget): Args {
  const secretFields = target.secretFields ?? {};
  const masked = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(masked);
    if (value === null || typeof value !== 'object') return value;
    const entry = value as Args;
    const intoSecret =
      typeof entry.ref === 'string' &&
      typeof entry.value === 'string' &&
      secretFields[entry.ref] !== undefined;
    return Object.fromEntries(
      Object.entries(entry).map(([key, inner]) => [
        key,
        intoSecret && key === 'value' ? redactionMark : masked(inner),
      ]),
    );
  };
  const shown = masked(args) as Args;
  for (const name of target.maskedArgs ?? []) if (name in shown) shown[name] = redactionMark;
  return shown;
}

/**
 * Every frame of every tab (and page) the result shows, by the URL it shows and the one it was loaded from: a page
 * cannot launder a read by renaming itself. The call path taints by each a sensitive rule matches.
 */
function pagesRead(result: ToolResult): string[] {
  const urls: string[] = [];
  for (const tab of result.readFrom ?? [])
    for (const frame of tab.page.frames())
      for (const url of [frame.url(), loadedUrlOf(frame)]) if (url) urls.push(url);
  return [...urls, ...(result.readUrls ?? [])];
}

function requireTarget(target: ToolTarget | undefined): ToolTarget {
  if (!target) throw new TabwardError('internal', 'The call acted before its target was read.');
  return target;
}

/** An unknown tool still goes through the call path, so the attempt is audited like any other. */
export function unknownTool(name: string, args: unknown): GuardedAction<ToolResult> {
  return {
    name,
    args: typeof args === 'object' && args !== null ? (args as Args) : {},
    look: async () => {
      throw new TabwardError('not_found', `Unknown tool ${name}.`);
    },
    act: async () => {
      throw new TabwardError('not_found', `Unknown tool ${name}.`);
    },
    skipped: () => ({ content: [] }),
  };
}

export function parseArgs(tool: Tool, raw: unknown): Args {
  const parsed = tool.schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data as Args;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`,
  );
  throw new TabwardError('bad_input', `Bad arguments for ${tool.name}: ${problems.join('; ')}.`);
}
