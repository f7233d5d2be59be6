// Wire types of the WebMCP bridge, shared by the relay (Node) and the extension (browser). Plain data only:
// every message crosses JSON at least once (page <-> bridge <-> service worker <-> relay).

export const bridgeProtocolVersion = 1;

/**
 * The id Chrome gives the bundled extension: fixed by the public key in extension/manifest.json, so the relay
 * can pin the WebSocket's Origin to it without asking. A fork with its own key passes --extension-id.
 */
export const bundledExtensionId = 'dflmldbgjacfgnjlpnbgbfcmpbjpepnp';

/** What a page says about one of its tools, after a JSON round trip (functions and cycles dropped). */
export interface SiteTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  /** The page's own hint: read-only tools run without asking the human. */
  readonly readOnly: boolean;
}

/** The outcome of one tool call as the page produced it, or why there is none. */
export type CallOutcome =
  | { readonly ok: true; readonly result: string }
  | { readonly ok: false; readonly error: CallError };

export const callErrorCodes = [
  'denied',
  'timeout',
  'unregistered',
  'no_tab',
  'no_tool',
  'tool_failed',
  'too_large',
  'not_connected',
  'not_shared',
] as const;
export type CallErrorCode = (typeof callErrorCodes)[number];

export interface CallError {
  readonly code: CallErrorCode;
  readonly message: string;
}

/** Messages between the isolated-world bridge and the MAIN-world observer (CustomEvent detail, a JSON string). */
export type ObserverMessage =
  | { readonly from: 'observer'; readonly kind: 'tools'; readonly tools: readonly SiteTool[] }
  | {
      readonly from: 'observer';
      readonly kind: 'outcome';
      readonly callId: string;
      readonly outcome: CallOutcome;
    }
  /** A registration was aborted: calls in flight on that name started on it, even if the name is back already. */
  | { readonly from: 'observer'; readonly kind: 'withdrawn'; readonly name: string }
  | { readonly from: 'bridge'; readonly kind: 'list' }
  | {
      readonly from: 'bridge';
      readonly kind: 'call';
      readonly callId: string;
      readonly name: string;
      readonly args: Record<string, unknown>;
    };

/** Messages between a tab's bridge and the service worker (chrome.runtime / chrome.tabs messaging). */
export type TabToWorker =
  | { readonly type: 'tools'; readonly tools: readonly SiteTool[] }
  | { readonly type: 'gone' };
export type WorkerToTab = {
  readonly type: 'call';
  readonly callId: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
};

/** One line of a workspace's activity feed, shown in every connected popup. */
export interface ActivityEntry {
  readonly at: string;
  readonly agent: string;
  readonly taskId: string;
  readonly site: string;
  readonly tool: string;
  readonly event: 'called' | 'waiting' | 'approved' | 'denied' | 'always' | 'done' | 'failed';
  readonly detail: string;
}

/** Relay -> extension over the WebSocket. */
export type RelayToExtension =
  | {
      readonly t: 'call';
      readonly taskId: string;
      readonly agent: string;
      readonly site: string;
      readonly tool: string;
      readonly args: Record<string, unknown>;
      /** The relay's verdict: the human must approve (sensitive page, or a write not covered by "always"). */
      readonly ask: boolean;
      readonly deadlineMs: number;
    }
  | { readonly t: 'cancel'; readonly taskId: string; readonly reason: string }
  | { readonly t: 'activity'; readonly entry: ActivityEntry }
  | { readonly t: 'welcome'; readonly workspace: string; readonly activity: readonly ActivityEntry[] };

/** Extension -> relay over the WebSocket. */
export type ExtensionToRelay =
  | { readonly t: 'sites'; readonly sites: readonly SharedSiteState[] }
  | { readonly t: 'outcome'; readonly taskId: string; readonly outcome: CallOutcome }
  | {
      readonly t: 'decision';
      readonly taskId: string;
      readonly decision: 'approved' | 'denied' | 'always';
    }
  /** Sent every 20 s: traffic keeps the service worker alive (it dies after 30 s idle). */
  | { readonly t: 'ping' };

/** A site the human shares, with the tools its open tabs (or, when none is open, the last ones) expose. */
export interface SharedSiteState {
  readonly origin: string;
  /** The last URL seen for it: where a background tab is reopened, and what the sensitive rules look at. */
  readonly url: string;
  readonly tools: readonly SiteTool[];
  readonly openTabs: number;
}

/** Extension page -> service worker requests (popup). */
export type PopupRequest =
  | { readonly type: 'state'; readonly tabId?: number }
  | { readonly type: 'pair'; readonly relayUrl: string; readonly code: string }
  | { readonly type: 'unpair' }
  | { readonly type: 'share'; readonly tabId: number }
  | { readonly type: 'unshare'; readonly origin: string }
  | { readonly type: 'decide'; readonly taskId: string; readonly decision: 'approved' | 'denied' | 'always' };

/** Largest result a page may send back; larger ones fail with a clear error instead of filling the context. */
export const maxResultBytes = 256 * 1024;
/** Largest WebSocket message either side accepts. */
export const maxSocketMessageBytes = 1024 * 1024;
export const defaultCallDeadlineMs = 60_000;
export const pingIntervalMs = 20_000;
export const ticketLifetimeMs = 60_000;
