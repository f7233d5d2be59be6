// What the browser session tells: browser_status's answer (its mode, the browser in use or starting, the last
// failure to attach to the user's Chrome, its tabs with their owners), and the notice when its browser is lost.

import type { BrowserMode } from '../core/kinds.ts';
import type { BrowserConfig, Connection } from './browserConnections.ts';
import type { IsolatedBrowser } from './launchIsolated.ts';
import type { PageRegistry } from './pageRegistry.ts';

export interface SessionStatus {
  readonly mode: BrowserMode;
  readonly started: boolean;
  readonly browserVersion?: string;
  readonly endpoint?: string;
  readonly profile?: string;
  /** The process of a browser tabward launched. */
  readonly pid?: number;
  readonly tabs: { id: string; url: string; owner: 'agent' | 'user'; selected: boolean }[];
  readonly lastAttachError?: string;
  /** Whose context this is when several MCP clients are served: the client's own, or every client's. */
  readonly context?: string;
}

export function sessionStatus(
  mode: BrowserMode,
  connection: Connection | undefined,
  launched: IsolatedBrowser | undefined,
  lastAttachError: string | undefined,
  pages: PageRegistry,
  config: Pick<BrowserConfig, 'sharedContext' | 'sharedBrowser'> = {},
): SessionStatus {
  const clients = connection?.sharedBy?.clients();
  const context =
    clients !== undefined
      ? `this client's own (cookies, tabs, taint); ${clients} client context(s) in this browser`
      : config.sharedContext
        ? 'shared by every client of this tabward (--share-context): cookies, tabs and taint are common'
        : undefined;
  // Before this client's first page: the browser it will get a context in, when it runs already.
  const sharedBrowser = connection ? {} : config.sharedBrowser?.status();
  return {
    ...sharedBrowser,
    mode,
    started: connection !== undefined,
    ...(connection ? { browserVersion: connection.browser.version(), endpoint: connection.endpoint } : {}),
    ...(launched ? { profile: launched.userDataDir, pid: launched.pid } : {}),
    ...(connection?.sharedBy ? { pid: connection.sharedBy.pid, profile: connection.sharedBy.profile } : {}),
    ...(context ? { context } : {}),
    ...(lastAttachError ? { lastAttachError } : {}),
    tabs: pages.list().map((tracked) => ({
      id: tracked.id,
      url: tracked.page.url(),
      owner: tracked.ownedByAgent ? 'agent' : 'user',
      selected: tracked === pages.selected,
    })),
  };
}

/** The agent's next result says that the browser went away, and its tabs with it. */
export function lostNotice(mode: BrowserMode, tabs: readonly string[]): string {
  const gone = tabs.length > 0 ? ` Tabs ${tabs.join(', ')} are gone.` : '';
  return mode === 'shared'
    ? `Mode changed: the connection to your Chrome was lost (it was closed or crashed).${gone} The next call uses your Chrome again if it can be reached, else an isolated browser.`
    : `The browser closed or crashed; the next call starts a new one.${gone}`;
}

/** Started in shared mode, the user's Chrome could not be reached: the agent's next result says it now runs isolated. */
export function fallbackNotice(why: string): string {
  return `Mode changed: your Chrome could not be reached, so this now runs in an isolated browser (no logins, none of the user's tabs). ${why}`;
}
