// Tab tools: list, select, open, close, navigate and resize tabs.

import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { translateBrowserError, withDeadline } from '../browser/deadline.ts';
import type { TrackedPage } from '../browser/pages.ts';
import { TabwardError } from '../core/errors.ts';
import { urlCarriesData } from '../core/guard.ts';
import {
  checkUrl,
  navigateTab,
  pageTarget,
  requireTab,
  runOnPage,
  shownTitle,
  snapshotOption,
  statusLine,
} from './common.ts';
import { defineTool, text } from './tool.ts';

const pageId = z.string().optional().describe('Tab id from list_pages; default: the selected tab');

export const listPages = defineTool({
  name: 'list_pages',
  description: 'List open tabs: id, owner (agent/user), URL, title.',
  kind: 'read',
  schema: () => z.object({}),
  target: async () => ({ frames: [] }),
  handle: async (_args, { session, timeoutMs }) => {
    await session.ensure();
    const lines = await Promise.all(
      session.pages.list().map(async (tab) => {
        const title = await withDeadline(tab.page.title(), timeoutMs, 'reading a title').catch(() => '?');
        const mark = tab === session.pages.selected ? '*' : ' ';
        return `${mark}${tab.id} [${tab.ownedByAgent ? 'agent' : 'user'}] ${tab.page.url()} ${shownTitle(title)}`;
      }),
    );
    // Titles and URLs are page content too: a sensitive tab listed taints like one read.
    return { content: [text(lines.join('\n') || 'No open tabs.')], readFrom: session.pages.list() };
  },
});

export const selectPage = defineTool({
  name: 'select_page',
  description: 'Make a tab the default for later calls.',
  kind: 'navigate',
  schema: () => z.object({ pageId: z.string() }),
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (_args, { session, timeoutMs }, target) => {
    const tab = requireTab(target);
    session.pages.selected = tab;
    const line = await runOnPage(tab, 'Selecting the tab', timeoutMs, () => tab.page.bringToFront());
    return { content: [text(`Selected. ${line}`)] };
  },
});

export const newPage = defineTool({
  name: 'new_page',
  opensTab: true,
  description: 'Open a URL in a new tab owned by the agent.',
  kind: 'navigate',
  schema: () => z.object({ url: z.string(), snapshot: snapshotOption() }),
  carriesData: (args) => urlCarriesData(args.url),
  target: async (args) => ({ frames: [], destination: checkUrl(args.url) }),
  handle: async (args, context) => {
    const tab = await context.session.newPage();
    return navigateTab(tab, checkUrl(args.url), context);
  },
});

export const closePage = defineTool({
  name: 'close_page',
  closesTab: true,
  description: 'Close a tab the agent opened.',
  kind: 'write',
  schema: () => z.object({ pageId: z.string() }),
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (_args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    // The page gets no last word: its pagehide/unload handlers (a keepalive fetch, a beacon) are requests the
    // browser sends after the tab's interception is gone.
    if (!tab.dialog) await tab.silence(timeoutMs);
    // Not runOnPage: the tab closing is the success here, not an interruption.
    await withDeadline(tab.page.close({ runBeforeUnload: false }), timeoutMs, 'Closing the tab').catch(
      (error: unknown) => {
        throw translateBrowserError(error, 'Closing the tab');
      },
    );
    return { content: [text(`Closed ${tab.id}.`)] };
  },
});

export const navigatePage = defineTool({
  name: 'navigate_page',
  description: 'Go to a URL, or back/forward/reload, in a tab.',
  kind: 'navigate',
  schema: () =>
    z.object({
      url: z.string().optional(),
      type: z.enum(['url', 'back', 'forward', 'reload']).optional().describe('default: url'),
      pageId,
      snapshot: snapshotOption(),
    }),
  carriesData: (args) => urlCarriesData(args.url ?? ''),
  target: async (args, context) => {
    const target = await pageTarget(context, args.pageId);
    const type = args.type ?? 'url';
    if (type !== 'url') {
      // Judged by the history entry it loads; a document that came from a POST would be posted again.
      const tab = requireTab(target);
      const offset = type === 'back' ? -1 : type === 'forward' ? 1 : 0;
      const entry = await tab.historyEntry(offset, context.timeoutMs);
      if (!entry) throw new TabwardError('not_found', `There is no page to go ${type} to in tab ${tab.id}.`);
      return {
        ...target,
        destination: entry.url,
        repostsForm: entry.reposts,
        ...(type === 'reload' ? {} : { historyEntryId: entry.id }),
      };
    }
    if (!args.url)
      throw new TabwardError('bad_input', 'navigate_page needs a url (or type back/forward/reload).');
    return { ...target, destination: checkUrl(args.url) };
  },
  handle: async (args, context, target) => {
    const tab = requireTab(target);
    const type = args.type ?? 'url';
    if (type === 'url') return navigateTab(tab, target.destination ?? '', context);
    const timeoutMs = context.timeoutMs * 2;
    const line = await runOnPage(tab, `Going ${type}`, timeoutMs, () =>
      moveInHistory(tab, type, target.historyEntryId, timeoutMs),
    );
    return { content: [text(line)], readFrom: [tab] };
  },
});

export const resizePage = defineTool({
  name: 'resize_page',
  description: 'Set the viewport size of a tab.',
  kind: 'write',
  schema: () =>
    z.object({
      width: z.number().int().min(200).max(7680),
      height: z.number().int().min(200).max(4320),
      pageId,
    }),
  target: (args, context) => pageTarget(context, args.pageId),
  handle: async (args, { timeoutMs }, target) => {
    const tab = requireTab(target);
    const size = { width: args.width, height: args.height };
    await runOnPage(tab, 'Resizing', timeoutMs, () => tab.page.setViewportSize(size));
    return { content: [text(`Resized to ${args.width}x${args.height}. ${statusLine(tab)}`)] };
  },
});

/**
 * Back and forward to the history entry the call was judged by (`entryId`, over CDP: a page can redefine its own
 * `history.back`), and reload (`location.reload`, which a page cannot redefine). Playwright's goBack can wait
 * forever for a page restored from the back/forward cache, which fires no load events; here the move is seen as a
 * new document (or a new URL), bounded in time.
 */
async function moveInHistory(
  tab: TrackedPage,
  type: 'back' | 'forward' | 'reload',
  entryId: number | undefined,
  timeoutMs: number,
): Promise<void> {
  const before = { seq: tab.documentSeq, url: tab.page.url() };
  if (type === 'reload') await tab.page.evaluate('location.reload()');
  else if (entryId !== undefined) await tab.goToHistoryEntry(entryId, timeoutMs);
  else throw new TabwardError('internal', `The ${type} move was not judged by a history entry.`);
  const deadline = Date.now() + Math.min(timeoutMs, 5_000);
  while (tab.documentSeq === before.seq && tab.page.url() === before.url && Date.now() < deadline)
    await sleep(50);
  if (tab.documentSeq === before.seq && tab.page.url() === before.url) {
    throw new TabwardError('not_found', `There is no page to go ${type} to in tab ${tab.id}.`);
  }
  await tab.waitForDocument(timeoutMs);
}
