// The accessibility tree of a document built by tabward from the browser's DOM snapshot (CDP
// DOMSnapshot.captureSnapshot), in the shape of Chromium's own tree (axToAria.ts's AxNode), so that the conversion,
// the refs (backend node ids) and the masking stay the ones of every snapshot. Why: Chromium's tree costs about a
// millisecond per thirty nodes, most of a snapshot on a large page (a 48,000-word article: 450-780 ms against 90-120
// ms for the DOM snapshot, which carries every node's rendered text, computed styles and field state;
// bench/results.md "large-pages"). Roles, names, states and visibility are computed here as Chromium 156 computes
// them for what pages use (HTML-AAM, accname; test/e2e/snapshotSources.test.ts reads pages of them both ways and
// compares). A document this cannot stand for (a shadow root: the DOM snapshot does not give its content's place
// among the host's children) is read from Chromium's tree instead (documentReads.ts decides). Pure: the capture is
// in documentReads.ts.

import type { AxNode, AxValue } from './axToAria.ts';
import { type CapturedDocument, CapturedNodes, isTrue, labelable } from './domSnapshotNodes.ts';
import { authorRoles, roleOf } from './domSnapshotRoles.ts';
import { actionableRoles } from './snapshotFormat.ts';

/** Elements whose content is never shown. */
const skippedElements = new Set(['HEAD', 'SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'TITLE', 'META', 'LINK']);
/** Roles whose name is taken from their content when nothing names them (accname's "name from content"). */
const nameFromContent = new Set([
  'button',
  'link',
  'heading',
  'cell',
  'gridcell',
  'columnheader',
  'rowheader',
  'option',
  'tab',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'treeitem',
  'checkbox',
  'radio',
  'switch',
  'tooltip',
  'DisclosureTriangle',
  'Legend',
  'Caption',
  'term',
]);
const defaultButtonNames: Record<string, string> = { submit: 'Submit', reset: 'Reset' };

/**
 * The tree of one captured document, rooted at a RootWebArea node, or undefined when the DOM snapshot cannot stand
 * for Chromium's tree here: ids inside a shadow root (which root scopes them is not in the snapshot) or an element
 * with two attributes of one name (which of them the element uses is not either).
 */
export function treeFromDomSnapshot(captured: CapturedDocument): AxNode[] | undefined {
  const dom = new CapturedNodes(captured);
  if (dom.hasScopedIds() || dom.hasDuplicateAttributes()) return undefined;
  const out: MutableNode[] = [];
  const root: MutableNode = { nodeId: '0', ignored: false, role: { value: 'RootWebArea' }, childIds: [] };
  out.push(root);
  const add = (parent: MutableNode, node: Omit<MutableNode, 'nodeId' | 'parentId'>): MutableNode => {
    const made: MutableNode = { ...node, nodeId: String(out.length), parentId: parent.nodeId };
    out.push(made);
    parent.childIds.push(made.nodeId);
    return made;
  };
  // Depth-first on a stack of its own: a deeply nested page would exhaust the call stack. `disabled`: an ancestor
  // disables what is under it (aria-disabled, a disabled fieldset but for its first legend).
  const stack: { index: number; parent: MutableNode; disabled: boolean }[] = [];
  const pushChildren = (index: number, parent: MutableNode, disabledAbove: boolean) => {
    const children = dom.children(index);
    const own = isTrue(dom.attribute(index, 'aria-disabled'));
    const fieldset = dom.tag(index) === 'FIELDSET' && dom.hasAttribute(index, 'disabled');
    const legend = fieldset ? children.find((child) => dom.tag(child) === 'LEGEND') : undefined;
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i] as number;
      stack.push({ index: child, parent, disabled: disabledAbove || own || (fieldset && child !== legend) });
    }
  };
  pushChildren(0, root, false);
  while (stack.length > 0) {
    const { index, parent, disabled } = stack.pop() as (typeof stack)[number];
    if (dom.isText(index) || dom.isPseudo(index)) {
      const text = dom.shownText(index);
      if (!text) continue;
      // Generated content (::before, ::after) is a box of its own in Chromium's tree: its text on a line apart.
      const holder = dom.isPseudo(index)
        ? add(parent, { ignored: false, role: { value: 'generic', type: 'role' }, childIds: [] })
        : parent;
      add(holder, { ignored: false, role: { value: 'StaticText' }, name: { value: text }, childIds: [] });
      continue;
    }
    if (!dom.isElement(index)) continue;
    const tag = dom.tag(index);
    if (
      skippedElements.has(tag) ||
      // Chromium ignores aria-hidden on the document's body and root element (it would hide the whole page).
      (isTrue(dom.attribute(index, 'aria-hidden')) && tag !== 'BODY' && tag !== 'HTML') ||
      dom.hasAttribute(index, 'inert')
    )
      continue;
    const role = roleOf(dom, index);
    // An element with no box (display: none, or contents) shows only what its children show.
    const shown = dom.rendered(index) && dom.visible(index);
    // A shadow root's slot (no box of its own) keeps what is slotted apart from the text around it, as Chromium's tree does.
    if (tag === 'SLOT' && !dom.rendered(index)) {
      pushChildren(index, add(parent, { ignored: true, role: { value: 'generic' }, childIds: [] }), disabled);
      continue;
    }
    // A label is a node of Chromium's tree, ignored: its text is kept apart from the text around it.
    if (shown && role === undefined && tag === 'LABEL') {
      pushChildren(
        index,
        add(parent, { ignored: true, role: { value: 'LabelText' }, childIds: [] }),
        disabled,
      );
      continue;
    }
    if (!shown || role === undefined) {
      if (tag !== 'SELECT' && tag !== 'IFRAME' && tag !== 'FRAME' && !dom.contentHidden(index))
        pushChildren(index, parent, disabled);
      continue;
    }
    const node = add(parent, {
      ignored: false,
      role: { value: role, type: authorRoles.has(role) ? 'role' : 'internalRole' },
      childIds: [],
      backendDOMNodeId: dom.backendNodeId(index),
    });
    const name = nameOf(dom, index, role);
    if (name) node.name = { value: name };
    const properties = propertiesOf(dom, index, role, isDisabled(dom, index, role, disabled));
    if (properties.length > 0) node.properties = properties;
    if (tag === 'SELECT') {
      addOptions(dom, index, role, node, add, disabled);
      continue;
    }
    const value = fieldValueOf(dom, index, role);
    if (value !== undefined) {
      node.value = { value };
      continue;
    }
    if (role === 'Iframe' || role === 'separator' || dom.contentHidden(index)) continue;
    // A closed disclosure shows its summary alone.
    if (tag === 'DETAILS' && !dom.hasAttribute(index, 'open')) {
      const summary = dom.children(index).find((child) => dom.tag(child) === 'SUMMARY');
      if (summary !== undefined) stack.push({ index: summary, parent: node, disabled });
      continue;
    }
    pushChildren(index, node, disabled);
  }
  return out;
}

/** Elements a disabled attribute disables (a fieldset disables what is under it, not itself: Chromium 156). */
const disableable = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP']);
/** What Chromium's tree shows as disabled under a disabling ancestor: what can be acted on (a summary too). */
const controlRoles = new Set([...actionableRoles, 'DisclosureTriangle']);

function isDisabled(dom: CapturedNodes, index: number, role: string, disabledAbove: boolean): boolean {
  return (
    isTrue(dom.attribute(index, 'aria-disabled')) ||
    (disableable.has(dom.tag(index)) && dom.hasAttribute(index, 'disabled')) ||
    (disabledAbove && controlRoles.has(role))
  );
}

interface MutableNode extends AxNode {
  name?: AxValue;
  value?: AxValue;
  properties?: readonly { readonly name: string; readonly value: AxValue }[];
  childIds: string[];
}

/** A drop-down's options, under the popup node Chromium gives them (axToAria takes its value from the chosen one). */
function addOptions(
  dom: CapturedNodes,
  select: number,
  role: string,
  node: MutableNode,
  add: (parent: MutableNode, node: Omit<MutableNode, 'nodeId' | 'parentId'>) => MutableNode,
  disabledAbove: boolean,
): void {
  const holder =
    role === 'combobox'
      ? add(node, { ignored: false, role: { value: 'MenuListPopup' }, childIds: [] })
      : node;
  // An option shows its label attribute when it has one.
  const nameOfOption = (option: number) => dom.attribute(option, 'label')?.trim() || dom.textContent(option);
  let chosen: string | undefined;
  let first: string | undefined;
  const addOption = (option: number, parent: MutableNode, groupDisabled: boolean) => {
    const name = nameOfOption(option);
    const selected = dom.optionSelected(option);
    first ??= name;
    if (selected && chosen === undefined) chosen = name;
    const properties = [
      ...(isDisabled(dom, option, 'option', disabledAbove || groupDisabled)
        ? [{ name: 'disabled', value: { value: true } }]
        : []),
      ...(selected ? [{ name: 'selected', value: { value: true } }] : []),
    ];
    add(parent, {
      ignored: false,
      role: { value: 'option', type: 'role' },
      name: { value: name },
      childIds: [],
      backendDOMNodeId: dom.backendNodeId(option),
      ...(properties.length > 0 ? { properties } : {}),
    });
  };
  for (const child of dom.children(select)) {
    if (dom.tag(child) === 'OPTION') addOption(child, holder, false);
    else if (dom.tag(child) === 'OPTGROUP') {
      // A group of options, named by its label, as Chromium's tree shows it.
      const label = dom.attribute(child, 'label')?.trim();
      const group = add(holder, {
        ignored: false,
        role: { value: 'group', type: 'role' },
        ...(label ? { name: { value: label } } : {}),
        childIds: [],
        backendDOMNodeId: dom.backendNodeId(child),
      });
      const groupDisabled = isDisabled(dom, child, 'group', false);
      for (const option of dom.children(child))
        if (dom.tag(option) === 'OPTION') addOption(option, group, groupDisabled);
    }
  }
  if (role === 'combobox') node.value = { value: chosen ?? first ?? '' };
}

/** accname, for what a page shows: aria-labelledby, aria-label, the native label, then the content, then a title. */
function nameOf(dom: CapturedNodes, index: number, role: string): string {
  const labelledBy = dom.attribute(index, 'aria-labelledby');
  if (labelledBy) {
    const named = labelledBy
      .split(/\s+/)
      .map((id) => dom.byId(id))
      .filter((target): target is number => target !== undefined)
      .map((target) => dom.textContent(target, undefined, true))
      .join(' ')
      .trim();
    if (named) return named;
  }
  const label = dom.attribute(index, 'aria-label')?.trim();
  if (label) return label;
  const tag = dom.tag(index);
  const native = nativeName(dom, index, tag);
  if (native) return native;
  if (nameFromContent.has(role)) {
    const content = dom.shownContent(index).trim();
    if (content) return content;
  }
  const title = dom.attribute(index, 'title')?.trim();
  if (title) return title;
  if (tag === 'INPUT' || tag === 'TEXTAREA') return dom.attribute(index, 'placeholder')?.trim() ?? '';
  return '';
}

function nativeName(dom: CapturedNodes, index: number, tag: string): string {
  if (tag === 'IMG' || tag === 'AREA') return dom.attribute(index, 'alt')?.trim() ?? '';
  if (tag === 'INPUT') {
    const type = (dom.attribute(index, 'type') ?? 'text').toLowerCase();
    if (type === 'image') return dom.attribute(index, 'alt')?.trim() ?? '';
    if (type === 'button' || type === 'submit' || type === 'reset')
      // A value given, even empty, is the name; the default one only when there is none.
      return dom.attribute(index, 'value')?.trim() ?? defaultButtonNames[type] ?? '';
  }
  if (labelable.has(tag)) {
    const labels = dom.labelsOf(index);
    const text = labels
      .map((label) => dom.textContent(label, index, true))
      .join(' ')
      .trim();
    if (text) return text;
  }
  if (tag === 'SVG') {
    const title = dom.children(index).find((child) => dom.tag(child) === 'TITLE');
    if (title !== undefined) return dom.textContent(title).trim();
  }
  if (tag === 'FIELDSET') {
    const legend = dom.children(index).find((child) => dom.tag(child) === 'LEGEND');
    if (legend !== undefined) return dom.textContent(legend).trim();
  }
  if (tag === 'TABLE') {
    const caption = dom.children(index).find((child) => dom.tag(child) === 'CAPTION');
    if (caption !== undefined) return dom.textContent(caption).trim();
  }
  return '';
}

type Property = { name: string; value: { value: unknown } };

function propertiesOf(dom: CapturedNodes, index: number, role: string, disabled: boolean): Property[] {
  const properties: Property[] = [];
  const tag = dom.tag(index);
  const aria = (name: string) => dom.attribute(index, `aria-${name}`);
  if (role === 'checkbox' || role === 'radio' || role === 'switch' || role.startsWith('menuitem')) {
    // A native checkbox or radio button is checked or not by its own state alone (aria-checked is not read; an
    // indeterminate one, not in the DOM snapshot, is read from Chromium's tree: documentReads.ts documentAndFit).
    const native = tag === 'INPUT';
    const stated = native ? undefined : aria('checked')?.toLowerCase();
    if ((native && dom.inputChecked(index)) || stated === 'true')
      properties.push({ name: 'checked', value: { value: 'true' } });
    else if (stated === 'mixed') properties.push({ name: 'checked', value: { value: 'mixed' } });
  }
  const pressed = aria('pressed')?.toLowerCase();
  if (pressed === 'true' || pressed === 'mixed')
    properties.push({ name: 'pressed', value: { value: pressed === 'true' ? 'true' : 'mixed' } });
  if (disabled) properties.push({ name: 'disabled', value: { value: true } });
  if (isTrue(aria('expanded')) || (tag === 'SUMMARY' && dom.hasAttribute(dom.parent(index), 'open')))
    properties.push({ name: 'expanded', value: { value: true } });
  if (isTrue(aria('selected'))) properties.push({ name: 'selected', value: { value: true } });
  if (role === 'heading') {
    // aria-level when it is a number (below 1 counts as 1), else the tag's own level (h1-h6), else 2.
    const stated = Number.parseInt(aria('level') ?? '', 10);
    const level = Number.isNaN(stated) ? Number(/^H([1-6])$/.exec(tag)?.[1] ?? '2') : Math.max(1, stated);
    properties.push({ name: 'level', value: { value: level } });
  }
  const href = dom.attribute(index, 'href');
  if (role === 'link' && href !== undefined) {
    const url = dom.url(href);
    if (url) properties.push({ name: 'url', value: { value: url } });
  }
  return properties;
}

/** What a field holds, as Chromium's tree shows it (a password as bullets); undefined for what is not a field. */
function fieldValueOf(dom: CapturedNodes, index: number, role: string): string | undefined {
  if (!['textbox', 'searchbox', 'spinbutton', 'slider', 'combobox'].includes(role)) return undefined;
  const tag = dom.tag(index);
  if (tag === 'INPUT' || tag === 'TEXTAREA') return dom.fieldText(index);
  // A box the page calls a text field (role="textbox"): what it shows is its value.
  return role === 'textbox' || role === 'searchbox' ? dom.shownContent(index) : undefined;
}
