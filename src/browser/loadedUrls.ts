// The URL each frame's document was loaded from, as the network delivered it. A page can rewrite the URL it
// shows (history.replaceState); the guard judges a frame by both, so a sensitive page cannot pass for another.
// Beside it, the frames that asked for a document at all: a snapshot waits for those still loading, not for a lazy
// frame that will not load until it is scrolled to.

import type { Frame } from 'playwright-core';

const loaded = new WeakMap<Frame, string>();
const requested = new WeakSet<Frame>();

export function noteNavigationRequested(frame: Frame): void {
  requested.add(frame);
}

/** Whether the frame has sent a request for a document (a lazy frame out of view has not). */
export function navigationRequested(frame: Frame): boolean {
  return requested.has(frame);
}

export function noteLoadedUrl(frame: Frame, url: string): void {
  loaded.set(frame, url);
}

/** Where the frame's document came from, when it differs from the URL it shows now. */
export function loadedUrlOf(frame: Frame): string | undefined {
  const url = loaded.get(frame);
  return url !== undefined && url !== frame.url() ? url : undefined;
}
