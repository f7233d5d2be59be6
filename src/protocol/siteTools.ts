// Wire types of the WebMCP bridge, shared by the relay (Node) and the extension (browser). Plain data only:
// every message crosses JSON at least once (page <-> bridge <-> service worker <-> relay).

export const bridgeProtocolVersion = 2;

/**
 * The id Chrome gives the bundled extension: fixed by the public key in extension/manifest.json, so the relay
 * can pin the WebSocket's Origin to it without asking. A fork with its own key passes --extension-id.
 */
export const bundledExtensionId = 'dflmldbgjacfgnjlpnbgbfcmpbjpepnp';

/** What a page says about one of its tools, after a JSON round trip (functions and cycles dropped). */
/**
 * A site tool's name as tabward offers it: 1 to 128 letters, digits, `_`, `-` or `.` (MCP's own rule for tool
 * names, and what Chromium's registerTool accepts). A page's name is printed on lines of their own (listings, the
 * error naming a site's tools): one with a line break or a quoting marker in it forged a line for another site's
 * tool (an attack review of the bridge). A tool with any other name is not offered.
 */
export const siteToolNamePattern = /^[A-Za-z0-9_.-]{1,128}$/;

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
  /** The page may have run the call (it went away or went quiet mid-call): a retry could do it twice. */
  readonly unknownOutcome?: boolean;
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
  /** The URL the call was judged on: the document runs it only if it is still there (checked as it starts). */
  readonly url: string;
};
/** The bridge's answer to a call: the outcome, and where its time went (for the relay's per-hop figures). */
export interface TabReply {
  readonly outcome: CallOutcome;
  /** From the bridge receiving the call to its reply, in ms. */
  readonly bridgeMs: number;
  /** The page's own execution of the tool, in ms. */
  readonly pageMs: number;
}

/** The port the worker opens to a document's bridge for its calls (chrome.tabs.connect with the documentId). */
export const callPortName = 'tabward-calls';
/** Bridge -> worker on that port: `ready` first (nothing was delivered before it), then one reply per call. */
export type TabPortMessage =
  | { readonly type: 'ready' }
  | (TabReply & { readonly type: 'reply'; readonly callId: string });

/** Where one call's time went inside the browser, each measured on one clock (ms). */
export interface CallTiming {
  /** The service worker, from the relay's `call` to its `outcome`. */
  readonly workerMs: number;
  /** chrome.tabs.sendMessage to the tab and back. */
  readonly tabMs: number;
  readonly bridgeMs: number;
  readonly pageMs: number;
}

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
  /** The relay gave up on the task: an approval pending for it is withdrawn, and the popup shows `reason`. */
  | { readonly t: 'cancel'; readonly taskId: string; readonly reason: string }
  /** New lines of the activity feed, sent in batches after the calls they tell of (never on a call's path). */
  | { readonly t: 'activity'; readonly entries: readonly ActivityEntry[] }
  /** Something the human must know about this browser's pairing (another socket claimed it); shown in the popup. */
  | { readonly t: 'alert'; readonly at: string; readonly message: string }
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
  | {
      readonly t: 'outcome';
      readonly taskId: string;
      readonly outcome: CallOutcome;
      readonly timing?: CallTiming;
      /** Sent after the socket it belonged to dropped: the relay may no longer know the task (it logs it). */
      readonly late?: boolean;
    }
  | { readonly t: 'located'; readonly taskId: string; readonly target: CallTarget; readonly spentMs?: number }
  | { readonly t: 'located'; readonly taskId: string; readonly error: CallError; readonly spentMs?: number }
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

/**
 * Largest result a page may send back, counted as the UTF-8 bytes of its JSON encoding (what travels: a control
 * character is 1 character but 6 bytes); larger ones fail with a clear error instead of filling the context.
 */
export const maxResultBytes = 256 * 1024;
/** Largest WebSocket message either side accepts (encoded bytes). */
export const maxSocketMessageBytes = 1024 * 1024;
/** Largest tool definition a page may announce (encoded bytes); larger ones are dropped and shown in the popup. */
export const maxToolBytes = 16 * 1024;
export const maxToolsPerPage = 50;
/** The tool definitions one site may put in the site report (encoded bytes): one site cannot crowd out others. */
export const maxSiteToolsBytes = 256 * 1024;
/** The whole site report (encoded bytes), well under the socket's limit. */
export const maxSiteReportBytes = 768 * 1024;
export const defaultCallDeadlineMs = 60_000;
export const pingIntervalMs = 20_000;
export const ticketLifetimeMs = 60_000;
/**
 * How the relay closes an extension's socket when it must be told why: its pairing was revoked (pair again), or
 * another live socket already speaks for this browser (someone else holds its credential, or a stale tab).
 */
export const relayCloseCodes = { revoked: 4401, taken: 4409 } as const;

/** The UTF-8 length of a string, counted without copying it. */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next < 0xe000) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** The outcome that replaces a result too large to send: its size as it travels, and what to do about it. */
export function tooLargeOutcome(bytes: number): CallOutcome {
  return {
    ok: false,
    error: {
      code: 'too_large',
      message: `The result is ${bytes} bytes as JSON, over the ${maxResultBytes}-byte cap. Ask the tool for less (a narrower query, a page of results).`,
    },
  };
}

/** A result within the cap as it travels (a control character costs 6 bytes as JSON, not 1), else why not. */
export function withinResultCap(outcome: CallOutcome): CallOutcome {
  if (!outcome.ok) return outcome;
  const bytes = encodedBytes(outcome.result);
  return bytes <= maxResultBytes ? outcome : tooLargeOutcome(bytes);
}

/** What a value costs on the wire: the UTF-8 bytes of its JSON text. Every cap is measured this way. */
export function encodedBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? '');
}
