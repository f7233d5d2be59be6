// The documents of a tab as tabward reaches them over CDP: each frame on the session of its process (the tab's own
// session for the frames of the main document's process, a session of its own for each out-of-process frame), with
// the iframe elements above it. A document tabward read for a snapshot also carries the token tabward's world of
// that document holds (documentFacts.ts), so that an element remembered from it is never looked for in a later
// document of the same frame (whose elements may have the same backend node ids: a new process numbers from 1).

import type { CDPSession, Frame, Page } from 'playwright-core';

export interface FrameScope {
  readonly session: CDPSession;
  readonly frameId: string;
  /** The iframe elements that hold it, outermost first (none for the main document). */
  readonly owners: readonly ElementAddress[];
  /** The token of the document read (documentFacts.ts); none for a document reached live (the focus). */
  readonly document?: string;
}

export interface ElementAddress {
  readonly frame: FrameScope;
  readonly backendNodeId: number;
}

/** The tab's main document, on tabward's session of the tab. */
export async function mainScope(session: CDPSession): Promise<FrameScope> {
  return { session, frameId: await mainFrameId(session), owners: [] };
}

const mainFrameIds = new WeakMap<CDPSession, Promise<string>>();

/** The main frame of a session's target: for a tab, its target id, which does not change while the tab lives. */
function mainFrameId(session: CDPSession): Promise<string> {
  let id = mainFrameIds.get(session);
  if (!id) {
    id = session.send('Page.getFrameTree').then(({ frameTree }) => frameTree.frame.id);
    mainFrameIds.set(session, id);
  }
  return id;
}

/**
 * The document an iframe element shows: a frame of the same process is read on the parent's session, an
 * out-of-process one on its own. Undefined when the frame is gone or has no document yet.
 */
export async function childScope(
  page: Page,
  parent: FrameScope,
  owner: number,
): Promise<FrameScope | undefined> {
  const owners = [...parent.owners, { frame: parent, backendNodeId: owner }];
  const { node } = await parent.session.send('DOM.describeNode', { backendNodeId: owner }).catch(() => ({
    node: undefined,
  }));
  const frameId = node?.frameId;
  if (!frameId) return undefined;
  if ((await localFrames(parent.session)).includes(frameId))
    return { session: parent.session, frameId, owners };
  const session = (await outOfProcessSessions(page)).find((entry) => entry.frameId === frameId)?.session;
  return session ? { session, frameId, owners } : undefined;
}

/** The frames a session's target renders itself (its own and those of its process below it). */
export async function localFrames(session: CDPSession): Promise<string[]> {
  const { frameTree } = await session.send('Page.getFrameTree');
  interface Tree {
    readonly frame: { readonly id: string };
    readonly childFrames?: readonly Tree[];
  }
  const ids = (tree: Tree): string[] => [tree.frame.id, ...(tree.childFrames ?? []).flatMap(ids)];
  return ids(frameTree);
}

/** tabward's session of each out-of-process frame, with the frame id its target has (undefined: not one). */
const frameSessions = new WeakMap<Frame, Promise<{ session: CDPSession; frameId: string } | undefined>>();

/** A session that failed is opened anew next time (its frame's process may have changed). */
export function forgetSession(page: Page, session: CDPSession): void {
  for (const frame of page.frames())
    void frameSessions.get(frame)?.then((entry) => {
      if (entry?.session === session) frameSessions.delete(frame);
    });
}

/** A session for each out-of-process frame of the page (each opened once, then kept). */
export async function outOfProcessSessions(page: Page): Promise<{ session: CDPSession; frameId: string }[]> {
  const candidates = page.frames().filter((frame) => frame !== page.mainFrame() && !frame.isDetached());
  const found = await Promise.all(
    candidates.map((frame) => {
      let entry = frameSessions.get(frame);
      if (!entry) {
        entry = page
          .context()
          // Playwright refuses a frame that is part of its parent's process, or one whose target is not attached
          // yet: asked again next time.
          .newCDPSession(frame)
          .then(async (session) => ({ session, frameId: await mainFrameId(session) }))
          .catch(() => {
            frameSessions.delete(frame);
            return undefined;
          });
        frameSessions.set(frame, entry);
      }
      return entry;
    }),
  );
  return found.filter((entry) => entry !== undefined);
}
