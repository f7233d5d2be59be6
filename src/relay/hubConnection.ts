// A paired browser's socket as relay/extensionHub.ts keeps it, and a task waiting on that browser's answer.

import type { WebSocket } from 'ws';
import type { CallTarget, ExtensionToRelay, SharedSiteState } from '../protocol/siteTools.ts';
import type { ExtensionRecord } from './relayStore.ts';

/** One paired browser's socket: what it shares, what it last located, whether it still answers pings. */
export interface Connection {
  readonly socket: WebSocket;
  readonly extension: ExtensionRecord;
  sites: readonly SharedSiteState[];
  /** The documents it last located, by "site tool": a read-only call may go straight to one (see recentTarget). */
  readonly located: Map<string, { readonly target: CallTarget; readonly at: number }>;
  reportedAt: number;
  /** Answered the last WebSocket ping: a socket whose peer vanished (sleep, network change) is dropped. */
  alive: boolean;
}

/** The extension's answer, or why there is none. */
export type Answer = ExtensionToRelay | 'closed' | 'timeout' | 'aborted' | 'stopping';

export interface Waiter {
  readonly connection: Connection;
  readonly settle: (answer: Answer) => void;
}
