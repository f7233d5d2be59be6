// Reading a tab for its snapshot without Playwright's injected script: Chromium's own accessibility tree of each
// document (Accessibility.getFullAXTree), beside the facts tabward reads for itself in an isolated world of its own
// (the title, the password values to mask, the custom widgets with a pointer cursor). Frames are followed through
// their iframe elements: a frame of the same process on the tab's session, an out-of-process frame on a session of
// its own. Measured here: the first read of a fresh document takes 10-14 ms against 36-46 ms for Playwright's
// aria snapshot, most of which is its script evaluated anew in every document (bench/results.md).

import type { CDPSession, Frame, Page } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import { type AxNode, axToAria } from './axToAria.ts';
import type { AriaNode } from './snapshotFormat.ts';

/** A document tabward read, and how to reach it again: the session of its process and, above it, its iframes. */
export interface FrameScope {
  readonly session: CDPSession;
  readonly frameId: string;
  /** The iframe elements that hold it, outermost first (none for the main document). */
  readonly owners: readonly ElementAddress[];
}

export interface ElementAddress {
  readonly frame: FrameScope;
  readonly backendNodeId: number;
}

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

/** Frames nested deeper than this, or more of them than this, are not read (the snapshot says so). */
const maxFrameDepth = 8;
const maxFrames = 60;

export async function readTab(page: Page, session: CDPSession): Promise<TabRead> {
  const frames = new Map<string, FrameScope>();
  const passwords: string[] = [];
  const main = await mainScope(session);
  const readFrame = async (scope: FrameScope): Promise<{ tree: (AriaNode | string)[]; title: string }> => {
    frames.set(scope.frameId, scope);
    const [nodes, facts] = await Promise.all([axNodes(scope), factsOf(scope)]);
    passwords.push(...facts.passwords);
    const pointer = facts.pointerCount > 0 ? await pointerElements(scope) : new Set<number>();
    const contents = new Map<number, (AriaNode | string)[]>();
    const iframes = nodes.filter((node) => iframeRoles.has(String(node.role?.value)) && !node.ignored);
    await Promise.all(
      iframes.map(async (node) => {
        const owner = node.backendDOMNodeId;
        if (owner === undefined) return;
        if (scope.owners.length + 1 > maxFrameDepth || frames.size >= maxFrames) {
          contents.set(owner, [
            `(a frame nested too deep or one too many: not read; ${maxFrames} frames at most)`,
          ]);
          return;
        }
        const child = await childScope(page, scope, owner).catch(() => undefined);
        if (!child) return;
        // A frame that cannot be read (gone meanwhile, its process crashed) shows nothing of its own: nothing of it
        // needs masking then. The rest of the page is still read.
        const read = await readFrame(child).catch((error: unknown) => {
          if (child.session !== scope.session) forgetSession(page, child.session);
          return { tree: [`(a frame that could not be read: ${String(error).split('\n')[0]})`] };
        });
        contents.set(owner, read.tree);
      }),
    );
    const tree = axToAria(nodes, {
      frameKey: scope.frameId,
      frameContent: (backendNodeId) => contents.get(backendNodeId),
      pointer,
    });
    return { tree, title: facts.title };
  };
  const { tree, title } = await readFrame(main);
  return { tree, title, passwords, frames };
}

const iframeRoles = new Set(['Iframe', 'IframePresentational']);

/** The tab's main document, on tabward's session of the tab. */
export async function mainScope(session: CDPSession): Promise<FrameScope> {
  return { session, frameId: await mainFrameId(session), owners: [] };
}

const mainFrameIds = new WeakMap<CDPSession, Promise<string>>();

/** The main frame's id is the tab's target id: it does not change while the tab lives. */
function mainFrameId(session: CDPSession): Promise<string> {
  let id = mainFrameIds.get(session);
  if (!id) {
    id = session.send('Page.getFrameTree').then(({ frameTree }) => frameTree.frame.id);
    mainFrameIds.set(session, id);
  }
  return id;
}

async function axNodes(scope: FrameScope): Promise<AxNode[]> {
  const { nodes } = await scope.session.send('Accessibility.getFullAXTree', { frameId: scope.frameId });
  return nodes;
}

/** The world tabward reads in (isolatedReads.ts uses the same name, so both reach one world per document). */
export const readsWorld = 'tabward-reads';

async function worldOf(scope: FrameScope): Promise<number> {
  const { executionContextId } = await scope.session.send('Page.createIsolatedWorld', {
    frameId: scope.frameId,
    worldName: readsWorld,
  });
  return executionContextId;
}

interface DocumentFacts {
  readonly title: string;
  readonly passwords: string[];
  readonly pointerCount: number;
}

async function factsOf(scope: FrameScope): Promise<DocumentFacts> {
  try {
    const reply = await scope.session.send('Runtime.evaluate', {
      expression: readFactsInDocument,
      contextId: await worldOf(scope),
      returnByValue: true,
    });
    if (reply.exceptionDetails)
      throw new Error(reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text);
    const [title, passwords, pointerCount] = reply.result.value as [string, string[], number];
    return { title, passwords, pointerCount };
  } catch (error) {
    throw new TabwardError(
      'blocked',
      `Could not read the page's password fields to mask them (${String(error).split('\n')[0]}); nothing was shown.`,
      'The page was probably changing: call take_snapshot again.',
    );
  }
}

/**
 * Runs in tabward's isolated world of a document (source text: the Node tsconfig has no DOM types). Returns
 * [title, password values, count of pointer widgets] and keeps those widgets for pointerElements. A password field
 * is found by its own type (an XHTML document matches attribute values case-sensitively) or the autocomplete
 * tokens a password manager fills; a widget is the outermost element whose cursor is a pointer that is not a
 * control or an element with a role already.
 */
const readFactsInDocument = `(() => {
  const values = [];
  const widgets = [];
  const controls = 'a[href],button,input,select,textarea,label,summary,option,[role]';
  const isPassword = (input) =>
    input.type === 'password' ||
    (input.getAttribute('autocomplete') || '').toLowerCase().split(/\\s+/).some((token) => token === 'current-password' || token === 'new-password');
  const pointing = (el) => el && getComputedStyle(el).cursor === 'pointer';
  const visit = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) visit(el.shadowRoot);
      if (el.localName === 'input' && isPassword(el)) values.push(String(el.value));
      if (pointing(el) && !pointing(el.parentElement) && !el.matches(controls)) widgets.push(el);
    }
  };
  visit(document);
  globalThis.__tabwardWidgets = widgets;
  return [document.title, values, widgets.length];
})()`;

/** The backend node ids of the widgets the facts' read kept (a few round trips, only on pages that have some). */
async function pointerElements(scope: FrameScope): Promise<Set<number>> {
  const { session } = scope;
  try {
    const { result } = await session.send('Runtime.evaluate', {
      expression: 'globalThis.__tabwardWidgets',
      contextId: await worldOf(scope),
    });
    if (!result.objectId) return new Set();
    const { result: entries } = await session.send('Runtime.getProperties', {
      objectId: result.objectId,
      ownProperties: true,
    });
    const ids = await Promise.all(
      entries
        .filter((entry) => /^\d+$/.test(entry.name) && entry.value?.objectId)
        .map((entry) =>
          session
            .send('DOM.describeNode', { objectId: entry.value?.objectId ?? '' })
            .then(({ node }) => node.backendNodeId),
        ),
    );
    void session.send('Runtime.releaseObject', { objectId: result.objectId }).catch(() => undefined);
    return new Set(ids);
  } catch {
    // Only a hint for the agent: a page that changed meanwhile shows its widgets without it.
    return new Set();
  }
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
  if (await hasFrame(parent.session, frameId)) return { session: parent.session, frameId, owners };
  const session = await outOfProcessSession(page, frameId);
  return session ? { session, frameId, owners } : undefined;
}

async function hasFrame(session: CDPSession, frameId: string): Promise<boolean> {
  const { frameTree } = await session.send('Page.getFrameTree');
  interface Tree {
    readonly frame: { readonly id: string };
    readonly childFrames?: readonly Tree[];
  }
  const within = (tree: Tree): boolean => tree.frame.id === frameId || (tree.childFrames ?? []).some(within);
  return within(frameTree);
}

/** tabward's session of each out-of-process frame, with the frame id its target has (undefined: not one). */
const frameSessions = new WeakMap<Frame, Promise<{ session: CDPSession; frameId: string } | undefined>>();

/** A session that failed is opened anew next time (its frame's process may have changed). */
function forgetSession(page: Page, session: CDPSession): void {
  for (const frame of page.frames())
    void frameSessions.get(frame)?.then((entry) => {
      if (entry?.session === session) frameSessions.delete(frame);
    });
}

async function outOfProcessSession(page: Page, frameId: string): Promise<CDPSession | undefined> {
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
  return found.find((entry) => entry?.frameId === frameId)?.session;
}
