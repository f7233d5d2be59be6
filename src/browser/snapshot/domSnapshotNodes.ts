// Reading one document of a CDP DOM snapshot (DOMSnapshot.captureSnapshot): its flat arrays (parent indexes, string
// table indexes, sparse "rare" data, the layout objects with the computed styles asked for) as the questions
// domSnapshotTree.ts asks of a node: its tag, attributes, children, whether it has a box and is visible, its
// rendered text, a field's value. The styles asked for are `capturedStyles`, in that order.

/** The computed styles the capture asks for, in the order the layout's styles carry them. */
export const capturedStyles = ['visibility', 'display', 'content-visibility'] as const;

interface RareStrings {
  readonly index: readonly number[];
  readonly value: readonly number[];
}
interface RareBooleans {
  readonly index: readonly number[];
}

/** The parts of CDP's DOMSnapshot.DocumentSnapshot read here. */
export interface DocumentSnapshot {
  readonly frameId: number;
  readonly baseURL: number;
  readonly nodes: {
    readonly parentIndex: readonly number[];
    readonly nodeType: readonly number[];
    readonly shadowRootType?: RareStrings;
    readonly nodeName: readonly number[];
    readonly nodeValue: readonly number[];
    readonly backendNodeId: readonly number[];
    readonly attributes: readonly (readonly number[])[];
    readonly textValue?: RareStrings;
    readonly inputValue?: RareStrings;
    readonly inputChecked?: RareBooleans;
    readonly optionSelected?: RareBooleans;
    readonly pseudoType?: RareStrings;
  };
  readonly layout: {
    readonly nodeIndex: readonly number[];
    readonly styles: readonly (readonly number[])[];
    readonly text: readonly number[];
  };
}

export interface CapturedDocument {
  readonly document: DocumentSnapshot;
  readonly strings: readonly string[];
}

const elementNode = 1;
const textNode = 3;
/** An XHTML document's CDATA section: text, laid out as a text node is. */
const cdataNode = 4;
/** Form fields that take their name from a label element (input type=hidden aside). */
export const labelable = new Set(['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'METER', 'PROGRESS', 'OUTPUT']);

/** An ARIA true or false state is any case in Chromium, with spaces around it or not. */
export function isTrue(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === 'true';
}

export class CapturedNodes {
  private readonly nodes: DocumentSnapshot['nodes'];
  private readonly strings: readonly string[];
  private readonly childLists: number[][];
  private readonly layoutOf = new Map<number, number>();
  private readonly ids = new Map<string, number>();
  private readonly labelsFor = new Map<string, number[]>();
  /** Ids that an aria-labelledby or aria-describedby names. */
  private readonly referencedIds = new Set<string>();
  private readonly values: Map<number, string>;
  private readonly texts: Map<number, string>;
  private readonly checked: Set<number>;
  private readonly selected: Set<number>;
  private readonly pseudo: Set<number>;
  private readonly baseUrl: string;
  private duplicated = false;

  constructor(private readonly captured: CapturedDocument) {
    const { document, strings } = captured;
    this.nodes = document.nodes;
    this.strings = strings;
    const count = this.nodes.parentIndex.length;
    this.childLists = Array.from({ length: count }, () => []);
    for (let index = 1; index < count; index++) {
      const parent = this.nodes.parentIndex[index] ?? -1;
      if (parent >= 0) this.childLists[parent]?.push(index);
    }
    document.layout.nodeIndex.forEach((node, layout) => {
      this.layoutOf.set(node, layout);
    });
    this.values = rareStrings(this.nodes.inputValue, strings);
    this.texts = rareStrings(this.nodes.textValue, strings);
    this.checked = new Set(this.nodes.inputChecked?.index ?? []);
    this.selected = new Set(this.nodes.optionSelected?.index ?? []);
    this.pseudo = new Set(this.nodes.pseudoType?.index ?? []);
    this.baseUrl = strings[document.baseURL] ?? '';
    for (let index = 0; index < count; index++) {
      if (this.nodes.nodeType[index] !== elementNode) continue;
      if (hasDuplicateNames(this.nodes.attributes[index] ?? [])) this.duplicated = true;
      const id = this.attribute(index, 'id');
      if (id && !this.ids.has(id)) this.ids.set(id, index);
      for (const name of ['aria-labelledby', 'aria-describedby'])
        for (const id of (this.attribute(index, name) ?? '').split(/\s+/)) if (id) this.referencedIds.add(id);
      const target = this.tag(index) === 'LABEL' ? this.attribute(index, 'for') : undefined;
      if (target) {
        const labels = this.labelsFor.get(target);
        if (labels) labels.push(index);
        else this.labelsFor.set(target, [index]);
      }
    }
  }

  /**
   * A shadow root whose content refers to elements by id (aria-labelledby, aria-describedby, a label's for, an id
   * itself): ids are scoped to their shadow root, and the snapshot does not say which root a node is in. The
   * snapshot gives the flat tree otherwise (a shadow root's content in its host, slotted children under their slot,
   * unslotted ones left out), which is what Chromium's tree follows.
   */
  hasScopedIds(): boolean {
    const shadowNodes = this.nodes.shadowRootType?.index ?? [];
    return shadowNodes.some(
      (index) =>
        this.nodes.nodeType[index] === elementNode &&
        ['id', 'for', 'aria-labelledby', 'aria-describedby'].some((name) => this.hasAttribute(index, name)),
    );
  }

  /**
   * An element carries two attributes of one name: one the page set in a namespace of its own (setAttributeNS), which
   * the snapshot names as the real one. Which one the element uses (its href, its type, its aria-hidden) is not in
   * the snapshot: read first, the page's decoy showed a link's address, a password field's type, a name otherwise.
   */
  hasDuplicateAttributes(): boolean {
    return this.duplicated;
  }

  children(index: number): readonly number[] {
    return this.childLists[index] ?? [];
  }

  parent(index: number): number {
    return this.nodes.parentIndex[index] ?? -1;
  }

  isElement(index: number): boolean {
    return this.nodes.nodeType[index] === elementNode && !this.pseudo.has(index);
  }

  isText(index: number): boolean {
    const type = this.nodes.nodeType[index];
    return type === textNode || type === cdataNode;
  }

  /** A ::before or ::after box: its generated text is in its layout (a list's marker is left out, as Chromium does). */
  isPseudo(index: number): boolean {
    return this.pseudo.has(index) && this.tag(index) !== '::MARKER';
  }

  tag(index: number): string {
    return (this.strings[this.nodes.nodeName[index] ?? -1] ?? '').toUpperCase();
  }

  backendNodeId(index: number): number {
    return this.nodes.backendNodeId[index] ?? -1;
  }

  attribute(index: number, name: string): string | undefined {
    const pairs = this.nodes.attributes[index] ?? [];
    for (let at = 0; at + 1 < pairs.length; at += 2)
      if (this.strings[pairs[at] ?? -1] === name) return this.strings[pairs[at + 1] ?? -1] ?? '';
    return undefined;
  }

  hasAttribute(index: number, name: string): boolean {
    return this.attribute(index, name) !== undefined;
  }

  /** Has a layout object (a box, or text laid out): what display: none hides has none. */
  rendered(index: number): boolean {
    return this.layoutOf.has(index);
  }

  visible(index: number): boolean {
    return this.style(index, 0) === 'visible';
  }

  display(index: number): string | undefined {
    return this.style(index, 1);
  }

  /** content-visibility: hidden (hidden="until-found" among others): the element's box shows none of its content. */
  contentHidden(index: number): boolean {
    return this.style(index, 2) === 'hidden';
  }

  /** The text a text node (or a ::before box) shows, as laid out (text-transform applied); '' when not shown. */
  shownText(index: number): string {
    const layout = this.layoutOf.get(index);
    if (layout === undefined || !this.visible(index)) return '';
    const laid = this.captured.document.layout.text[layout] ?? -1;
    return laid >= 0 ? (this.strings[laid] ?? '') : this.isText(index) ? this.nodeValue(index) : '';
  }

  /**
   * All the text under a node (an option's), or with `shownOnly`, as accname reads a label or a labelledby target:
   * when the node itself is shown, only what is shown under it (a hidden part of it is left out, as Chromium does);
   * when it is hidden, all of it. `except` left out. On a stack of its own: a deeply nested page would exhaust the
   * call stack.
   */
  textContent(index: number, except?: number, shownOnly = false): string {
    const parts: string[] = [];
    const whole = !shownOnly || !this.shownNode(index);
    const stack = [index];
    while (stack.length > 0) {
      const at = stack.pop() as number;
      if (at === except) continue;
      // Generated text (::before, ::after) is part of a name, as it is of what the page shows.
      if (this.isPseudo(at)) {
        parts.push(this.shownText(at));
        continue;
      }
      if (this.isText(at)) {
        if (whole || at === index) parts.push(this.nodeValue(at));
        else if (this.rendered(at) && this.visible(at)) parts.push(this.shownText(at));
        continue;
      }
      if (!this.isElement(at)) continue;
      if (!whole && at !== index && isTrue(this.attribute(at, 'aria-hidden'))) continue;
      const tag = this.tag(at);
      if (['INPUT', 'TEXTAREA', 'SELECT'].includes(tag)) {
        if (whole || this.rendered(at)) parts.push(` ${this.fieldText(at)} `);
      } else if (!['SCRIPT', 'STYLE', 'TEMPLATE'].includes(tag)) {
        const children = this.children(at);
        for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as number);
      }
    }
    return parts.join('').replace(/\s+/g, ' ').trim();
  }

  /** The node, or the text under it, is shown: it has a box and is visible, or has none but shows its children. */
  private shownNode(index: number): boolean {
    if (this.rendered(index)) return this.visible(index);
    // display: contents has no box of its own: shown when a text under it is (display: none leaves none any box).
    const stack = [...this.children(index)];
    while (stack.length > 0) {
      const at = stack.pop() as number;
      if (this.rendered(at)) return true;
      stack.push(...this.children(at));
    }
    return false;
  }

  /** The text an element shows (accname's name from content): shown text, images' alternative text, boxes apart. */
  shownContent(index: number): string {
    const parts: string[] = [];
    const stack = [...this.children(index)].reverse();
    while (stack.length > 0) {
      const at = stack.pop() as number;
      if (this.isText(at) || this.isPseudo(at)) {
        parts.push(this.shownText(at));
        continue;
      }
      if (!this.isElement(at) || isTrue(this.attribute(at, 'aria-hidden'))) continue;
      const tag = this.tag(at);
      if (tag === 'IMG' && this.rendered(at))
        parts.push(` ${this.attribute(at, 'aria-label') ?? this.attribute(at, 'alt') ?? ''} `);
      // A field inside is read as its value (accname's embedded control: "Pay EUR", "Qty 3 items").
      if (['INPUT', 'SELECT', 'TEXTAREA'].includes(tag)) {
        if (this.rendered(at)) parts.push(` ${this.fieldText(at)} `);
        continue;
      }
      const block = this.rendered(at) && this.display(at) !== 'inline';
      if (block) parts.push(' ');
      for (const child of [...this.children(at)].reverse()) stack.push(child);
    }
    return parts.join('').replace(/\s+/g, ' ').trim();
  }

  /** Named by another element's aria-labelledby or aria-describedby. */
  isReferenced(index: number): boolean {
    const id = this.attribute(index, 'id');
    return id !== undefined && this.referencedIds.has(id);
  }

  byId(id: string): number | undefined {
    return this.ids.get(id);
  }

  /**
   * The label elements of a field: those whose for names its id (when it is the first element of that id), and the
   * one around it when that label has no for and the field is the first control inside it (HTML's labeled control).
   */
  labelsOf(index: number): number[] {
    const id = this.attribute(index, 'id');
    const labels = id && this.byId(id) === index ? [...(this.labelsFor.get(id) ?? [])] : [];
    for (let up = this.parent(index); up >= 0; up = this.parent(up))
      if (this.tag(up) === 'LABEL') {
        if (!labels.includes(up) && !this.hasAttribute(up, 'for') && this.firstControl(up) === index)
          labels.push(up);
        break;
      }
    return labels;
  }

  private firstControl(label: number): number | undefined {
    return this.firstUnder(
      label,
      (at) =>
        this.isElement(at) &&
        labelable.has(this.tag(at)) &&
        !(this.tag(at) === 'INPUT' && (this.attribute(at, 'type') ?? '').toLowerCase() === 'hidden'),
    );
  }

  /** The first node under a node, in document order, that `is` (the walk stops there). */
  private firstUnder(index: number, is: (at: number) => boolean): number | undefined {
    const stack = [...this.children(index)].reverse();
    while (stack.length > 0) {
      const at = stack.pop() as number;
      if (is(at)) return at;
      const children = this.children(at);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as number);
    }
    return undefined;
  }

  /** What a field inside a name reads as (accname's embedded control): its value, a password as bullets. */
  fieldText(index: number): string {
    const tag = this.tag(index);
    if (tag === 'SELECT') {
      const chosen = this.firstUnder(index, (at) => this.tag(at) === 'OPTION' && this.selected.has(at));
      return chosen === undefined ? '' : this.textContent(chosen);
    }
    const type = (this.attribute(index, 'type') ?? '').toLowerCase();
    if (tag === 'INPUT' && ['hidden', 'checkbox', 'radio', 'file', 'image'].includes(type)) return '';
    const value = this.inputValue(index) ?? '';
    return tag === 'INPUT' && type === 'password' && value ? '••••' : value;
  }

  inputValue(index: number): string | undefined {
    return this.values.get(index) ?? this.texts.get(index);
  }

  inputChecked(index: number): boolean {
    return this.checked.has(index);
  }

  optionSelected(index: number): boolean {
    return this.selected.has(index);
  }

  /** The nodes under a node, in document order (on a stack of its own: a deeply nested page would exhaust the call stack). */
  descendants(index: number): number[] {
    const out: number[] = [];
    const stack = [...this.children(index)].reverse();
    while (stack.length > 0) {
      const at = stack.pop() as number;
      out.push(at);
      const children = this.children(at);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as number);
    }
    return out;
  }

  /** A link's address made absolute against the document's base URL, as Chromium's tree gives it. */
  url(href: string): string {
    try {
      return new URL(href.trim(), this.baseUrl).href;
    } catch {
      return '';
    }
  }

  private nodeValue(index: number): string {
    return this.strings[this.nodes.nodeValue[index] ?? -1] ?? '';
  }

  private style(index: number, position: number): string | undefined {
    const layout = this.layoutOf.get(index);
    if (layout === undefined) return undefined;
    const value = this.captured.document.layout.styles[layout]?.[position];
    return value === undefined ? undefined : this.strings[value];
  }
}

/**
 * The values of every password field of a captured document, wherever it is: inside a closed shadow root (out of
 * reach of tabward's isolated world, which walks only open ones), hidden, or under any role, as the page's scripts
 * see them. A field is an input whose type is password or whose autocomplete names a password, as
 * documentReads.ts `isPasswordSource` says; of an attribute given twice (a namespaced decoy) either counts.
 */
export function passwordsInCapture({ document, strings }: CapturedDocument): string[] {
  const { nodes } = document;
  const values: string[] = [];
  rareStrings(nodes.inputValue, strings).forEach((value, index) => {
    if (!value || (strings[nodes.nodeName[index] ?? -1] ?? '').toUpperCase() !== 'INPUT') return;
    const pairs = nodes.attributes[index] ?? [];
    for (let at = 0; at + 1 < pairs.length; at += 2) {
      const name = strings[pairs[at] ?? -1];
      const given = (strings[pairs[at + 1] ?? -1] ?? '').toLowerCase();
      const tokens = given.split(/\s+/);
      if (
        (name === 'type' && given === 'password') ||
        (name === 'autocomplete' && (tokens.includes('current-password') || tokens.includes('new-password')))
      ) {
        values.push(value);
        return;
      }
    }
  });
  return values;
}

function rareStrings(data: RareStrings | undefined, strings: readonly string[]): Map<number, string> {
  const map = new Map<number, string>();
  data?.index.forEach((node, at) => {
    map.set(node, strings[data.value[at] ?? -1] ?? '');
  });
  return map;
}

function hasDuplicateNames(pairs: readonly number[]): boolean {
  const names = new Set<number>();
  for (let at = 0; at + 1 < pairs.length; at += 2) {
    if (names.has(pairs[at] as number)) return true;
    names.add(pairs[at] as number);
  }
  return false;
}
