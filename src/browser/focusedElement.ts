// Where a key press without a ref lands: the deepest focused element, through frames (iframe, object and embed
// elements; same- or cross-origin, each on the session of its process) and shadow roots (open and closed), with its
// frame chain and effects. Read in tabward's isolated world of each document, like a ref's facts (elements.ts): a
// page that patched document.activeElement in its own world could otherwise point the judgement at a harmless field
// of its own while the keys go to a sensitive frame it embeds. When the chain cannot be followed, every frame of the
// page counts, so a page embedding a sensitive frame is treated as sensitive.

import type { Frame, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import { TabwardError } from '../core/errors.ts';
import { withDeadline } from './deadline.ts';
import {
  allFrames,
  type FocusTarget,
  frameChain,
  type KnownToAgent,
  keptFacts,
  liveFactsSource,
  type PasswordCopies,
} from './elements.ts';
import type { TrackedPage } from './pages.ts';
import { readsWorld, worldOf } from './snapshot/documentReads.ts';
import { FrameFinder, type FrameScope, mainScope } from './snapshot/frameScopes.ts';
import type { ReadSession } from './snapshot/readSessions.ts';
import { callOnElement, locatorFor } from './snapshot/refLocators.ts';
import { passwordsSeen } from './snapshot/snapshot.ts';

/** Frames and closed shadow roots followed at most (an iframe focused inside an iframe ...). */
const maxDepth = 12;

export async function focusedTarget(
  tracked: TrackedPage,
  timeoutMs: number,
  /** What the agent knows of a value (elements.ts KnownToAgent). */
  known?: KnownToAgent,
): Promise<FocusTarget> {
  const copies = { seen: passwordsSeen(tracked), ...(known ? { known } : {}) };
  return focusOn(tracked.page, await tracked.cdpSession(), timeoutMs, tracked.interrupted, copies);
}

/**
 * focusedTarget for any page (recipe runs drive pages tabward does not track). Bounded by a third of the step's
 * deadline (at least a second): the key press that follows has a deadline of its own.
 */
export async function focusOn(
  page: Page,
  session: ReadSession,
  timeoutMs: number,
  interrupted?: Promise<never>,
  copies?: PasswordCopies,
): Promise<FocusTarget> {
  const everywhere = (): FocusTarget => ({ frames: allFrames(page), effects: [], name: '', tag: '' });
  const boundMs = Math.max(1_000, Math.floor(timeoutMs / 3));
  const finder = new FrameFinder(page, session);
  const work = async (): Promise<FocusTarget> => {
    let scope = await mainScope(session);
    let focused = await focusedIn(scope, undefined);
    for (let depth = 0; depth < maxDepth; depth++) {
      if (!focused)
        return { frames: frameChain(await frameOf(page, scope, boundMs)), effects: [], name: '', tag: '' };
      if (focused.kind === 'frame') {
        const child = await finder.childScope(scope, focused.backendNodeId);
        if (!child) return everywhere();
        scope = child;
        focused = await focusedIn(scope, undefined);
        continue;
      }
      if (focused.kind === 'closed-host') {
        focused = await focusedIn(scope, focused.shadowRoot);
        continue;
      }
      const element = { frame: scope, backendNodeId: focused.backendNodeId };
      const [frame, live] = await Promise.all([
        frameOf(page, scope, boundMs),
        callOnElement<Omit<FocusTarget, 'frames'>>(
          element,
          readsWorld,
          liveFactsSource,
          [true],
          'the focused element',
        ),
      ]);
      return { frames: frameChain(frame), ...keptFacts(live, copies) };
    }
    return everywhere();
  };
  try {
    return await withDeadline(work(), boundMs, 'reading the focused element', interrupted);
  } catch (error) {
    if (error instanceof TabwardError && error.code === 'dialog_open') throw error;
    return everywhere();
  }
}

/**
 * Runs in tabward's world of a document, on the document or a closed shadow root (`this`): its focused element
 * (the body when none is), through the open shadow roots below it.
 */
const deepActiveElement = `function () {
  let current = this.activeElement;
  while (current && current.shadowRoot && current.shadowRoot.activeElement) current = current.shadowRoot.activeElement;
  return current;
}`;

type Focused =
  | { readonly kind: 'element' | 'frame'; readonly backendNodeId: number }
  | { readonly kind: 'closed-host'; readonly backendNodeId: number; readonly shadowRoot: number };

/**
 * The focused element of a document (or of one of its closed shadow roots, by backend node id): a frame element
 * whose document holds the focus, a host whose closed shadow root holds it (a closed root's focus shows as its host
 * to any script but the page's), or the element itself. Undefined: nothing has the focus there.
 */
async function focusedIn(scope: FrameScope, within: number | undefined): Promise<Focused | undefined> {
  const { session } = scope;
  const contextId = await worldOf(session, scope.frameId);
  const objectGroup = 'tabward-focus';
  try {
    const root = within
      ? (
          await session.send('DOM.resolveNode', {
            backendNodeId: within,
            executionContextId: contextId,
            objectGroup,
          })
        ).object.objectId
      : (await session.send('Runtime.evaluate', { expression: 'document', contextId, objectGroup })).result
          .objectId;
    if (!root) return undefined;
    const { result } = await session.send('Runtime.callFunctionOn', {
      objectId: root,
      functionDeclaration: deepActiveElement,
      objectGroup,
    });
    if (!result.objectId) return undefined;
    const { node } = await session.send('DOM.describeNode', {
      objectId: result.objectId,
      depth: 1,
      pierce: true,
    });
    if (frameOwners.has(node.nodeName)) return { kind: 'frame', backendNodeId: node.backendNodeId };
    const closed = node.shadowRoots?.find((shadow) => shadow.shadowRootType === 'closed');
    if (closed)
      return { kind: 'closed-host', backendNodeId: node.backendNodeId, shadowRoot: closed.backendNodeId };
    return { kind: 'element', backendNodeId: node.backendNodeId };
  } finally {
    void session
      .send('Runtime.releaseObjectGroup', { objectGroup })
      .catch(
        swallow(
          'browser',
          'focusedElement.focusedIn: session.send("Runtime.releaseObjectGroup", { objectGroup })',
        ),
      );
  }
}

/** Elements whose content is a document of its own (a frame of the page). */
const frameOwners = new Set(['IFRAME', 'FRAME', 'OBJECT', 'EMBED']);

/** The Playwright frame of a document tabward reached: the main frame, or the content of its frame element. */
async function frameOf(page: Page, scope: FrameScope, timeoutMs: number): Promise<Frame> {
  const owner = scope.owners.at(-1);
  if (!owner) return page.mainFrame();
  const handle = await (await locatorFor(page, owner, 'the focused frame')).elementHandle({
    timeout: timeoutMs,
  });
  try {
    const frame = await handle.contentFrame();
    if (!frame) throw new Error('the focused frame has no document');
    return frame;
  } finally {
    void handle.dispose().catch(swallow('browser', 'focusedElement.frameOf: handle.dispose()'));
  }
}
