// Where a key press without a ref lands: the deepest focused element, through iframes (same- or cross-origin,
// each on the session of its process) and open shadow roots, with its frame chain and effects. Read in tabward's
// isolated world of each document, like a ref's facts (elements.ts): a page that patched document.activeElement
// in its own world could otherwise point the judgement at a harmless field of its own while the keys go to a
// sensitive frame it embeds. When the chain cannot be followed, every frame of the page counts, so a page embedding
// a sensitive frame is treated as sensitive.

import type { CDPSession, Frame, Page } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import { withDeadline } from './deadline.ts';
import { readsWorld } from './documentReads.ts';
import { allFrames, type FocusTarget, frameChain, liveFactsSource } from './elements.ts';
import { childScope, type FrameScope, mainScope } from './frameScopes.ts';
import type { TrackedPage } from './pages.ts';
import { callOnElement, locatorFor } from './refLocators.ts';

/** Frames followed at most (an iframe focused inside an iframe ...). */
const maxDepth = 12;

export async function focusedTarget(tracked: TrackedPage, timeoutMs: number): Promise<FocusTarget> {
  return focusOn(tracked.page, await tracked.cdpSession(), timeoutMs, tracked.interrupted);
}

/** focusedTarget for any page (recipe runs drive pages tabward does not track). */
export async function focusOn(
  page: Page,
  session: CDPSession,
  timeoutMs: number,
  interrupted?: Promise<never>,
): Promise<FocusTarget> {
  const everywhere = (): FocusTarget => ({ frames: allFrames(page), effects: [], name: '', tag: '' });
  const work = async (): Promise<FocusTarget> => {
    let scope = await mainScope(session);
    for (let depth = 0; depth < maxDepth; depth++) {
      const focused = await focusedIn(scope);
      if (!focused) return { frames: frameChain(await frameOf(page, scope)), effects: [], name: '', tag: '' };
      if (focused.isFrame) {
        const child = await childScope(page, scope, focused.backendNodeId);
        if (!child) return everywhere();
        scope = child;
        continue;
      }
      const element = { frame: scope, backendNodeId: focused.backendNodeId };
      const [frame, live] = await Promise.all([
        frameOf(page, scope),
        callOnElement<Omit<FocusTarget, 'frames'>>(
          element,
          readsWorld,
          liveFactsSource,
          [true],
          'the focused element',
        ),
      ]);
      return { frames: frameChain(frame), ...live };
    }
    return everywhere();
  };
  try {
    return await withDeadline(work(), timeoutMs, 'reading the focused element', interrupted);
  } catch (error) {
    if (error instanceof TabwardError && error.code === 'dialog_open') throw error;
    return everywhere();
  }
}

/** Runs in tabward's world of a document: its focused element (the body when none is), through open shadow roots. */
const deepActiveElement = `(() => {
  let current = document.activeElement;
  while (current && current.shadowRoot && current.shadowRoot.activeElement) current = current.shadowRoot.activeElement;
  return current;
})()`;

async function focusedIn(
  scope: FrameScope,
): Promise<{ backendNodeId: number; isFrame: boolean } | undefined> {
  const { session, frameId } = scope;
  const { executionContextId } = await session.send('Page.createIsolatedWorld', {
    frameId,
    worldName: readsWorld,
  });
  const { result } = await session.send('Runtime.evaluate', {
    expression: deepActiveElement,
    contextId: executionContextId,
  });
  if (!result.objectId) return undefined;
  try {
    const { node } = await session.send('DOM.describeNode', { objectId: result.objectId });
    return {
      backendNodeId: node.backendNodeId,
      isFrame: node.nodeName === 'IFRAME' || node.nodeName === 'FRAME',
    };
  } finally {
    void session.send('Runtime.releaseObject', { objectId: result.objectId }).catch(() => undefined);
  }
}

/** The Playwright frame of a document tabward reached: the main frame, or the content of its iframe element. */
async function frameOf(page: Page, scope: FrameScope): Promise<Frame> {
  const owner = scope.owners.at(-1);
  if (!owner) return page.mainFrame();
  const handle = await (await locatorFor(page, owner, 'the focused frame')).elementHandle();
  try {
    const frame = await handle.contentFrame();
    if (!frame) throw new Error('the focused frame has no document');
    return frame;
  } finally {
    void handle.dispose().catch(() => undefined);
  }
}
