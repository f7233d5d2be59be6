// The URL each frame's document was loaded from, as the network delivered it. A page can rewrite the URL it
// shows (history.replaceState); the guard judges a frame by both, so a sensitive page cannot pass for another.

import type { Frame } from 'playwright-core';

const loaded = new WeakMap<Frame, string>();

export function noteLoadedUrl(frame: Frame, url: string): void {
  loaded.set(frame, url);
}

/** Where the frame's document came from, when it differs from the URL it shows now. */
export function loadedUrlOf(frame: Frame): string | undefined {
  const url = loaded.get(frame);
  return url !== undefined && url !== frame.url() ? url : undefined;
}
