// The documents of a tab as tabward reaches them over CDP: each frame on the session of its process (the tab's own
// session for the frames of the main document's process, a session of its own for each out-of-process frame), with
// the iframe elements above it. A document tabward read for a snapshot also carries the token tabward's world of
// that document holds (documentFacts.ts), so that an element remembered from it is never looked for in a later
// document of the same frame (whose elements may have the same backend node ids: a new process numbers from 1).

import type { CDPSession, Frame, Page } from 'playwright-core';
import { swallow } from '../../core/debug.ts';
import { type PipeSessions, pipeOfContext } from '../pipeSession.ts';
import {
  forgetFrameOnThePipe,
  frameSessionOnThePipe,
  frameTargets,
  type ReadSession,
} from './readSessions.ts';

export interface FrameScope {
  readonly session: ReadSession;
  readonly frameId: string;
  /** The iframe elements that hold it, outermost first (none for the main document). */
  readonly owners: readonly ElementAddress[];
  /** The token of the document read (documentReads.ts); none for a document reached live (the focus). */
  readonly document?: string;
}

export interface ElementAddress {
  readonly frame: FrameScope;
  readonly backendNodeId: number;
}

/** The tab's main document, on tabward's session of the tab. */
export async function mainScope(session: ReadSession): Promise<FrameScope> {
  return { session, frameId: await mainFrameId(session), owners: [] };
}

const mainFrameIds = new WeakMap<ReadSession, Promise<string>>();

/**
 * The main frame of a session's target (a tab's, an out-of-process frame's): its target id, which does not change
 * while the target lives. Asked of the browser, not of the renderer, which may be busy loading a document.
 */
export function mainFrameId(session: ReadSession): Promise<string> {
  let id = mainFrameIds.get(session);
  if (!id) {
    id = session.send('Target.getTargetInfo').then(({ targetInfo }) => targetInfo.targetId);
    mainFrameIds.set(session, id);
  }
  return id;
}

/**
 * Finds the frames of one tab for one read (a snapshot, a focus lookup): each session's frames and the tab's
 * out-of-process sessions are asked once a read, whatever the number of iframes. In a browser tabward started, the
 * out-of-process frames' sessions are its own on the pipe (readSessions.ts), else Playwright's.
 */
export class FrameFinder {
  private readonly locals = new Map<ReadSession, Promise<string[]>>();
  private sessions: Promise<{ session: ReadSession; frameId: string }[]> | undefined;
  private readonly pipe: PipeSessions | undefined;

  /** `tab`: the session the tab's main document is read on. */
  constructor(
    readonly page: Page,
    private readonly tab: ReadSession,
  ) {
    this.pipe = pipeOfContext(page.context());
  }

  /**
   * The document an iframe (or object, embed) element shows: a frame of the same process is read on the parent's
   * session, an out-of-process one on its own. Undefined when the frame is gone or has no document yet.
   */
  async childScope(parent: FrameScope, owner: number): Promise<FrameScope | undefined> {
    const owners = [...parent.owners, { frame: parent, backendNodeId: owner }];
    const { node } = await parent.session.send('DOM.describeNode', { backendNodeId: owner }).catch(() => ({
      node: undefined,
    }));
    const frameId = node?.frameId;
    if (!frameId) return undefined;
    if ((await this.localFrames(parent.session)).includes(frameId))
      return { session: parent.session, frameId, owners };
    const session = this.pipe
      ? await frameSessionOnThePipe(this.page, this.pipe, frameId)
      : (await this.outOfProcess()).find((entry) => entry.frameId === frameId)?.session;
    return session ? { session, frameId, owners } : undefined;
  }

  /** The frames a session's target renders itself (its own and those of its process below it). */
  localFrames(session: ReadSession): Promise<string[]> {
    let ids = this.locals.get(session);
    if (!ids) {
      ids = localFramesOf(session);
      this.locals.set(session, ids);
    }
    return ids;
  }

  /** A session for each out-of-process frame of the tab. */
  outOfProcess(): Promise<{ session: ReadSession; frameId: string }[]> {
    this.sessions ??= this.pipe ? this.outOfProcessOnThePipe(this.pipe) : outOfProcessSessions(this.page);
    return this.sessions;
  }

  /**
   * The out-of-process frames worth reading before their iframe elements are reached (axRead.ts): on the pipe, the
   * frame targets the tab's main document holds, found in the browser's list alone (no renderer is asked, and the
   * renderers are busiest as a page loads); else every out-of-process frame of the tab.
   */
  async earlyFrames(): Promise<{ session: ReadSession; frameId: string }[]> {
    const pipe = this.pipe;
    if (!pipe) return this.outOfProcess();
    const [targets, main] = await Promise.all([frameTargets(pipe), mainFrameId(this.tab)]);
    const opened = await Promise.all(
      targets
        .filter((target) => target.parentFrameId === main)
        .map(async ({ frameId }) => ({
          frameId,
          session: await frameSessionOnThePipe(this.page, pipe, frameId),
        })),
    );
    return opened.flatMap(({ frameId, session }) => (session ? [{ frameId, session }] : []));
  }

  /**
   * The browser's frame targets held by a frame of this tab: the tab's own frames first, then, level by level, those
   * held by a frame found (a frame's target names the frame that holds it). The frames a found frame's process
   * renders below it are asked only while some target is still unplaced.
   */
  private async outOfProcessOnThePipe(
    pipe: PipeSessions,
  ): Promise<{ session: ReadSession; frameId: string }[]> {
    const targets = await frameTargets(pipe);
    const ours = new Set(await this.localFrames(this.tab));
    const found: { session: ReadSession; frameId: string }[] = [];
    const asked = new Set<string>();
    for (;;) {
      const level = targets.filter((target) => ours.has(target.parentFrameId) && !asked.has(target.frameId));
      if (level.length === 0) return found;
      const opened = await Promise.all(
        level.map(async ({ frameId }) => {
          asked.add(frameId);
          ours.add(frameId);
          const session = await frameSessionOnThePipe(this.page, pipe, frameId);
          if (session) found.push({ session, frameId });
          return session;
        }),
      );
      if (targets.every((target) => asked.has(target.frameId))) return found;
      for (const session of opened)
        if (session) for (const id of await this.localFrames(session).catch(() => [])) ours.add(id);
    }
  }
}

async function localFramesOf(session: ReadSession): Promise<string[]> {
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
/** The sessions of frameSessions once open, to forget one at once. */
const openSessions = new WeakMap<Frame, CDPSession>();

/** A session that failed is closed, and opened anew next time (its frame's process may have changed). */
export function forgetSession(page: Page, session: ReadSession): void {
  if (forgetFrameOnThePipe(page, session)) return;
  for (const frame of page.frames())
    if (openSessions.get(frame) === session) {
      frameSessions.delete(frame);
      openSessions.delete(frame);
    }
  void session.detach().catch(swallow('browser', 'frameScopes.forgetSession: session.detach()'));
}

/** A session for each out-of-process frame of the page (each opened once, then kept). */
async function outOfProcessSessions(page: Page): Promise<{ session: CDPSession; frameId: string }[]> {
  const candidates = page.frames().filter((frame) => frame !== page.mainFrame() && !frame.isDetached());
  const found = await Promise.all(
    candidates.map((frame) => {
      let entry = frameSessions.get(frame);
      if (!entry) {
        entry = page
          .context()
          // Playwright refuses a frame that is part of its parent's process, or one whose target is not attached
          // yet: asked again at the next read.
          .newCDPSession(frame)
          .then(async (session) => {
            openSessions.set(frame, session);
            return { session, frameId: await mainFrameId(session) };
          })
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
