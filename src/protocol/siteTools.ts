// Wire types of the WebMCP bridge, shared by the relay (Node) and the extension (browser). Plain data only:
// every message crosses JSON at least once (page <-> bridge <-> service worker <-> relay).

export const bridgeProtocolVersion = 2;

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
  'moved',
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

/** The document the extension picked to run a call, reported before anything runs: what both sides judge. */
export interface CallTarget {
  readonly documentId: string;
  /** The document's URL right now (after any same-document navigation). */
  readonly url: string;
}

/** What names one call in every message about it. */
interface CallHeader {
  readonly taskId: string;
  readonly agent: string;
  readonly site: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly deadlineMs: number;
}

/**
 * Relay -> extension over the WebSocket. One call is: `locate` (which document would run it; the extension may
 * reopen the site), `ask` when the relay's guard asks (shown in the popup, bound to that document and URL),
 * `locate` again, then `call` on exactly the located document. The extension judges the call again itself and
 * refuses one whose document moved, or that needs an approval it did not give for that document and URL.
 */
export type RelayToExtension =
  | {
      readonly t: 'locate';
      readonly taskId: string;
      readonly site: string;
      readonly tool: string;
      readonly deadlineMs: number;
    }
  | (CallHeader & {
      readonly t: 'ask';
      readonly target: CallTarget;
      /** Why the relay's guard asks, in words. */
      readonly reason: string;
      readonly sensitive: boolean;
      /** "Always allow" may be offered (never for a sensitive page). */
      readonly approveAllAllowed: boolean;
    })
  | (CallHeader & { readonly t: 'call'; readonly target: CallTarget })
  | { readonly t: 'cancel'; readonly taskId: string; readonly reason: string }
  | { readonly t: 'activity'; readonly entry: ActivityEntry }
  | {
      readonly t: 'welcome';
      readonly workspace: string;
      readonly activity: readonly ActivityEntry[];
      /** The relay's sensitive-page rules (pattern sources); the extension adds them to the defaults it ships. */
      readonly rules: readonly string[];
    };

/** Extension -> relay over the WebSocket. */
export type ExtensionToRelay =
  | { readonly t: 'sites'; readonly sites: readonly SharedSiteState[] }
  | { readonly t: 'outcome'; readonly taskId: string; readonly outcome: CallOutcome }
  | { readonly t: 'located'; readonly taskId: string; readonly target: CallTarget }
  | { readonly t: 'located'; readonly taskId: string; readonly error: CallError }
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
  /** The last URL seen for it: where a background tab is reopened (calls are judged on the document's own URL). */
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
