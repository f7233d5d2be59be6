// Reading a tab for its snapshot without Playwright's injected script: Chromium's own accessibility tree of each
// document, with what tabward reads beside it in its own isolated world (documentReads.ts). Frames are followed
// through their iframe elements, each on the session of its process (frameScopes.ts); the password values of the
// frames not shown (hidden, past the limits) are read too, since their scripts can copy a value into a frame that
// is. Measured here: the first read of a fresh document takes 10-14 ms against 36-46 ms for Playwright's aria
// snapshot, most of which is its script evaluated anew in every document (bench/results.md).

import type { Page } from 'playwright-core';
import { swallow } from '../../core/debug.ts';
import { TabwardError } from '../../core/errors.ts';
import { settledWithin } from '../deadline.ts';
import { axToAria, type FrameShown } from './axToAria.ts';
import {
  DocumentChanged,
  passwordsIn,
  pointerElements,
  type ReadShared,
  readDocument,
  SessionCaptures,
} from './documentReads.ts';
import {
  type ElementAddress,
  FrameFinder,
  type FrameScope,
  forgetSession,
  mainScope,
} from './frameScopes.ts';
import type { ReadSession } from './readSessions.ts';
import type { AriaNode } from './snapshotFormat.ts';

export interface TabRead {
  readonly tree: (AriaNode | string)[];
  readonly title: string;
  readonly passwords: string[];
  /** Every document read, by the frame key its refs carry. */
  readonly frames: ReadonlyMap<string, FrameScope>;
}

/** The element a ref key (`<frame key>/<backend node id>`) names, or undefined when its document was not read. */
export function addressOf(key: string, frames: ReadonlyMap<string, FrameScope>): ElementAddress | undefined {
  const slash = key.lastIndexOf('/');
  const frame = frames.get(key.slice(0, slash));
  const backendNodeId = Number(key.slice(slash + 1));
  return frame && Number.isInteger(backendNodeId) ? { frame, backendNodeId } : undefined;
}

/** Frames nested deeper than this, or more of them than this, are not shown (the snapshot says so). */
const maxFrameDepth = 8;
const maxFrames = 60;

export async function readTab(page: Page, session: ReadSession, timeoutMs: number): Promise<TabRead> {
  const frames = new Map<string, FrameScope>();
  const passwords: string[] = [];
  const finder = new FrameFinder(page, session);
  /** Frames being read or read: counted before any wait, so that siblings read at once keep to the limit. */
  let reserved = 1;
  // A frame that does not answer (a script busy looping) fails the snapshot within this, not at its deadline.
  const frameBudgetMs = Math.max(1_000, Math.floor(timeoutMs / 3));
  const progress: ReadProgress = { answered: 0 };
  const answered = () => {
    progress.answered++;
  };
  const shared = { answered, captures: new SessionCaptures() };
  const early = readOutOfProcessEarly(page, finder, shared);
  const readFrame = async (
    scope: FrameScope,
  ): Promise<{ tree: (AriaNode | string)[]; title: string; url: string }> => {
    const started = early.get(scope.frameId);
    const { nodes, facts } = await (started?.session === scope.session
      ? started.read
      : readDocument(scope, shared));
    const read: FrameScope = { ...scope, document: facts.document };
    const frameKey = `${scope.frameId}:${facts.document}`;
    frames.set(frameKey, read);
    passwords.push(...facts.passwords);
    const pointer = facts.pointerCount > 0 ? await pointerElements(read) : new Set<number>();
    const contents = new Map<number, FrameShown>();
    const iframes = nodes.filter((node) => iframeRoles.has(String(node.role?.value)) && !node.ignored);
    await Promise.all(
      iframes.map(async (node) => {
        const owner = node.backendDOMNodeId;
        if (owner === undefined) return;
        if (read.owners.length + 1 > maxFrameDepth || reserved >= maxFrames) {
          contents.set(owner, {
            children: [`(a frame not shown: ${maxFrames} frames, ${maxFrameDepth} deep at most)`],
          });
          return;
        }
        reserved++;
        const shown = await childContent(
          finder,
          read,
          owner,
          { budgetMs: frameBudgetMs, progress },
          readFrame,
        );
        if (shown) contents.set(owner, shown);
      }),
    );
    const tree = axToAria(nodes, {
      frameKey,
      frameContent: (backendNodeId) => contents.get(backendNodeId),
      pointer,
    });
    return { tree, title: facts.title, url: facts.url };
  };
  const { tree, title } = await readFrame(await mainScope(session));
  passwords.push(...(await unshownPasswords(page, session, finder, frames, frameBudgetMs)));
  return { tree, title, passwords, frames };
}

const iframeRoles = new Set(['Iframe', 'IframePresentational']);

type EarlyReads = ReadonlyMap<string, { session: ReadSession; read: ReturnType<typeof readDocument> }>;

/**
 * The documents of the tab's out-of-process frames (FrameFinder.earlyFrames: on the pipe, those the main document
 * holds), read while the main document is: each is rendered by a process of its own, so the reads run side by side
 * rather than one level of frames after another. Filled as the frames'
 * sessions come (a frame not in it yet when its iframe is reached is read then). A read is used only for the frame
 * its iframe element names, on the same session; one no iframe shown names is left (its passwords are read with
 * the unshown frames').
 */
function readOutOfProcessEarly(page: Page, finder: FrameFinder, shared: ReadShared): EarlyReads {
  const reads = new Map<string, { session: ReadSession; read: ReturnType<typeof readDocument> }>();
  if (page.frames().length === 1) return reads;
  void finder
    .earlyFrames()
    .then((entries) => {
      // No more than the snapshot shows: a page with hundreds of frames does not have them all read each time.
      for (const { session, frameId } of entries.slice(0, maxFrames - 1)) {
        const read = readDocument({ session, frameId, owners: [] }, shared);
        // Awaited by the frame's reader, if an iframe shown names it.
        read.catch(() => undefined);
        reads.set(frameId, { session, read });
      }
    })
    .catch(swallow('browser', 'axRead.readOutOfProcessEarly: the frames are read one level after another'));
  return reads;
}

/** How many answers the renderers gave this snapshot's reads so far. */
interface ReadProgress {
  answered: number;
}

/**
 * What an iframe element shows, read within the frame budget. The budget runs out only when no document of the tab
 * answered within it: the frames of one process are read by one renderer, one after another, so twenty large
 * frames asked at once have the last wait for the nineteen others (on a loaded machine, past any fixed budget).
 * A frame gone meanwhile (removed, its process crashed) shows a line saying so: nothing of it is shown, so nothing
 * of it needs masking. A frame still there that does not answer (its script busy looping), or whose parent cannot
 * say whether it is still there, fails the snapshot: its password values are unknown, and its script may have
 * copied one into a frame that is shown. A document replaced meanwhile, or a frame that failed (one loading), reads
 * the tab again.
 */
async function childContent(
  finder: FrameFinder,
  parent: FrameScope,
  owner: number,
  { budgetMs, progress }: { budgetMs: number; progress: ReadProgress },
  readFrame: (scope: FrameScope) => Promise<{ tree: (AriaNode | string)[]; url: string }>,
): Promise<FrameShown | undefined> {
  let child: FrameScope | undefined;
  const work = (async () => {
    child = await finder.childScope(parent, owner);
    if (!child) return undefined;
    const { tree, url } = await readFrame(child);
    return { children: tree, url };
  })().then(
    (shown) => ({ shown }),
    (error: unknown) => ({ error }),
  );
  let outcome: Awaited<typeof work> | { late: true };
  for (;;) {
    const answeredBefore = progress.answered;
    let timer: NodeJS.Timeout | undefined;
    outcome = await Promise.race([
      work,
      new Promise<{ late: true }>((resolve) => {
        timer = setTimeout(() => resolve({ late: true }), budgetMs);
      }),
    ]);
    clearTimeout(timer);
    if (!('late' in outcome) || progress.answered === answeredBefore) break;
  }
  if ('shown' in outcome) return outcome.shown;
  if ('error' in outcome && outcome.error instanceof DocumentChanged) throw outcome.error;
  // Asked of the parent's document (the frame itself may be what does not answer): does the element still hold a
  // frame? Only an answer that it does not (or that the element is gone) shows the frame as gone.
  const still = await settledWithin(
    parent.session.send('DOM.describeNode', { backendNodeId: owner }).then(
      ({ node }) => node.frameId !== undefined,
      () => false,
    ),
    1_000,
  );
  if (still === false) {
    if (child && child.session !== parent.session) forgetSession(finder.page, child.session);
    return { children: ['(a frame that went away while it was read)'] };
  }
  // A frame that failed (most often one between two documents, loading) is read again with the whole tab.
  if ('error' in outcome) throw new DocumentChanged(`a frame could not be read: ${String(outcome.error)}`);
  throw new TabwardError(
    'blocked',
    `A frame of the page did not answer within ${budgetMs} ms, so its password fields could not be read to mask them; nothing was shown.`,
    'The frame may be busy: call take_snapshot again, or take_screenshot to see the page.',
  );
}

/**
 * The password values of every frame of the tab that was not read for the tree (hidden, past the limits), each
 * within the frame budget: a frame's script can copy a value into one that is shown. One that does not answer fails
 * the snapshot, as a shown one does.
 */
async function unshownPasswords(
  page: Page,
  session: ReadSession,
  finder: FrameFinder,
  read: ReadonlyMap<string, FrameScope>,
  budgetMs: number,
): Promise<string[]> {
  if (page.frames().length === 1 && read.size === 1) return [];
  const readIds = new Set([...read.values()].map((scope) => scope.frameId));
  const unanswered = () =>
    new TabwardError(
      'blocked',
      `A frame of the page the snapshot does not show did not answer within ${budgetMs} ms, so its password fields could not be read to mask them; nothing was shown.`,
      'The frame may be busy or loading: call take_snapshot again, or take_screenshot to see the page.',
    );
  const sessions = await settledWithin(finder.outOfProcess(), budgetMs);
  if (!sessions) throw unanswered();
  const values = await Promise.all(
    [...new Set([session, ...sessions.map((entry) => entry.session)])].map(async (each) => {
      const listed = await settledWithin(
        finder.localFrames(each).then(
          (ids) => ({ ids }),
          // A session that failed (its frame gone) has nothing left to mask.
          () => ({ ids: [] as string[] }),
        ),
        budgetMs,
      );
      if (!listed) throw unanswered();
      const { ids } = listed;
      const unread = ids.filter((id) => !readIds.has(id));
      const found = await Promise.all(
        unread.map(async (id) => {
          const got = await settledWithin(
            passwordsIn(each, id).then(
              (list) => ({ list }),
              () => ({ list: [] as string[] }),
            ),
            budgetMs,
          );
          if (!got) throw unanswered();
          return got.list;
        }),
      );
      return found.flat();
    }),
  );
  return values.flat();
}
