// The DevTools sessions tabward reads a tab's documents on (snapshots, refs, the focused element). In a browser
// tabward started, driven over a pipe, they are sessions of its own on that pipe (browser/pipeSession.ts): a command
// is a message written and its answer is parsed once. Elsewhere (the user's Chrome, a remote browser) they are
// Playwright's CDP sessions. Measured here: a command through Playwright's CDP session cost tabward's process
// 0.8-1.2 ms of CPU (its client, its dispatcher, a stack captured for each call) against 0.07-0.12 ms on the pipe, and
// the first snapshot of a page with four cross-site frames makes about fifty (bench/results.md, the thirteenth pass).

import type { CDPSession, Page } from 'playwright-core';
import { swallow } from '../../core/debug.ts';
import { type PipeSession, type PipeSessions, pipeOfContext } from '../pipeSession.ts';

/** What a read needs of a session: Playwright's CDP session, or one of tabward's own on the pipe. */
export type ReadSession = Pick<CDPSession, 'send' | 'detach'>;

/** A read session on the pipe, which says when it has ended (its target closed, or the pipe). */
export interface PipeReadSession extends ReadSession {
  readonly isClosed: boolean;
}

/**
 * A session of tabward's own on the tab, on its browser's pipe; undefined where there is none. `targetId`: the tab's
 * target, asked of a session it has.
 */
export async function tabSessionOnThePipe(
  page: Page,
  targetId: string,
): Promise<PipeReadSession | undefined> {
  const pipe = pipeOfContext(page.context());
  if (!pipe) return undefined;
  const session = await pipe.open(targetId);
  page.once('close', () => void session.detach());
  return reading(session);
}

/**
 * A pipe session as a ReadSession. Its failures are worded as Playwright's are, which the tools translate into what
 * the agent can act on (deadline.ts): a session that ended says its target closed.
 */
function reading(pipe: PipeSession): PipeReadSession {
  const send = (method: string, params?: object) =>
    pipe.send(method, params ?? {}).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`Protocol error (${method}): ${pipe.isClosed ? `Target closed (${reason})` : reason}`);
    });
  return {
    send: send as ReadSession['send'],
    detach: () => pipe.detach(),
    get isClosed() {
      return pipe.isClosed;
    },
  };
}

interface FrameEntry {
  readonly opening: Promise<ReadSession | undefined>;
  /** Once open. */
  pipe?: PipeSession;
  session?: ReadSession;
}

/** tabward's sessions of each tab's out-of-process frames on the pipe, by frame id (the frame's target id). */
const framesOnThePipe = new WeakMap<Page, Map<string, FrameEntry>>();

function frameEntries(page: Page): Map<string, FrameEntry> {
  let entries = framesOnThePipe.get(page);
  if (!entries) {
    const created = new Map<string, FrameEntry>();
    page.once('close', () => {
      for (const entry of created.values()) void entry.pipe?.detach();
      created.clear();
    });
    framesOnThePipe.set(page, created);
    entries = created;
  }
  // A frame gone (its document replaced by another page's, its process crashed) took its session with it.
  for (const [frameId, entry] of entries) if (entry.pipe?.isClosed) entries.delete(frameId);
  return entries;
}

/**
 * tabward's session of an out-of-process frame of the tab on the pipe (opened once, then kept while its target
 * lives); undefined when the frame has no target of its own (a frame of its parent's process, or one not started).
 */
export function frameSessionOnThePipe(
  page: Page,
  pipe: PipeSessions,
  frameId: string,
): Promise<ReadSession | undefined> {
  const entries = frameEntries(page);
  const known = entries.get(frameId);
  if (known) return known.opening;
  const entry: FrameEntry = {
    opening: pipe.open(frameId).then(
      (session) => {
        entry.pipe = session;
        entry.session = reading(session);
        return entry.session;
      },
      () => {
        // Asked again at the next read: the frame's target may not have started yet.
        entries.delete(frameId);
        return undefined;
      },
    ),
  };
  entries.set(frameId, entry);
  return entry.opening;
}

/** Leaves a frame's session that failed: the next read opens a new one. False when it is not one of these. */
export function forgetFrameOnThePipe(page: Page, session: ReadSession): boolean {
  const entries = framesOnThePipe.get(page);
  for (const [frameId, entry] of entries ?? [])
    if (entry.session === session) {
      entries?.delete(frameId);
      void session.detach().catch(swallow('browser', 'readSessions.forgetFrameOnThePipe: detach()'));
      return true;
    }
  return false;
}

/** The pipe's session on the browser target, for what only it answers (the list of targets). */
const browserSessions = new WeakMap<PipeSessions, Promise<PipeSession>>();

/** The out-of-process frames the browser has, each with the frame that holds it. */
export async function frameTargets(
  pipe: PipeSessions,
): Promise<{ frameId: string; parentFrameId: string }[]> {
  let session = browserSessions.get(pipe);
  if (!session || (await session.catch(() => undefined))?.isClosed) {
    session = pipe.open();
    browserSessions.set(pipe, session);
  }
  const { targetInfos } = (await (await session).send('Target.getTargets')) as {
    targetInfos: { targetId: string; type: string; parentFrameId?: string }[];
  };
  return targetInfos.flatMap((target) =>
    target.type === 'iframe' && target.parentFrameId
      ? [{ frameId: target.targetId, parentFrameId: target.parentFrameId }]
      : [],
  );
}
