// What the network backstop's hooks (browser/networkGuard.ts) read of a request: the shapes CDP reports a paused
// request and a frame tree in, and, of a Playwright request, its page, whether it is the main frame's, and the
// document that made it. Each read survives a request whose frame is already gone.

import type { Page, Request } from 'playwright-core';

export interface FrameTree {
  readonly frame: { readonly id: string; readonly url: string };
  readonly childFrames?: readonly FrameTree[];
}

export interface PausedRequest {
  readonly requestId: string;
  readonly frameId: string;
  /** Set at the response stage. */
  readonly responseStatusCode?: number;
  readonly responseErrorReason?: string;
  readonly responseHeaders?: readonly { readonly name: string; readonly value: string }[];
  readonly resourceType: string;
  /** Set when this request is a redirect hop of an earlier one. */
  readonly redirectedRequestId?: string;
  /** The network id, the same for every hop of a redirect chain. */
  readonly networkId?: string;
  readonly request: {
    readonly url: string;
    readonly method: string;
    readonly headers: Readonly<Record<string, string>>;
  };
}

export function isMainFrame(request: Request): boolean {
  try {
    return request.frame().parentFrame() === null;
  } catch {
    // No frame yet: a popup's first navigation, issued before its frame exists, is a top-level one. (A service
    // worker's request has no frame either, and is no navigation.)
    return request.isNavigationRequest();
  }
}

/** The document that made the request: its frame's, or for a frame's own navigation, the frame holding it. */
export function initiatorUrlOf(request: Request): { frameUrl?: string } {
  try {
    const frame = request.frame();
    if (!request.isNavigationRequest()) return { frameUrl: frame.url() };
    const parent = frame.parentFrame();
    return parent ? { frameUrl: parent.url() } : {};
  } catch {
    return {};
  }
}

export function pageOf(request: Request): Page | undefined {
  try {
    return request.frame().page();
  } catch {
    return undefined;
  }
}

/** A header of a request as CDP reports it (names in the case they were set), by its name in any case. */
export function headerOf(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}
