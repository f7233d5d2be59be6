// The agent's tabs in a connection: which tabs are the agent's (every tab, or in the user's Chrome the agent's
// own and their popups), a new one, opened under the network guard before it is used, and
// whether the spare tab a warm-up opened is still fit to hand out.

import type { Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import type { Connection } from './browserConnections.ts';
import { withDeadline } from './deadline.ts';
import type { NetworkGuard } from './networkGuard.ts';
import type { PageRegistry } from './pageRegistry.ts';
import type { TrackedPage } from './pages.ts';

/** A new tab in `connection`, watched: in the user's Chrome only the agent's own tabs are policed; elsewhere the whole context is. */
export async function openGuardedTab(
  connection: Connection,
  network: NetworkGuard | undefined,
): Promise<Page> {
  const page = await withDeadline(connection.context.newPage(), 30_000, 'Opening a tab');
  if (network) {
    const guarding = connection.mode === 'shared' ? network.watchPage(page) : network.ready(page);
    await withDeadline(guarding, 30_000, 'Guarding the tab');
  }
  return page;
}

/** The spare tab if it is still blank, open and alive. */
export async function stillSpare(spare: TrackedPage): Promise<TrackedPage | undefined> {
  if (!spare || spare.closed) return undefined;
  // Its renderer gone while it waited (killed for memory, say): the first call would get a tab that cannot
  // load. Nobody used it, so it goes, and the call gets a tab of its own.
  if (spare.crashed) {
    await withDeadline(spare.page.close(), 5_000, 'Closing a crashed tab').catch(
      swallow(
        'browser',
        'agentTabs.stillSpare: withDeadline(spare.page.close(), 5_000, "Closing a crashed tab")',
      ),
    );
    return undefined;
  }
  return !spare.retired && spare.page.url() === 'about:blank' ? spare : undefined;
}

/** Tracks the connection's tabs: in the user's Chrome the tabs already open are theirs; elsewhere every tab is the agent's. */
export function watchConnectionTabs(
  pages: PageRegistry,
  connection: Connection,
  network: NetworkGuard | undefined,
): void {
  const onAgentPopup =
    network && connection.mode === 'shared' ? (page: Page) => network.watchPage(page) : undefined;
  pages.watch(
    connection.context,
    connection.mode !== 'shared',
    onAgentPopup,
    network && connection.mode === 'shared' ? (page: Page) => network.isAgentTab(page) : undefined,
  );
}
