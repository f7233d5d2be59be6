// What a snapshot reads of one document, over the session of its process: its tree (Chromium's accessibility
// tree, or for a larger document the same tree built from the DOM snapshot: "A snapshot's tree" in
// docs/architecture.md), and beside it, in tabward's own isolated world of the document, the facts tabward needs for
// itself (a token naming the document, its title, the values of its password fields to mask, the custom widgets with
// a pointer cursor). The page cannot reach that world, so it cannot lie to these reads. The token is read before the
// tree and again with the facts after it, in the order the renderer answers them (a tree read from Chromium after a
// capture that could not serve is followed by a third read of the token): a document replaced meanwhile (a frame
// navigating) fails the read, so a tree is never paired with another document's token or values.

import { swallow } from '../../core/debug.ts';
import { TabwardError } from '../../core/errors.ts';
import type { AxNode } from './axToAria.ts';
import { capturedStyles, type DocumentSnapshot, passwordsInCapture } from './domSnapshotNodes.ts';
import { htmlNamesWithRoles } from './domSnapshotRoles.ts';
import { treeFromDomSnapshot } from './domSnapshotTree.ts';
import type { FrameScope } from './frameScopes.ts';
import type { ReadSession } from './readSessions.ts';

/** The world tabward reads in (isolatedReads.ts and focusedElement.ts read there too: one world a document). */
export const readsWorld = 'tabward-reads';

/** The document was replaced while it was read: read the tab again. */
export class DocumentChanged extends Error {}

export interface DocumentFacts {
  /** Names this document (in this frame) for as long as it lives. */
  readonly document: string;
  readonly title: string;
  /** The document's address (an iframe's line shows its origin when it is another than the one above it). */
  readonly url: string;
  readonly passwords: string[];
  readonly pointerCount: number;
}

/** What a read is told and shares with the other reads of the same snapshot. */
export interface ReadShared {
  /**
   * Told each time the renderer answers one of the read's requests: the reads of a process's frames queue behind
   * each other there, and a caller bounding one by time counts those.
   */
  readonly answered?: () => void;
  /** The DOM captures of the snapshot's sessions, shared by the frames of one process. */
  readonly captures?: SessionCaptures;
}

/**
 * A DOM capture holds every document of the session's process. The frames of one process read at once share one,
 * where each used to be read from Chromium's tree (a capture each would capture them all again: forty same-process
 * frames of 3,000 elements, a minute of captures). A frame may use a capture only if it was asked after the frame's
 * token: the renderer answers in the order asked, so the capture then shows the document the token names, and the
 * token read again after it says whether that document is still the one (as for a capture of its own).
 */
export class SessionCaptures {
  /** Counts the requests that order the reads: a token's and a capture's. */
  private asked = 0;
  private readonly latest = new Map<
    ReadSession,
    { asked: number; capture: Promise<DomCapture | undefined> }
  >();

  /** Called just before a frame's token is asked: what its capture must come after. */
  beforeToken(): number {
    return ++this.asked;
  }

  /** A capture of the session asked after `token` (the one asked last, or a new one). */
  after(session: ReadSession, token: number): Promise<DomCapture | undefined> {
    const latest = this.latest.get(session);
    if (latest && latest.asked > token) return latest.capture;
    const capture = captureDom(session);
    this.latest.set(session, { asked: ++this.asked, capture });
    return capture;
  }
}

type DomCapture = { documents: DocumentSnapshot[]; strings: string[] };

/**
 * A capture that fails (one too large to read: it carries every attribute, which a page can make hundreds of
 * megabytes where Chromium's tree carries none of them; pipeTransport.ts) gives way to Chromium's tree.
 */
function captureDom(session: ReadSession): Promise<DomCapture | undefined> {
  return session
    .send('DOMSnapshot.captureSnapshot', { computedStyles: [...capturedStyles], includeDOMRects: false })
    .then(
      (captured) => captured as unknown as DomCapture,
      swallow('browser', 'documentReads.captureDom: a DOM capture that failed (Chromium tree instead)'),
    );
}

/** Reads the document of `scope`: its tree, and beside it what masks its passwords (DocumentFacts). */
export async function readDocument(
  scope: FrameScope,
  { answered = () => undefined, captures = new SessionCaptures() }: ReadShared = {},
): Promise<{ nodes: AxNode[]; facts: DocumentFacts }> {
  const { session, frameId } = scope;
  const noted = <T>(request: Promise<T>): Promise<T> => request.finally(answered);
  const contextId = await noted(worldOf(session, frameId));
  // The renderer answers in the order asked: the token, the tree, then the facts with the token again. The walk for
  // the facts comes after the tree, so that the renderer does it while tabward parses the tree (on a large page each
  // takes tens of milliseconds). The document's size, read with the token, chooses where the tree comes from.
  const token = captures.beforeToken();
  const [document, domCanServe, capturable] = await noted(
    evaluate<[string, boolean, boolean]>(session, contextId, documentAndFit),
  ).catch(unreadable);
  const tree = noted(
    treeOf(session, frameId, domCanServe, capturable ? () => captures.after(session, token) : undefined),
  );
  const after = noted(
    evaluate<[string, string, string[], number, string]>(session, contextId, readFactsInDocument),
  );
  const [{ nodes, late, passwords: captured }, [again, title, passwords, pointerCount, url]] =
    await Promise.all([tree, after.catch(unreadable)]);
  const last = late ? await evaluate<string>(session, contextId, documentToken).catch(unreadable) : again;
  if (again !== document || last !== document)
    throw new DocumentChanged('the document changed while it was read');
  const fields = await fieldPasswords(session, contextId, document, nodes);
  return {
    nodes,
    facts: { document, title, url, passwords: [...passwords, ...fields, ...captured], pointerCount },
  };
}

/**
 * The document's accessibility tree: the one tabward builds from a DOM capture (domSnapshotTree.ts), or Chromium's
 * own where the capture cannot stand for it (`domCanServe` false) or fails. The capture is cheaper at every size:
 * 3-4x on large pages, and on a page of four cross-site frames of 8-128 elements each the read after the frames
 * loaded took 29-37 ms against 52-57 ms from Chromium's trees (bench/results.md, the thirteenth pass).
 */
async function treeOf(
  session: ReadSession,
  frameId: string,
  domCanServe: boolean,
  /** Undefined for a document too large to capture. */
  capture: (() => Promise<DomCapture | undefined>) | undefined,
): Promise<{ nodes: AxNode[]; late?: true; passwords: string[] }> {
  // TABWARD_SNAPSHOT_TREE=ax|dom forces one source where both can serve (the tests and benches compare them).
  const forced = process.env.TABWARD_SNAPSHOT_TREE;
  if (forced && forced !== 'ax' && forced !== 'dom')
    throw new TabwardError(
      'bad_input',
      `TABWARD_SNAPSHOT_TREE is "${forced}": it takes ax (Chromium's accessibility tree) or dom (the DOM snapshot).`,
      'Set it to ax or dom, or unset it (the DOM snapshot wherever it can stand for Chromium’s tree).',
    );
  const fromDom = domCanServe && forced !== 'ax';
  // Asked before the facts' read either way (no wait before it here): the token read with the facts comes after it.
  // Where Chromium's tree is read, the capture is still taken, for the password fields only it reaches (in closed
  // shadow roots, hidden: domSnapshotNodes.ts passwordsInCapture).
  const capturing = (capture?.() ?? Promise.resolve(undefined)).then((captured) => {
    const document = captured?.documents.find((each) => captured.strings[each.frameId] === frameId);
    return captured && document ? { document, strings: captured.strings } : undefined;
  });
  if (!fromDom) {
    const [{ nodes }, found] = await Promise.all([
      session.send('Accessibility.getFullAXTree', { frameId }),
      capturing,
    ]);
    return { nodes: nodes as AxNode[], passwords: found ? passwordsInCapture(found) : [] };
  }
  const found = await capturing;
  const passwords = found ? passwordsInCapture(found) : [];
  const nodes = found && treeFromDomSnapshot(found);
  if (nodes) return { nodes, passwords };
  const { nodes: tree } = await session.send('Accessibility.getFullAXTree', { frameId });
  // Asked after the facts' read: the token is read again after it.
  return { nodes: tree as AxNode[], late: true, passwords };
}

function unreadable(error: unknown): never {
  throw new TabwardError(
    'blocked',
    `Could not read the page to mask its password fields (${String(error).split('\n')[0]}); nothing was shown.`,
    'The page was probably changing: call take_snapshot again.',
  );
}

export async function worldOf(session: ReadSession, frameId: string): Promise<number> {
  const { executionContextId } = await session.send('Page.createIsolatedWorld', {
    frameId,
    worldName: readsWorld,
  });
  return executionContextId;
}

async function evaluate<T>(session: ReadSession, contextId: number, expression: string): Promise<T> {
  const reply = await session.send('Runtime.evaluate', { expression, contextId, returnByValue: true });
  if (reply.exceptionDetails)
    throw new Error(reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text);
  return reply.result.value as T;
}

/** Runs in tabward's world: the document's token, made on the first read (random: the page cannot know it). */
const documentToken = `(globalThis.__tabwardDocument ??= Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(36)).join(''))`;

/**
 * Attributes past this (characters, all elements') make the document's tree Chromium's: the DOM snapshot carries
 * every attribute, names and values (Chromium's tree none but those it names with), and a page can make them
 * hundreds of megabytes (inline data: images, or a script's doing), a capture that takes seconds or more than a
 * message can hold.
 */
const maxAttributeChars = 16 * 2 ** 20;

/** Elements with more attributes than this make the document's tree Chromium's (reading each is not free). */
const maxAttributesOfOne = 256;

/**
 * Runs in tabward's world: [token, whether the DOM snapshot's tree can stand for Chromium's here, whether the
 * document is small enough to capture at all (its attributes within maxAttributeChars)]. The tree cannot stand
 * where what Chromium's tree shows depends on what the DOM snapshot does not carry: a modal dialog open (the
 * rest of the page is out of the tree), aria-owns (a node shown under another parent), a canvas's fallback content
 * (shown, never rendered), a details element with no summary (its "Details" button is the browser's own), an
 * indeterminate checkbox,
 * an element whose namespace or case makes it another element than its name says (createElementNS('urn:x',
 * 'button'), an XHTML <INPUT>, a <button> inside <math>: not a control to Chromium, and the snapshot gives names
 * only), two attributes of one name (a namespaced decoy: which one counts is not in the snapshot), attributes past
 * maxAttributeChars or maxAttributesOfOne.
 */
const documentAndFit = `(() => {
  const elements = document.getElementsByTagName('*');
  const html = 'http://www.w3.org/1999/xhtml';
  const svg = 'http://www.w3.org/2000/svg';
  const math = 'http://www.w3.org/1998/Math/MathML';
  // The names that are HTML elements with roles (SVG's own svg and a aside): in another namespace, no control.
  const roleNames = new Set(${JSON.stringify(htmlNamesWithRoles())});
  let fits = !document.querySelector(':modal, [aria-owns], canvas *, details:not(:has(> summary))');
  // Counted whatever fits, and in the documents of its frames this world can reach (same origin: the same process,
  // whose capture holds them too): past the limit no capture is taken at all (its size), not even for passwords.
  let attributeChars = 0;
  const counted = (el) => {
    const names = el.getAttributeNames();
    for (let a = 0; a < names.length; a++) attributeChars += names[a].length + (el.getAttribute(names[a]) || '').length;
    return names;
  };
  const frames = [];
  for (let i = 0; attributeChars <= ${maxAttributeChars} && i < elements.length; i++) {
    const el = elements[i];
    const names = counted(el);
    if (el.contentDocument) frames.push(el.contentDocument);
    if (!fits) continue;
    const ns = el.namespaceURI;
    const name = el.localName;
    if (ns === html) fits = name === name.toLowerCase() && !(name === 'input' && el.indeterminate);
    else if (ns === svg || ns === math) fits = !roleNames.has(name.toLowerCase()) || (ns === svg && (name === 'a' || name === 'svg'));
    else fits = false;
    if (names.length > ${maxAttributesOfOne} || (names.length > 1 && new Set(names).size !== names.length)) fits = false;
  }
  for (let f = 0; attributeChars <= ${maxAttributeChars} && f < frames.length; f++) {
    const inner = frames[f].getElementsByTagName('*');
    for (let i = 0; attributeChars <= ${maxAttributeChars} && i < inner.length; i++) {
      counted(inner[i]);
      if (inner[i].contentDocument) frames.push(inner[i].contentDocument);
    }
  }
  const capturable = attributeChars <= ${maxAttributeChars};
  return [${documentToken}, fits && capturable, capturable];
})()`;

/** Widgets marked at most: each costs a round trip, and the mark is only a hint for the agent. */
const maxWidgets = 100;

/** Is this input a password field: its own type (any case, as the property reports it) or what a password manager fills. */
const isPasswordSource = `(input) =>
    input.localName === 'input' &&
    (input.type === 'password' ||
      (input.getAttribute('autocomplete') || '').toLowerCase().split(/\\s+/).some((token) => token === 'current-password' || token === 'new-password'))`;

/**
 * Runs in tabward's isolated world of a document (source text: the Node tsconfig has no DOM types). Returns
 * [token, title, password values, pointer widgets, address] and keeps the widgets for pointerElements: the outermost elements
 * whose cursor is a pointer that are not controls or elements with a role already. Open shadow roots are walked;
 * what a closed one holds is read through the tree's nodes (fieldPasswords). The walk goes element by element with
 * its parent's cursor in hand (one style read an element, where asking the parent again doubled them on a large
 * page), on a stack of its own rather than the call stack, which a deeply nested page could exhaust.
 */
const readFactsInDocument = `(() => {
  const values = [];
  const widgets = [];
  const controls = 'a[href],button,input,select,textarea,label,summary,option,[role]';
  const isPassword = ${isPasswordSource};
  // Inside these no widget is looked for (a style read an element is most of the walk's time): a native control's
  // content is clicked through the control, a drawing's parts through the drawing, a hidden subtree is not shown.
  // Their password fields are still read.
  const opaque = 'a[href],button,select,textarea,option,summary,svg,[hidden]';
  // Elements in document order, each with its parent's cursor (null: not looked at); a shadow root's content
  // before its host's children.
  const stack = [];
  const pushChildren = (root, parentPointing) => {
    for (let el = root.lastElementChild; el; el = el.previousElementSibling) stack.push(el, parentPointing);
  };
  pushChildren(document, false);
  while (stack.length > 0) {
    const parentPointing = stack.pop();
    const el = stack.pop();
    if (isPassword(el)) values.push(String(el.value));
    let pointing = null;
    if (parentPointing !== null) {
      const looked = el.localName === 'svg' || !el.matches(opaque);
      pointing = looked && getComputedStyle(el).cursor === 'pointer';
      if (pointing && !parentPointing && widgets.length < ${maxWidgets} && !el.matches(controls)) widgets.push(el);
      if (!looked || el.localName === 'svg') pointing = null;
    }
    pushChildren(el, pointing);
    // An element at the top of a shadow root has no parent element: as before, it is compared with none.
    if (el.shadowRoot) pushChildren(el.shadowRoot, pointing === null ? null : false);
  }
  globalThis.__tabwardWidgets = widgets;
  return [${documentToken}, document.title, values, widgets.length, location.href];
})()`;

/** The roles under which Chromium's tree shows a field's value (and a password field's bullets). */
const fieldRoles = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider']);

/**
 * The values of the password fields among the fields the tree shows with a value, read through their nodes: a
 * field in a closed shadow root, out of reach of any script but its page's, is reached this way. Every such field
 * is read (a count of those the page's walk found would be fooled by a decoy field it found elsewhere); most pages
 * show none with a value, and pay nothing.
 */
async function fieldPasswords(
  session: ReadSession,
  contextId: number,
  document: string,
  nodes: readonly AxNode[],
): Promise<string[]> {
  // A drop-down (a select element: its options' popup is its child) is never a password field: its value is not
  // read, which spares most pages with a form their two round trips.
  const dropDowns = new Set(
    nodes.filter((node) => node.role?.value === 'MenuListPopup').map((node) => node.parentId),
  );
  const ids = nodes
    .filter(
      (node) =>
        !node.ignored &&
        fieldRoles.has(String(node.role?.value)) &&
        String(node.value?.value ?? '') &&
        !dropDowns.has(node.nodeId),
    )
    .flatMap((node) => (node.backendDOMNodeId === undefined ? [] : [node.backendDOMNodeId]));
  if (ids.length === 0) return [];
  const objectGroup = `tabward-fields-${document}`;
  try {
    const objects = await Promise.all(
      ids.map((backendNodeId) =>
        session.send('DOM.resolveNode', { backendNodeId, executionContextId: contextId, objectGroup }),
      ),
    );
    const [first] = objects;
    const reply = await session.send('Runtime.callFunctionOn', {
      objectId: first?.object.objectId ?? '',
      functionDeclaration: `function (token, ...fields) {
        if (globalThis.__tabwardDocument !== token) return null;
        const isPassword = ${isPasswordSource};
        return fields.filter(isPassword).map((field) => String(field.value));
      }`,
      arguments: [{ value: document }, ...objects.map(({ object }) => ({ objectId: object.objectId ?? '' }))],
      returnByValue: true,
    });
    const values = reply.result.value as string[] | null;
    if (values === null) throw new DocumentChanged('the document changed while its fields were read');
    return values;
  } catch (error) {
    if (error instanceof DocumentChanged) throw error;
    return unreadable(error);
  } finally {
    void session
      .send('Runtime.releaseObjectGroup', { objectGroup })
      .catch(
        swallow(
          'browser',
          'documentReads.fieldPasswords: session.send("Runtime.releaseObjectGroup", { objectGroup })',
        ),
      );
  }
}

/** The backend node ids of the widgets the facts' read kept (a few round trips, only on pages that have some). */
export async function pointerElements(scope: FrameScope): Promise<Set<number>> {
  const { session } = scope;
  const objectGroup = `tabward-widgets-${scope.document ?? ''}`;
  try {
    const { result } = await session.send('Runtime.evaluate', {
      expression: 'globalThis.__tabwardWidgets',
      contextId: await worldOf(session, scope.frameId),
      objectGroup,
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
    return new Set(ids);
  } catch {
    // Only a hint for the agent: a page that changed meanwhile shows its widgets without it.
    return new Set();
  } finally {
    // The widgets' objects were made for this read: the page's elements are not kept alive by it.
    void session
      .send('Runtime.releaseObjectGroup', { objectGroup })
      .catch(
        swallow(
          'browser',
          'documentReads.pointerElements: session.send("Runtime.releaseObjectGroup", { objectGroup })',
        ),
      );
  }
}

/** The password values of a frame tabward does not show (a hidden one, one past the limits): to mask elsewhere. */
export async function passwordsIn(session: ReadSession, frameId: string): Promise<string[]> {
  const contextId = await worldOf(session, frameId);
  const [, , values] = await evaluate<[string, string, string[]]>(session, contextId, readFactsInDocument);
  return values;
}
