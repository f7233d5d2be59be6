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
    readonly hasPostData?: boolean;
    readonly postData?: string;
    readonly postDataEntries?: readonly { readonly bytes?: string }[];
  };
}

/**
 * What a paused request carries, as a question about it shows it: its bytes as UTF-8 text, or that it carries
 * something CDP did not report (a body too long for the event): asked about, it could not be shown.
 */
export function bodyOf(request: PausedRequest['request']): { body?: string; bodyUnread?: true } {
  const entries = request.postDataEntries;
  if (entries && entries.length > 0 && entries.every((entry) => entry.bytes !== undefined))
    return {
      body: Buffer.concat(entries.map((entry) => Buffer.from(entry.bytes ?? '', 'base64'))).toString('utf8'),
    };
  if (request.postData !== undefined) return { body: request.postData };
  return request.hasPostData ? { bodyUnread: true } : {};
}

/** What a Playwright request carries, as text, for a question about it (route hooks: the user's Chrome, remote). */
export function bodyOfRequest(request: Request): { body?: string } {
  const bytes = request.postDataBuffer();
  return bytes ? { body: bytes.toString('utf8') } : {};
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
