// Script and dialog tools: evaluate_script runs a function in the page; handle_dialog answers an open
// alert/confirm/prompt/beforeunload.

import { z } from 'zod';
import { withDeadline } from '../browser/deadline.ts';
import { allFrames } from '../browser/elements.ts';
import { quotedForDisplay } from '../core/displayText.ts';
import { TabwardError } from '../core/errors.ts';
import { originOf } from '../core/guard.ts';
import { untrusted } from '../core/redact.ts';
import {
  judgedDestructive,
  pageTarget,
  requireTab,
  runAction,
  runOnPage,
  snapshotOption,
  statusLine,
} from './common.ts';
import { defineTool, text } from './tool.ts';

const pageId = z.string().optional().describe('Tab id; default: the selected tab');

export const evaluateScript = defineTool({
  name: 'evaluate_script',
  description:
    'Run a JavaScript function in the page and return its JSON result, e.g. "() => document.title".',
  kind: 'write',
  schema: () => z.object({ function: z.string().min(1), pageId }),
  carriesData: () => true,
  revealsTypedValues: true,
  runsScript: true,
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    let result: unknown;
    await runOnPage(tab, 'Running the script', timeoutMs, async () => {
      result = await tab.page.evaluate(
        `(async () => { const fn = (${args.function}); return await fn(); })()`,
      );
    });
    // The script stopped at a dialog it opened: it has not returned, and its result is not known (never "null").
    const { dialog } = tab;
    if (dialog) {
      const shown = `${dialog.type()} ${quotedForDisplay(dialog.message(), 200)}`;
      return {
        content: [
          text(
            `The script opened a dialog (${shown}) and is paused at it: it has not returned, and its result will not be reported. Answer the dialog with handle_dialog. ${statusLine(tab)}`,
          ),
        ],
        readFrom: [tab],
      };
    }
    const json = JSON.stringify(result ?? null, null, 1) ?? 'undefined';
    return { content: [text(untrusted(originOf(tab.page.url()), json.slice(0, 50_000)))], readFrom: [tab] };
  },
});

export const handleDialog = defineTool({
  name: 'handle_dialog',
  description: 'Accept or dismiss the open dialog of a tab.',
  kind: 'write',
  schema: () =>
    z.object({
      action: z.enum(['accept', 'dismiss']),
      promptText: z.string().optional(),
      pageId,
      snapshot: snapshotOption(),
    }),
  carriesData: (args) => args.promptText !== undefined,
  // The dialog may come from any frame of the page, and Playwright does not say which: every frame counts, so
  // a page embedding a sensitive frame is judged as sensitive.
  target: async (args, context) => {
    const target = await pageTarget(context, args.pageId);
    const tab = requireTab(target);
    const all = { ...target, frames: allFrames(tab.page) };
    // Accepting "Delete your account?" is the destructive act itself: judged by what the dialog says.
    return args.action === 'accept' && tab.dialog ? judgedDestructive(all, tab.dialog.message()) : all;
  },
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    const dialog = tab.dialog;
    if (!dialog) throw new TabwardError('not_found', `Tab ${tab.id} has no open dialog.`);
    const message = dialog.message();
    await tab.assertDialogAnswerable();
    const answer = args.action === 'accept' ? dialog.accept(args.promptText) : dialog.dismiss();
    await withDeadline(answer, timeoutMs, 'Answering the dialog');
    tab.rearm();
    // An answer lets the page's script go on (a confirm() before a form post): settle like any action, so what
    // it sends is this call's doing, held for its human, and the result shows where the tab went.
    const line = await runAction(tab, 'Answering the dialog', timeoutMs, async () => undefined);
    return {
      content: [
        text(
          `${args.action === 'accept' ? 'Accepted' : 'Dismissed'} ${quotedForDisplay(message, 100)}. ${line}`,
        ),
      ],
    };
  },
});
