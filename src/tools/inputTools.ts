// Input tools: click, hover, drag, fill, fill_form, press_key and upload_file, each on a snapshot ref.

import { realpathSync } from 'node:fs';
import { basename, resolve, sep } from 'node:path';
import { z } from 'zod';
import { durableTarget } from '../browser/durableSelector.ts';
import { describeLocator, type ResolvedElement } from '../browser/elements.ts';
import { focusedTarget } from '../browser/focusedElement.ts';
import type { TrackedPage } from '../browser/pages.ts';
import { activatingKey, pasteKey, pasteRefused } from '../core/activatingKeys.ts';
import { type AuditTarget, focusedTargetKey } from '../core/audit.ts';
import { quotedForDisplay } from '../core/displayText.ts';
import { TabwardError } from '../core/errors.ts';
import { type FrameFact, originOf } from '../core/guard.ts';
import {
  elementTarget,
  judgedDestructive,
  knownBy,
  literalIntoSecretField,
  pageTarget,
  requireTab,
  resolveJudged,
  runAction,
  secretFieldPlaceholder,
  snapshotOption,
  typingRoles,
} from './common.ts';
import { defineTool, type ToolContext, type ToolTarget, text } from './tool.ts';

const pageId = z.string().optional().describe('Tab id; default: the selected tab');
const ref = z.string().describe('Element ref from take_snapshot, e.g. e12');
const valueOrSecret = {
  value: z.string().optional(),
  secret: z.string().optional().describe('Name of a secret to type instead of value'),
};

export const click = defineTool({
  name: 'click',
  description: 'Click an element.',
  kind: 'write',
  schema: () => z.object({ ref, doubleClick: z.boolean().optional(), pageId, snapshot: snapshotOption() }),
  target: async (args, context) => {
    const target = await elementTarget(context, args.pageId, args.ref);
    return judgedDestructive(target, target.element?.name ?? '');
  },
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    const element = await resolveJudged(tab, args.ref, target, timeoutMs);
    const { locator } = element;
    // Before the click can change the page: how a saved recipe finds this element again.
    const found = await durableTarget(element, false, timeoutMs);
    const options = { timeout: timeoutMs };
    const mark = tab.activity.watchWrites();
    const line = await runAction(tab, `Clicking ${args.ref}`, timeoutMs + 1000, () =>
      args.doubleClick ? locator.dblclick(options) : locator.click(options),
    );
    const targets = { [args.ref]: withIssued(found, tab, mark) };
    return { content: [text(`Clicked ${describe(target)}. ${line}`)], targets };
  },
});

export const hover = defineTool({
  name: 'hover',
  description: 'Move the mouse over an element.',
  kind: 'write',
  schema: () => z.object({ ref, pageId, snapshot: snapshotOption() }),
  // A hover follows no link and submits no form: what the page makes of it is its own doing, held and asked.
  target: async (args, context) => withoutEffects(await elementTarget(context, args.pageId, args.ref)),
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    const { locator } = await resolveJudged(tab, args.ref, target, timeoutMs);
    const line = await runAction(tab, `Hovering ${args.ref}`, timeoutMs + 1000, () =>
      locator.hover({ timeout: timeoutMs }),
    );
    return { content: [text(`Hovered ${describe(target)}. ${line}`)] };
  },
});

export const drag = defineTool({
  name: 'drag',
  description: 'Drag one element onto another.',
  kind: 'write',
  schema: () => z.object({ fromRef: ref, toRef: ref, pageId }),
  target: async (args, context) => {
    const from = await elementTarget(context, args.pageId, args.fromRef);
    const to = await elementTarget(context, args.pageId, args.toRef);
    // A drop follows no link and submits no form: what the page makes of it is its own doing, held and asked.
    const both = {
      ...from,
      ...(to.element ? { dropOnto: to.element } : {}),
      frames: [...from.frames, ...to.frames],
      effects: [],
      fingerprints: { ...to.fingerprints, ...from.fingerprints },
    };
    return judgedDestructive(both, `${from.element?.name ?? ''} ${to.element?.name ?? ''}`);
  },
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    const from = await resolveJudged(tab, args.fromRef, target, timeoutMs);
    const to = await resolveJudged(tab, args.toRef, target, timeoutMs);
    const line = await runAction(tab, 'Dragging', timeoutMs + 1000, () =>
      from.locator.dragTo(to.locator, { timeout: timeoutMs }),
    );
    return { content: [text(`Dragged ${args.fromRef} onto ${args.toRef}. ${line}`)] };
  },
});

export const fill = defineTool({
  name: 'fill',
  description:
    'Type into a text field, or choose an option of a select. Give value, or secret (a secret name).',
  kind: 'write',
  schema: () => z.object({ ref, ...valueOrSecret, pageId }),
  carriesData: () => true,
  secretsUsed: (args) => (args.secret ? [{ name: args.secret, ref: args.ref }] : []),
  target: async (args, context) => {
    const target = await elementTarget(context, args.pageId, args.ref);
    literalIntoSecretField(context, target, args.ref, args.value);
    return target;
  },
  handle: async (args, context, target) => {
    const targets: Record<string, AuditTarget> = {};
    const line = await fillOne(
      context,
      target,
      args.ref,
      resolveValue(args, context),
      args.secret !== undefined,
      targets,
    );
    return {
      content: [
        text(`Filled ${describe(target)}${args.secret ? ` with secret ${args.secret}` : ''}. ${line}`),
      ],
      targets,
    };
  },
});

export const fillForm = defineTool({
  name: 'fill_form',
  description: 'Fill several fields at once.',
  kind: 'write',
  schema: () =>
    z.object({
      fields: z
        .array(z.object({ ref, ...valueOrSecret }))
        .min(1)
        .max(50),
      pageId,
      snapshot: snapshotOption(),
    }),
  carriesData: () => true,
  secretsUsed: (args) =>
    args.fields.flatMap((field) => (field.secret ? [{ name: field.secret, ref: field.ref }] : [])),
  target: async (args, context) => {
    const targets = [];
    for (const field of args.fields) {
      const target = await elementTarget(context, args.pageId, field.ref);
      literalIntoSecretField(context, target, field.ref, field.value);
      targets.push(target);
    }
    const [first] = targets;
    if (!first) throw new TabwardError('bad_input', 'fill_form needs at least one field.');
    return {
      ...first,
      frames: targets.flatMap((target) => target.frames),
      effects: targets.flatMap((target) => target.effects ?? []),
      fingerprints: Object.assign({}, ...targets.map((target) => target.fingerprints)),
      refFrames: Object.assign({}, ...targets.map((target) => target.refFrames)),
      secretFields: Object.assign({}, ...targets.map((target) => target.secretFields)),
      // The human sees where each value goes: a page can put one field of a form in another site's frame.
      fields: targets.map((target) => ({
        field: target.element ? `${target.element.role} "${target.element.name}"` : 'a field',
        frame: frameOrigin(target.frames[0]),
      })),
    };
  },
  handle: async (args, context, target) => {
    const lines: string[] = [];
    const targets: Record<string, AuditTarget> = {};
    for (const field of args.fields) {
      const value = resolveValue(field, context);
      await fillOne(context, target, field.ref, value, field.secret !== undefined, targets);
      lines.push(field.secret ? `${field.ref} (secret ${field.secret})` : field.ref);
    }
    return {
      content: [
        text(`Filled ${lines.join(', ')}. Tab ${requireTab(target).id}: ${requireTab(target).page.url()}`),
      ],
      targets,
    };
  },
});

function frameOrigin(frame: FrameFact | undefined): string {
  return frame ? originOf(frame.url, frame.creatorUrl) : 'an unknown frame';
}

export const pressKey = defineTool({
  name: 'press_key',
  description: 'Press a key or combination (e.g. Enter, Control+A), on an element or the focused one.',
  kind: 'write',
  schema: () => z.object({ key: z.string().min(1), ref: ref.optional(), pageId, snapshot: snapshotOption() }),
  carriesData: () => true,
  target: async (args, context) => {
    if (pasteKey(args.key)) throw new TabwardError('not_allowed', pasteRefused);
    // Only Enter and Space follow a link or submit a form (a letter typed into a form's field submits nothing): any
    // other key has no effect of its own, and what the page makes of it is held and asked.
    const keyed = (target: ToolTarget) => (activatingKey(args.key) ? target : withoutEffects(target));
    // A character typed into a password field is one of the password's: the audit (and a recipe saved from it)
    // keeps it masked. Its value cannot be redacted everywhere as a filled one is: a single letter is in every text.
    const masked = (target: ToolTarget, secretKind: string | undefined) =>
      secretKind && typesText(args.key) ? { ...target, maskedArgs: ['key'] } : target;
    if (args.ref) {
      const target = keyed(await elementTarget(context, args.pageId, args.ref, true));
      const { role = '', name = '' } = target.element ?? {};
      return masked(
        judgedDestructive(target, typingRoles.has(role) ? '' : name),
        target.secretFields?.[args.ref],
      );
    }
    // Without a ref the key goes to whatever has the focus, however deep in frames and shadow roots.
    const target = await pageTarget(context, args.pageId);
    const focus = await focusedTarget(requireTab(target), context.timeoutMs, knownBy(context));
    const field = ['INPUT', 'TEXTAREA', 'SELECT'].includes(focus.tag);
    return masked(
      judgedDestructive(
        keyed({ ...target, frames: focus.frames, effects: focus.effects }),
        field ? '' : focus.name,
      ),
      focus.secretKind,
    );
  },
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    const element = args.ref ? await resolveJudged(tab, args.ref, target, timeoutMs, true) : undefined;
    const found = args.ref && element ? await durableTarget(element, false, timeoutMs) : {};
    const work = async () => {
      if (element) await element.locator.press(args.key, { timeout: timeoutMs });
      else await tab.page.keyboard.press(args.key);
    };
    const mark = tab.activity.watchWrites();
    const line = await runAction(tab, `Pressing ${args.key}`, timeoutMs + 1000, work);
    // Judged again where the key landed: a page can make a field a password field as it takes the focus.
    const landed =
      target.maskedArgs === undefined && typesText(args.key)
        ? await secretKindNow(tab, element?.locator, timeoutMs)
        : undefined;
    const reached = withIssued(found, tab, mark);
    // Without a ref there is no selector to keep, only whether the key made the page post (Enter in a form).
    const targets =
      args.ref !== undefined
        ? { [args.ref]: reached }
        : reached.issued
          ? { [focusedTargetKey]: reached }
          : undefined;
    return {
      content: [text(`Pressed ${args.key}. ${line}`)],
      ...(targets ? { targets } : {}),
      ...(landed ? { maskedArgs: ['key'] } : {}),
    };
  },
});

/**
 * A file to upload, as the question shows it and the upload uses it: its real path, with no `./`, `..` or link
 * left to make `~/.ssh/id_rsa` read as a CV folder.
 */
const localFile = z
  .string()
  .min(1)
  .transform((path, context) => {
    try {
      return realpathSync(resolve(path));
    } catch {
      context.addIssue({
        code: 'custom',
        message: `no file at ${JSON.stringify(path.slice(0, 300))} (give the path of a file on this machine)`,
      });
      return z.NEVER;
    }
  });

export const uploadFile = defineTool({
  name: 'upload_file',
  description: 'Set local files on a file input.',
  kind: 'write',
  schema: () => z.object({ ref, paths: z.array(localFile).min(1), pageId }),
  carriesData: () => true,
  exportsLocalFiles: true,
  target: (args, context) => {
    for (const path of args.paths) refuseTabwardsOwn(path, context);
    return elementTarget(context, args.pageId, args.ref);
  },
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    const { locator } = await resolveJudged(tab, args.ref, target, timeoutMs);
    const line = await runAction(tab, 'Uploading', timeoutMs + 1000, () =>
      locator.setInputFiles(args.paths, { timeout: timeoutMs }),
    );
    const names = args.paths.map((path) => basename(path)).join(', ');
    return { content: [text(`Set ${args.paths.length} file(s) on ${describe(target)}: ${names}. ${line}`)] };
  },
});

/**
 * A file of tabward's own is never handed to a page, whatever was approved: another agent's download from a
 * sensitive page, the audit log of every agent's calls, passkeys. An "approve all" given for this agent's own file
 * must not cover them (found: one agent uploaded another's security log and the audit log under one).
 */
function refuseTabwardsOwn(path: string, context: ToolContext): void {
  const files = context.ownFiles;
  if (!files) return;
  const real = (where: string) => {
    try {
      return realpathSync(where);
    } catch {
      return resolve(where);
    }
  };
  const within = (inner: string, root: string) =>
    inner === root || inner.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
  const own = real(files.own);
  // The agent's own folder counts only inside a private one (its downloads in tabward's home): an --output-dir of
  // the user's home folder, which holds tabward's, must not make the audit log the agent's to hand on.
  const refused = files.private
    .map(real)
    .some((root) => within(path, root) && !(within(own, root) && within(path, own)));
  if (!refused) return;
  throw new TabwardError(
    'not_allowed',
    `upload_file refused: ${JSON.stringify(path)} is one of tabward's own files (its home, the audit log, the secrets file, other agents' downloads), which no page is given.`,
    `Files this agent downloaded (in ${files.own}) and files outside tabward's folder can be uploaded.`,
  );
}

function resolveValue(
  args: { value?: string | undefined; secret?: string | undefined },
  context: ToolContext,
): string {
  if (args.secret !== undefined && args.value !== undefined) {
    throw new TabwardError('bad_input', 'Give either value or secret, not both.');
  }
  if (args.secret !== undefined) return context.secrets.get(args.secret);
  if (args.value !== undefined) return args.value;
  throw new TabwardError('bad_input', 'Give a value to type, or the name of a secret.');
}

async function fillOne(
  context: ToolContext,
  target: ToolTarget,
  elementRef: string,
  value: string,
  isSecret: boolean,
  /** Where the field's lasting selector is recorded, by ref (with a literal that is a secret's value, its name). */
  targets: Record<string, AuditTarget>,
): Promise<string> {
  const tab = requireTab(target);
  const { timeoutMs } = context;
  const element = await resolveJudged(tab, elementRef, target, timeoutMs);
  const isSelect = element.info.role === 'combobox' || element.info.role === 'listbox';
  // A declared secret makes the tab hold a typed secret (the taint follows). A literal password is masked from
  // every record (literalIntoSecretField) but does not taint: that is for declared secrets, whose sites are known.
  if (isSecret) {
    const [frame] = element.frames;
    tab.noteSecretField(
      element.locator,
      frame ? originOf(frame.url, frame.creatorUrl) : originOf(tab.page.url()),
    );
  }
  const secretNamed = isSecret
    ? undefined
    : (context.secrets.nameOf(value) ??
      (element.secretKind ? secretFieldPlaceholder(element.secretKind) : undefined));
  const durable = await durableTarget(element, true, timeoutMs);
  const found = secretNamed ? { ...durable, secret: secretNamed } : durable;
  targets[elementRef] = found;
  const mark = tab.activity.watchWrites();
  const line = await runAction(tab, `Filling ${elementRef}`, timeoutMs + 1000, async () => {
    if (isSelect && element.tag === 'SELECT') {
      await element.locator.selectOption(value, { timeout: timeoutMs });
    } else {
      await element.locator.fill(value, { timeout: timeoutMs });
    }
  });
  // A field that saves as it is typed into (or a select that submits its form) writes when replayed.
  targets[elementRef] = withIssued(found, tab, mark);
  // Judged again where the value landed: a page can make a field a password field as it takes the focus or the
  // text (a login form's common guard against autofill), and the literal typed there is a password from then on.
  if (!isSecret && !secretNamed && !isSelect) {
    const landed = await secretKindNow(tab, element.locator, timeoutMs);
    if (landed) {
      context.secrets.redactTyped(value);
      targets[elementRef] = { ...(targets[elementRef] ?? found), secret: secretFieldPlaceholder(landed) };
    }
  }
  return line;
}

/**
 * Whether a field typed into is a secret one now: the field itself (when known) and whatever has the focus (a page
 * that moved the focus away after making the field a password field fooled a read of the focus alone). A field that
 * can no longer be read counts as one: masking a literal that was not a password costs nothing.
 */
async function secretKindNow(
  tab: TrackedPage,
  field: ResolvedElement['locator'] | undefined,
  timeoutMs: number,
): Promise<string | undefined> {
  const [onField, onFocus] = await Promise.all([
    field
      ? describeLocator(field, false, Math.min(timeoutMs, 2_000)).then(
          (facts) => facts.secretKind,
          () => 'password',
        )
      : undefined,
    focusedTarget(tab, timeoutMs).then((focus) => focus.secretKind),
  ]);
  return onField || onFocus || undefined;
}

/**
 * The element's audit record, with the first request that may change state the page sent since `mark` (the
 * action's doing, or the page's meanwhile): a saved recipe marks that step `write`, whatever its label says.
 */
function withIssued(found: AuditTarget, tab: TrackedPage, mark: number): AuditTarget {
  const issued = tab.activity.writeSince(mark);
  return issued ? { ...found, issued } : found;
}

/**
 * Keys that type nothing into a field (Playwright's names): every other key may be a character of what is typed,
 * `a`, `Shift+A`, and names that type one too (`KeyA`, `Digit1`, `Numpad2`, `Space`, `Minus`).
 */
const nonTextKeys = new Set(
  [
    'Enter',
    'Tab',
    'Backspace',
    'Delete',
    'Escape',
    'Home',
    'End',
    'PageUp',
    'PageDown',
    'Insert',
    'ArrowUp',
    'ArrowDown',
    'ArrowLeft',
    'ArrowRight',
    'Shift',
    'Control',
    'Alt',
    'Meta',
    'ControlOrMeta',
    'CapsLock',
    'NumLock',
    'ScrollLock',
    'ContextMenu',
    ...Array.from({ length: 24 }, (_, i) => `F${i + 1}`),
  ].map((key) => key.toLowerCase()),
);

/** Whether a key press may type a character: its last part is not a key that types nothing. */
function typesText(key: string): boolean {
  return !nonTextKeys.has((key.split('+').at(-1) ?? '').toLowerCase());
}

function describe(target: ToolTarget): string {
  // The element's name is the page's: quoted so that it cannot close its quotes in the result.
  return target.element
    ? `${target.element.role} ${quotedForDisplay(target.element.name, 120)}`
    : 'the element';
}

/**
 * The target with no effects: for an action that neither follows a link nor submits a form by itself, so that its
 * approval opens no pass toward them (core/approvedPass.ts) and its question names none.
 */
function withoutEffects(target: ToolTarget): ToolTarget {
  return { ...target, effects: [] };
}
