// Turns Chromium's accessibility tree of one document (CDP Accessibility.getFullAXTree) into the aria tree tabward
// renders (snapshotFormat.ts's AriaNode, the shape of Playwright's AI snapshot): Chromium's internal roles mapped to
// ARIA ones, text runs joined, a field's value as its text, a label's echo left out, and a ref key on every element
// (`<frame key>/<backend node id>`) that the snapshot can later resolve to exactly that element. Pure: the reading is
// in axRead.ts, the resolving in refLocators.ts.

import type { AriaNode } from './snapshotFormat.ts';

/** The parts of CDP's Accessibility.AXNode read here. */
export interface AxValue {
  readonly type?: string;
  readonly value?: unknown;
}

export interface AxNode {
  readonly nodeId: string;
  readonly ignored: boolean;
  readonly role?: AxValue;
  readonly name?: AxValue;
  readonly value?: AxValue;
  readonly properties?: readonly { readonly name: string; readonly value: AxValue }[];
  readonly parentId?: string;
  readonly childIds?: readonly string[];
  readonly backendDOMNodeId?: number;
}

export interface AxConversion {
  /** Names the document the nodes belong to; a ref key is `${frameKey}/${backendNodeId}`. */
  readonly frameKey: string;
  /** What an iframe element shows (by its backend node id); undefined when it was not read. */
  readonly frameContent: (backendNodeId: number) => FrameShown | undefined;
  /** Elements with a pointer cursor of their own that are not controls already: custom widgets an agent can click. */
  readonly pointer: ReadonlySet<number>;
}

/** An iframe's converted content, and the address of the document it shows (none when it shows none). */
export interface FrameShown {
  readonly children: readonly (AriaNode | string)[];
  readonly url?: string;
}

type Item = AriaNode | string | typeof block;
/** Keeps the text on either side apart: the content of a box of its own (an included but ignored wrapper). */
const block = Symbol('block');

/** Chromium's roles that ARIA names otherwise; internal roles not listed are plain `generic` containers. */
const renamed: Record<string, string> = {
  image: 'img',
  Iframe: 'iframe',
  IframePresentational: 'iframe',
  DisclosureTriangle: 'button',
  ColorWell: 'button',
  Date: 'textbox',
  DateTime: 'textbox',
  InputTime: 'textbox',
  Caption: 'caption',
};
/** Containers that add nothing of their own: their children take their place. */
const flattened = new Set(['RootWebArea', 'MenuListPopup', 'none', 'presentation']);
/**
 * Text-level marks inside a line of text (bold, italics, a highlight, a date, code): their words join the text around
 * them, as a reader sees the line, rather than each cutting it into a line of its own ("strong: word").
 */
const inline = new Set(['strong', 'emphasis', 'mark', 'time', 'code', 'subscript', 'superscript']);
/** Left out with what they hold: a list's bullets, the boxes inside a line of text. */
const dropped = new Set(['InlineTextBox', 'ListMarker']);
/** Roles whose value is what the agent reads (and whose text children only repeat it). */
const valued = new Set(['textbox', 'searchbox', 'spinbutton', 'slider', 'combobox']);
/** Roles that are landmarks only when named; unnamed they are the generic boxes Playwright calls them. */
const namedOnly = new Set(['form', 'region']);

export function axToAria(nodes: readonly AxNode[], conversion: AxConversion): (AriaNode | string)[] {
  const byId = new Map(nodes.map((node) => [node.nodeId, node]));
  const root = nodes.find((node) => node.parentId === undefined) ?? nodes[0];
  if (!root) return [];
  // Each node's items are pushed onto its parent's list: returning and spreading lists would copy a subtree's
  // items once for every wrapper above it, which on a large page of nested boxes costs more than the rest.
  const childrenOf = (node: AxNode, parentName: string, depth: number, out: Item[]): Item[] => {
    for (const id of node.childIds ?? []) {
      const child = byId.get(id);
      if (child) convert(child, parentName, depth + 1, out);
    }
    return out;
  };
  const convert = (node: AxNode, parentName: string, depth: number, out: Item[]): void => {
    // A tree deeper than any real page is cut rather than allowed to exhaust the stack, and says so.
    if (depth > maxDepth) {
      out.push(block, `(nested deeper than ${maxDepth} levels: not shown)`, block);
      return;
    }
    const chromeRole = String(node.role?.value ?? '');
    if (dropped.has(chromeRole)) return;
    if (chromeRole === 'StaticText') {
      if (!node.ignored) out.push(stringValue(node.name));
      return;
    }
    if (chromeRole === 'LineBreak') {
      if (!node.ignored) out.push(' ');
      return;
    }
    if (node.ignored) {
      out.push(block);
      childrenOf(node, parentName, depth, out);
      out.push(block);
      return;
    }
    if (flattened.has(chromeRole) || inline.has(chromeRole)) {
      childrenOf(node, parentName, depth, out);
      return;
    }
    const name = shownName(node);
    if (chromeRole === 'Legend') {
      const items = childrenOf(node, name, depth, []);
      // The group it names already says it.
      if (normalized(joinText(items)) !== parentName) out.push(block, ...items, block);
      return;
    }
    out.push(elementOf(node, chromeRole, name, depth));
  };
  const elementOf = (node: AxNode, chromeRole: string, name: string, depth: number): AriaNode => {
    const role = ariaRole(node, chromeRole, name);
    const element: Record<string, unknown> = { role };
    if (name) element.name = name;
    if (node.backendDOMNodeId !== undefined) {
      element.ref = `${conversion.frameKey}/${node.backendDOMNodeId}`;
      if (conversion.pointer.has(node.backendDOMNodeId)) element.cursor = 'pointer';
    }
    Object.assign(element, statesOf(node, role));
    let children: (AriaNode | string)[];
    if (role === 'iframe') {
      const shown = conversion.frameContent(node.backendDOMNodeId ?? -1);
      children = [...(shown?.children ?? [])];
      if (shown?.url) element.frameUrl = shown.url;
    } else if (isSelect(node, byId))
      children = joinStrings(childrenOf(node, name, depth, [])).map(withoutRef);
    else if (valued.has(role)) {
      const value = valueText(node);
      children = value ? [value] : [];
    } else children = joinStrings(childrenOf(node, name, depth, []));
    // A name taken from the element's own text is said once.
    if (children.length === 1 && children[0] === name) children = [];
    if (children.length === 1 && typeof children[0] === 'string') element.text = children[0];
    else if (children.length > 0) element.children = children;
    return element as AriaNode;
  };
  return joinStrings(childrenOf(root, '', 0, []));
}

const maxDepth = 400;

function ariaRole(node: AxNode, chromeRole: string, name: string): string {
  const mapped = renamed[chromeRole] ?? (node.role?.type === 'internalRole' ? 'generic' : chromeRole);
  return namedOnly.has(mapped) && !name ? 'generic' : mapped;
}

/** A drop-down's options are chosen through the drop-down (fill_form), not clicked: they carry no ref. */
function withoutRef(item: AriaNode | string): AriaNode | string {
  if (typeof item === 'string' || item.role !== 'option') return item;
  const { ref: _ref, ...option } = item;
  return option as AriaNode;
}

/** A drop-down (a select element): its options are its children, its value is the chosen one's name. */
function isSelect(node: AxNode, byId: ReadonlyMap<string, AxNode>): boolean {
  return (node.childIds ?? []).some((id) => byId.get(id)?.role?.value === 'MenuListPopup');
}

function statesOf(node: AxNode, role: string): Record<string, unknown> {
  const states: Record<string, unknown> = {};
  for (const property of node.properties ?? []) {
    const { value } = property.value;
    switch (property.name) {
      case 'checked':
      case 'pressed':
        if (value === 'true' || value === true) states[property.name] = true;
        else if (value === 'mixed') states[property.name] = 'mixed';
        break;
      case 'disabled':
      case 'expanded':
      case 'selected':
        if (value === true || value === 'true') states[property.name] = true;
        break;
      case 'level':
        if (role === 'heading' && typeof value === 'number') states.level = value;
        break;
      case 'url':
        // An image's source is no place to go.
        if (role === 'link' && typeof value === 'string' && value) states.url = value;
        break;
    }
  }
  return states;
}

/** A field's value as the agent reads it. */
function valueText(node: AxNode): string {
  const own = node.value?.value;
  const valuetext = node.properties?.find((property) => property.name === 'valuetext')?.value.value;
  return hideLength(normalized(String(valuetext ?? own ?? '')));
}

function shownName(node: AxNode): string {
  return hideLength(normalized(stringValue(node.name)));
}

/**
 * Chromium shows a password as one bullet a character, in the field's value and in any name taken from it
 * (aria-labelledby): told as four, whatever its length.
 */
function hideLength(text: string): string {
  return /^•+$/.test(text) ? '••••' : text.replace(/•{2,}/g, '••••');
}

function stringValue(value: AxValue | undefined): string {
  const raw = value?.value as unknown;
  return typeof raw === 'string' ? raw : raw === undefined || raw === null ? '' : String(raw);
}

/** Text as Playwright's tree shows it: zero-width spaces and soft hyphens dropped, whitespace runs collapsed, trimmed. */
export function normalized(text: string): string {
  return text
    .replace(/[\u200b\u00ad]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Adjacent text runs (one line of text in several boxes) become one string; a box boundary keeps them apart. */
function joinStrings(items: readonly Item[]): (AriaNode | string)[] {
  const out: (AriaNode | string)[] = [];
  let run: string | undefined;
  const flush = () => {
    const text = run === undefined ? '' : normalized(run);
    if (text) out.push(text);
    run = undefined;
  };
  for (const item of items) {
    if (typeof item === 'string') run = (run ?? '') + item;
    else {
      flush();
      if (item !== block) out.push(item);
    }
  }
  flush();
  return out;
}

function joinText(items: readonly Item[]): string {
  return items.map((item) => (typeof item === 'string' ? item : '')).join('');
}
