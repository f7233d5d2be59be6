// What a snapshot reads of one document, over the session of its process: Chromium's accessibility tree, and
// beside it, in tabward's own isolated world of the document, the facts tabward needs for itself (a token naming the
// document, its title, the values of its password fields to mask, the custom widgets with a pointer cursor). The
// page cannot reach that world, so it cannot lie to these reads. The token is read before and after the tree, in
// the order the renderer answers them: a document replaced meanwhile (a frame navigating) fails the read, so a tree
// is never paired with another document's token or values.

import type { CDPSession } from 'playwright-core';
import { TabwardError } from '../core/errors.ts';
import type { AxNode } from './axToAria.ts';
import type { FrameScope } from './frameScopes.ts';

/** The world tabward reads in (isolatedReads.ts uses the same name, so both reach one world per document). */
export const readsWorld = 'tabward-reads';

/** The document was replaced while it was read: read the tab again. */
export class DocumentChanged extends Error {}

export interface DocumentFacts {
  /** Names this document (in this frame) for as long as it lives. */
  readonly document: string;
  readonly title: string;
  readonly passwords: string[];
  /** How many password fields with a value the read reached (a closed shadow root hides its fields from it). */
  readonly passwordFields: number;
  readonly pointerCount: number;
}

export async function readDocument(scope: FrameScope): Promise<{ nodes: AxNode[]; facts: DocumentFacts }> {
  const { session, frameId } = scope;
  const contextId = await worldOf(session, frameId);
  // Sent together: the renderer answers them in this order.
  const before = evaluate<[string, string, string[], number, number]>(
    session,
    contextId,
    readFactsInDocument,
  );
  const tree = session.send('Accessibility.getFullAXTree', { frameId });
  const after = evaluate<string>(session, contextId, documentToken);
  const [[document, title, passwords, passwordFields, pointerCount], { nodes }, token] = await Promise.all([
    before.catch(unreadable),
    tree,
    after.catch(unreadable),
  ]);
  if (token !== document) throw new DocumentChanged('the document changed while it was read');
  return { nodes, facts: { document, title, passwords, passwordFields, pointerCount } };
}

function unreadable(error: unknown): never {
  throw new TabwardError(
    'blocked',
    `Could not read the page's password fields to mask them (${String(error).split('\n')[0]}); nothing was shown.`,
    'The page was probably changing: call take_snapshot again.',
  );
}

export async function worldOf(session: CDPSession, frameId: string): Promise<number> {
  const { executionContextId } = await session.send('Page.createIsolatedWorld', {
    frameId,
    worldName: readsWorld,
  });
  return executionContextId;
}

async function evaluate<T>(session: CDPSession, contextId: number, expression: string): Promise<T> {
  const reply = await session.send('Runtime.evaluate', { expression, contextId, returnByValue: true });
  if (reply.exceptionDetails)
    throw new Error(reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text);
  return reply.result.value as T;
}

/** Runs in tabward's world: the document's token, made on the first read (random: the page cannot know it). */
const documentToken = `(globalThis.__tabwardDocument ??= Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(36)).join(''))`;

/**
 * Runs in tabward's isolated world of a document (source text: the Node tsconfig has no DOM types). Returns
 * [token, title, password values, password fields with a value, pointer widgets] and keeps the widgets for
 * pointerElements. A password field is found by its own type (an XHTML document matches attribute values
 * case-sensitively) or the autocomplete tokens a password manager fills; a widget is the outermost element whose
 * cursor is a pointer that is not a control or an element with a role already.
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
  const filled = values.filter((value) => value !== '').length;
  return [${documentToken}, document.title, values, filled, widgets.length];
})()`;

/** Widgets marked at most: each costs a round trip, and the mark is only a hint for the agent. */
const maxWidgets = 100;

/** The backend node ids of the widgets the facts' read kept (a few round trips, only on pages that have some). */
export async function pointerElements(scope: FrameScope): Promise<Set<number>> {
  const { session } = scope;
  try {
    const { result } = await session.send('Runtime.evaluate', {
      expression: `globalThis.__tabwardWidgets.slice(0, ${maxWidgets})`,
      contextId: await worldOf(session, scope.frameId),
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

/** The password values of a frame tabward does not show (a hidden one, one past the limits): to mask elsewhere. */
export async function passwordsIn(session: CDPSession, frameId: string): Promise<string[]> {
  const contextId = await worldOf(session, frameId);
  const [, , values] = await evaluate<[string, string, string[]]>(session, contextId, readFactsInDocument);
  return values;
}
