// Reading tools: the compact accessibility snapshot, screenshots (password fields masked) and waiting for text.

import { z } from 'zod';
import { captureSnapshot, passwordsSeen } from '../browser/snapshot/snapshot.ts';
import { TabwardError } from '../core/errors.ts';
import { untrusted } from '../core/redact.ts';
import type { Secrets } from '../core/secrets.ts';
import { pageTarget, requireTab, runOnPage, shownTitle, snapshotOption } from './common.ts';
import { defineTool, text } from './tool.ts';

/** How long a screenshot waits for the tab's images, fonts and media still loading. */
const screenshotLoadsMs = 1_000;

const pageId = z.string().optional().describe('Tab id; default: the selected tab');

export const takeSnapshot = defineTool({
  name: 'take_snapshot',
  snapshotsTab: true,
  description:
    'Read a tab as an accessibility tree. Elements you can act on end in @ref; pass ref to click/fill. ' +
    'Options: ref (one subtree), query (lines containing text), maxTokens, allRefs (refs on every element).',
  kind: 'read',
  schema: () =>
    z.object({
      pageId,
      ref: z.string().optional(),
      query: z.string().optional(),
      maxTokens: z.number().int().min(100).optional(),
      allRefs: z.boolean().optional(),
    }),
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (args, { timeoutMs, secrets }, target) => {
    const tab = requireTab(target);
    if (args.query) refuseSecretProbe(args.query, secrets);
    const { text: body, title } = await captureSnapshot(tab, {
      timeoutMs,
      ...(args.ref ? { ref: args.ref } : {}),
      ...(args.query ? { query: args.query } : {}),
      maxTokens: args.maxTokens ?? 12_000,
      ...(args.allRefs ? { allRefs: true } : {}),
      redact: (text) => secrets.redactor.text(text),
    });
    // What the page's password fields hold is masked in every later result and record too (its title, console,
    // dialogs, requests), not only in snapshots.
    secrets.redactPage(passwordsSeen(tab));
    // A tab is the agent's unless marked: a snapshot's header is read on every turn, the mark only matters on the user's.
    const owner = tab.ownedByAgent ? '' : ' [user]';
    const header = `Tab ${tab.id}${owner} ${tab.page.url()} ${shownTitle(title)}`;
    // The header, outside the untrusted block, names the page; the block itself needs no origin again.
    return { content: [text(`${header}\n${untrusted('', body)}`)], readFrom: [tab] };
  },
});

export const takeScreenshot = defineTool({
  name: 'take_screenshot',
  description: 'PNG screenshot of a tab (password fields masked).',
  kind: 'read',
  schema: () => z.object({ pageId, fullPage: z.boolean().optional() }),
  // A page can copy a typed secret anywhere on screen, where no mask reaches it.
  revealsTypedValues: true,
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    let image: Buffer = Buffer.alloc(0);
    await runOnPage(tab, 'Taking a screenshot', timeoutMs, async () => {
      // Settling let the agent read the page before its images arrived; a picture of it waits for them.
      await tab.passiveLoadsSettled(Math.min(screenshotLoadsMs, timeoutMs / 2));
      image = await tab.page.screenshot({
        type: 'png',
        fullPage: args.fullPage ?? false,
        mask: tab.secretMasks(),
        timeout: timeoutMs,
      });
    });
    return {
      content: [
        text(`Screenshot of tab ${tab.id} (page content, untrusted)`),
        { type: 'image', data: image.toString('base64'), mimeType: 'image/png' },
      ],
      readFrom: [tab],
    };
  },
});

export const waitFor = defineTool({
  name: 'wait_for',
  description: 'Wait until text appears in a tab.',
  kind: 'read',
  schema: () =>
    z.object({
      text: z.string().min(1),
      timeoutMs: z.number().int().min(1).max(60_000).optional(),
      pageId,
      snapshot: snapshotOption(),
    }),
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (args, context, target) => {
    const tab = requireTab(target);
    refuseSecretProbe(args.text, context.secrets);
    const timeoutMs = args.timeoutMs ?? context.timeoutMs;
    const locator = tab.page.getByText(args.text).first();
    const line = await runOnPage(tab, `Waiting for "${args.text}"`, timeoutMs + 1000, () =>
      locator.waitFor({ state: 'visible', timeout: timeoutMs }),
    );
    // Whether a text is on the page is a read of the page, and taints like one.
    return { content: [text(`Found "${args.text}". ${line}`)], readFrom: [tab] };
  },
});

/** A search for text that is part of a secret would tell the agent, guess by guess, what the secret is. */
function refuseSecretProbe(search: string, secrets: Secrets): void {
  if (!secrets.overlaps(search)) return;
  throw new TabwardError(
    'not_allowed',
    'That search text is part of a secret tabward typed or holds; searching for it would reveal the secret.',
    'Search for something else.',
  );
}
