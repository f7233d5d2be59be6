// Turning an element of a snapshot (a backend node id in a document tabward read, axRead.ts) into a Playwright
// locator for exactly that element, so that Playwright's actions (actionability, scrolling, input) work on it.
// The element is handed to Playwright's own isolated world of its frame over CDP (DOM.resolveNode into that world)
// and kept there under its key; a selector engine of tabward's, run by Playwright in that same world, finds it
// by the key. The page's scripts cannot see that world, so they can neither read the keys nor point one at
// another element; an element removed or a document replaced makes its key find nothing.

import type { FrameLocator, Locator, Page } from 'playwright-core';
import { swallow } from '../../core/debug.ts';
import { TabwardError } from '../../core/errors.ts';
import { readsWorld } from './documentReads.ts';
import type { ElementAddress } from './frameScopes.ts';

/** The engine's name (registered with Playwright by connect.ts, for every browser tabward connects). */
export const refEngine = 'tabward-ref';

/**
 * Runs in Playwright's utility world (contentScript): the element kept under the key, while it is in the document
 * queried. Source text: the Node tsconfig has no DOM types.
 */
export const refEngineSource = `({
  query(root, key) {
    const element = globalThis.__tabwardRefs?.get(key)?.deref();
    if (!element || !element.isConnected) return null;
    const document = root.nodeType === 9 ? root : root.ownerDocument;
    return element.ownerDocument === document && (root.nodeType === 9 || root.contains(element)) ? element : null;
  },
  queryAll(root, key) {
    const element = this.query(root, key);
    return element ? [element] : [];
  },
})`;

/** Runs on the element in Playwright's world: keeps it under the key. */
const keepElement = `function (key) {
  (globalThis.__tabwardRefs ??= new Map()).set(key, new WeakRef(this));
  return true;
}`;

/** The locator of the element, its iframes entered from the top document; fails (stale_ref) when it is gone. */
export async function locatorFor(page: Page, element: ElementAddress, ref: string): Promise<Locator> {
  const world = utilityWorldOf(page);
  // Each element is kept under a key of its own: the frames' owners and the element at once.
  const [target, ...owners] = await Promise.all(
    [element, ...element.frame.owners].map((each) => keep(each, world, ref)),
  );
  let scope: Page | FrameLocator = page;
  for (const key of owners) scope = scope.frameLocator(`${refEngine}=${key}`);
  return scope.locator(`${refEngine}=${target}`);
}

/**
 * Keeps the element in Playwright's world under its key. Playwright's world cannot tell which document tabward read,
 * so tabward's world of the frame's document is asked just before and just after (the three calls are sent
 * together and the renderer runs them in order): a frame that moved on to another document in between (whose nodes
 * may reuse the same ids) fails the ref, and what was kept there is under a key no ref of the new document has.
 */
async function keep(element: ElementAddress, world: string, ref: string): Promise<string> {
  const key = `${element.frame.frameId}:${element.frame.document ?? ''}/${element.backendNodeId}`;
  const token = element.frame.document ?? null;
  await withElement(element, [readsWorld, world], ref, async ([ours = '', playwrights = ''], call) => {
    await Promise.all([
      call(ours, 'function () { return true; }', token, []),
      call(playwrights, keepElement, null, [key]),
      call(ours, 'function () { return true; }', token, []),
    ]);
  });
  return key;
}

/**
 * Runs on the element: the function's result, unless the element left the document of this world or (in tabward's
 * world, given the token of the document the element was read in) the frame shows another document now.
 */
const checked = (functionDeclaration: string) => `function (token, args) {
  if (!this.isConnected || this.ownerDocument !== document) return { stale: 'it was removed' };
  if (token !== null && globalThis.__tabwardDocument !== token) return { stale: 'its frame shows another document now' };
  return { value: (${functionDeclaration}).apply(this, args) };
}`;

type CallOn = <T>(
  objectId: string,
  functionDeclaration: string,
  token: string | null,
  args: readonly unknown[],
) => Promise<T>;

/**
 * Resolves the element in each named isolated world of its document (in parallel) and hands `use` its object in
 * each, with a way to call functions on them; releases them after. A node that no longer exists or left its
 * document, or a frame that moved on from the document it was read in, fails as a stale ref.
 */
async function withElement<T>(
  element: ElementAddress,
  worlds: readonly string[],
  ref: string,
  use: (objectIds: string[], call: CallOn) => Promise<T>,
): Promise<T> {
  const { session, frameId } = element.frame;
  const stale = (why: string) =>
    new TabwardError('stale_ref', `Ref ${ref} is no longer in the page (${why}).`, 'Take a new snapshot.');
  const objectIds: string[] = [];
  const call: CallOn = async <R>(
    objectId: string,
    functionDeclaration: string,
    token: string | null,
    args: readonly unknown[],
  ) => {
    const reply = await session.send('Runtime.callFunctionOn', {
      objectId,
      functionDeclaration: checked(functionDeclaration),
      arguments: [{ value: token }, { value: args }],
      returnByValue: true,
    });
    if (reply.exceptionDetails)
      throw new Error(reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text);
    const answer = reply.result.value as { stale?: string; value?: R };
    if (answer.stale !== undefined) throw stale(answer.stale);
    return answer.value as R;
  };
  try {
    const contexts = await Promise.all(
      worlds.map((world) => session.send('Page.createIsolatedWorld', { frameId, worldName: world })),
    );
    const objects = await Promise.all(
      contexts.map(({ executionContextId }) =>
        session.send('DOM.resolveNode', { backendNodeId: element.backendNodeId, executionContextId }),
      ),
    );
    for (const { object } of objects) if (object.objectId) objectIds.push(object.objectId);
    if (objectIds.length !== worlds.length) throw stale('it has no node');
    return await use(objectIds, call);
  } catch (error) {
    if (error instanceof TabwardError) throw error;
    // The browser's words (a node id not found, a context gone, a target closed) all mean the same to the agent.
    throw stale('its element or its document is gone');
  } finally {
    for (const objectId of objectIds)
      void session
        .send('Runtime.releaseObject', { objectId })
        .catch(
          swallow('browser', 'refLocators.withElement: session.send("Runtime.releaseObject", { objectId })'),
        );
  }
}

/**
 * Calls `functionDeclaration` on the element (as `this`) in the named isolated world of its document and answers
 * its JSON result; in tabward's own world, the document is checked to be the one the element was read in.
 */
export async function callOnElement<T>(
  element: ElementAddress,
  world: string,
  functionDeclaration: string,
  args: readonly unknown[],
  ref: string,
): Promise<T> {
  const token = world === readsWorld ? (element.frame.document ?? null) : null;
  return withElement(element, [world], ref, ([objectId], call) =>
    call<T>(objectId ?? '', functionDeclaration, token, args),
  );
}

/**
 * The name of Playwright's isolated world in a page's frames, `__playwright_utility_world_<page guid>` (Playwright
 * 1.65's crPage.ts). Page.createIsolatedWorld with an existing world's name answers with that world. If a later
 * Playwright named it otherwise, the key would be kept in a world of its own that the engine never looks in: every
 * ref would fail as stale (the ref tests would say so), never reach another element.
 */
function utilityWorldOf(page: Page): string {
  const guid = (page as unknown as { _guid?: unknown })._guid;
  if (typeof guid !== 'string')
    throw new TabwardError(
      'internal',
      'This Playwright version does not name its page objects as tabward expects, so refs cannot be resolved.',
      'Install the playwright-core version tabward pins (package.json).',
    );
  return `__playwright_utility_world_${guid}`;
}
