// Reading a tab for its snapshot without Playwright's injected script: Chromium's own accessibility tree of each
// document, with what tabward reads beside it in its own isolated world (documentReads.ts). Frames are followed
// through their iframe elements, each on the session of its process (frameScopes.ts); the password values of the
// frames not shown (hidden, past the limits) are read too, since their scripts can copy a value into a frame that
// is. Measured here: the first read of a fresh document takes 10-14 ms against 36-46 ms for Playwright's aria
// snapshot, most of which is its script evaluated anew in every document (bench/results.md).

import type { CDPSession, Page } from 'playwright-core';
import { type AxNode, axToAria } from './axToAria.ts';
import { settledWithin } from './deadline.ts';
import { DocumentChanged, passwordsIn, pointerElements, readDocument, readsWorld } from './documentReads.ts';
import {
  childScope,
  type ElementAddress,
  type FrameScope,
  forgetSession,
  localFrames,
  mainScope,
  outOfProcessSessions,
} from './frameScopes.ts';
import { callOnElement } from './refLocators.ts';
import type { AriaNode } from './snapshotFormat.ts';

export { readsWorld } from './documentReads.ts';
export type { ElementAddress, FrameScope } from './frameScopes.ts';

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

export async function readTab(page: Page, session: CDPSession, timeoutMs: number): Promise<TabRead> {
  const frames = new Map<string, FrameScope>();
  const passwords: string[] = [];
  /** Frames being read or read: counted before any wait, so that siblings read at once keep to the limit. */
  let reserved = 1;
  // A frame that does not answer (a script busy looping) is left out rather than hold the whole snapshot.
  const frameBudgetMs = Math.max(1_000, Math.floor(timeoutMs / 3));
  const readFrame = async (scope: FrameScope): Promise<{ tree: (AriaNode | string)[]; title: string }> => {
    const { nodes, facts } = await readDocument(scope);
    const read: FrameScope = { ...scope, document: facts.document };
    const frameKey = `${scope.frameId}:${facts.document}`;
    frames.set(frameKey, read);
    passwords.push(...facts.passwords, ...(await hiddenPasswords(read, nodes, facts.passwordFields)));
    const pointer = facts.pointerCount > 0 ? await pointerElements(read) : new Set<number>();
    const contents = new Map<number, (AriaNode | string)[]>();
    const iframes = nodes.filter((node) => iframeRoles.has(String(node.role?.value)) && !node.ignored);
    await Promise.all(
      iframes.map(async (node) => {
        const owner = node.backendDOMNodeId;
        if (owner === undefined) return;
        if (read.owners.length + 1 > maxFrameDepth || reserved >= maxFrames) {
          contents.set(owner, [`(a frame not shown: ${maxFrames} frames, ${maxFrameDepth} deep at most)`]);
          return;
        }
        reserved++;
        const child = await childScope(page, read, owner).catch(() => undefined);
        if (!child) return;
        // A frame that cannot be read (gone or replaced meanwhile, its process busy or crashed) shows nothing of
        // its own: nothing of it needs masking then. The rest of the page is still read.
        const shown = await settledWithin(
          readFrame(child).catch((error: unknown) => {
            if (child.session !== read.session) forgetSession(page, child.session);
            const why = error instanceof DocumentChanged ? 'it was loading' : String(error).split('\n')[0];
            return { tree: [`(a frame that could not be read: ${why})`] };
          }),
          frameBudgetMs,
        );
        contents.set(owner, shown?.tree ?? [`(a frame that did not answer within ${frameBudgetMs} ms)`]);
      }),
    );
    const tree = axToAria(nodes, {
      frameKey,
      frameContent: (backendNodeId) => contents.get(backendNodeId),
      pointer,
    });
    return { tree, title: facts.title };
  };
  const { tree, title } = await readFrame(await mainScope(session));
  passwords.push(...(await unshownPasswords(page, session, frames, frameBudgetMs)));
  return { tree, title, passwords, frames };
}

const iframeRoles = new Set(['Iframe', 'IframePresentational']);

/**
 * The values of password fields the document's own read could not reach (a closed shadow root): Chromium's tree
 * shows each as bullets, and when there are more of those than values read, each is read through its node. Most
 * pages have none, and pay nothing for this.
 */
async function hiddenPasswords(
  scope: FrameScope,
  nodes: readonly AxNode[],
  reached: number,
): Promise<string[]> {
  const bulleted = nodes.filter(
    (node) =>
      !node.ignored && node.backendDOMNodeId !== undefined && /^•+$/.test(String(node.value?.value ?? '')),
  );
  if (bulleted.length <= reached) return [];
  return Promise.all(
    bulleted.map((node) =>
      callOnElement<string>(
        { frame: scope, backendNodeId: node.backendDOMNodeId ?? -1 },
        readsWorld,
        'function () { return String(this.value ?? ""); }',
        [],
        'a password field',
      ),
    ),
  );
}

/**
 * The password values of every frame of the tab that was not read for the tree (hidden, past the limits), each
 * bounded: a frame's script can copy a value into one that is shown. Nothing to do when every frame was read.
 */
async function unshownPasswords(
  page: Page,
  session: CDPSession,
  read: ReadonlyMap<string, FrameScope>,
  budgetMs: number,
): Promise<string[]> {
  if (page.frames().length <= read.size) return [];
  const readIds = new Set([...read.values()].map((scope) => scope.frameId));
  const sessions = [session, ...(await outOfProcessSessions(page)).map((entry) => entry.session)];
  const values = await Promise.all(
    [...new Set(sessions)].map(async (each) => {
      const ids =
        (await settledWithin(
          localFrames(each).catch(() => []),
          budgetMs,
        )) ?? [];
      const unread = ids.filter((id) => !readIds.has(id));
      const found = await Promise.all(
        unread.map(
          async (id) =>
            (await settledWithin(
              passwordsIn(each, id).catch(() => []),
              budgetMs,
            )) ?? [],
        ),
      );
      return found.flat();
    }),
  );
  return values.flat();
}
