// What the popup shows, as the service worker reports it.

import type { ActivityEntry, SiteTool } from '../../../src/protocol/siteTools.ts';
import type { PendingApproval, WithdrawnApproval } from './calls.ts';
import type { LinkStatus } from './relayLink.ts';
import type { DroppedTools } from './siteReport.ts';

export interface PopupState {
  readonly paired: boolean;
  readonly relayUrl: string;
  readonly workspace: string;
  readonly link: { readonly status: LinkStatus; readonly error: string };
  /** What the human must read about this browser's pairing (another connection claimed it). */
  readonly alerts: readonly { readonly at: string; readonly message: string }[];
  readonly current:
    | {
        readonly tabId: number;
        readonly origin: string;
        readonly shareable: boolean;
        readonly shared: boolean;
        readonly tools: readonly SiteTool[];
      }
    | undefined;
  readonly sites: readonly { readonly origin: string; readonly tools: number; readonly openTabs: number }[];
  readonly pending: readonly PendingApproval[];
  /** Questions taken back before the human answered, and why. */
  readonly withdrawn: readonly WithdrawnApproval[];
  /** Tools agents do not see because they are over a size cap. */
  readonly dropped: readonly DroppedTools[];
  /** Set when the relay refused a site report as too large. */
  readonly reportNote: string;
  readonly activity: readonly ActivityEntry[];
}

export type PopupReply =
  | { readonly ok: true; readonly state: PopupState }
  | { readonly ok: false; readonly error: string };
