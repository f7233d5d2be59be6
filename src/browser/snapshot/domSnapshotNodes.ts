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
      const id = this.attribute(index, 'id');
      if (id && !this.ids.has(id)) this.ids.set(id, index);
      for (const name of ['aria-labelledby', 'aria-describedby'])
        for (const id of (this.attribute(index, name) ?? '').split(/\s+/)) if (id) this.referencedIds.add(id);
      const target = this.tag(index) === 'LABEL' ? this.attribute(index, 'for') : undefined;
      if (target) this.labelsFor.set(target, [...(this.labelsFor.get(target) ?? []), index]);
    }
  }

  hasShadowRoots(): boolean {
    return (this.nodes.shadowRootType?.index.length ?? 0) > 0;
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
    return this.nodes.nodeType[index] === textNode;
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

  /** All the text under a node, shown or not (accname reads a label or a labelledby target whole); `except` left out. */
  textContent(index: number, except?: number): string {
    const parts: string[] = [];
    const walk = (at: number) => {
      if (at === except) return;
      if (this.isText(at)) parts.push(this.nodeValue(at));
      else if (this.isElement(at) && ['INPUT', 'TEXTAREA', 'SELECT'].includes(this.tag(at)))
        parts.push(` ${this.fieldText(at)} `);
      else if (!['SCRIPT', 'STYLE', 'TEMPLATE'].includes(this.tag(at)))
        for (const child of this.children(at)) walk(child);
    };
    walk(index);
    return parts.join('').replace(/\s+/g, ' ').trim();
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
      if (!this.isElement(at) || this.attribute(at, 'aria-hidden') === 'true') continue;
      const tag = this.tag(at);
      if (tag === 'IMG' && this.rendered(at))
        parts.push(` ${this.attribute(at, 'aria-label') ?? this.attribute(at, 'alt') ?? ''} `);
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

  /** The label elements of a field: those naming its id, and the one around it. */
  labelsOf(index: number): number[] {
    const id = this.attribute(index, 'id');
    const labels = id ? [...(this.labelsFor.get(id) ?? [])] : [];
    for (let up = this.parent(index); up >= 0; up = this.parent(up))
      if (this.tag(up) === 'LABEL') {
        if (!labels.includes(up)) labels.push(up);
        break;
      }
    return labels;
  }

  /** What a field inside a name reads as (accname's embedded control): its value, a password as bullets. */
  fieldText(index: number): string {
    const tag = this.tag(index);
    if (tag === 'SELECT') {
      const chosen = this.descendants(index).find((at) => this.tag(at) === 'OPTION' && this.selected.has(at));
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

  descendants(index: number): number[] {
    const out: number[] = [];
    const walk = (at: number) => {
      for (const child of this.children(at)) {
        out.push(child);
        walk(child);
      }
    };
    walk(index);
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

function rareStrings(data: RareStrings | undefined, strings: readonly string[]): Map<number, string> {
  const map = new Map<number, string>();
  data?.index.forEach((node, at) => {
    map.set(node, strings[data.value[at] ?? -1] ?? '');
  });
  return map;
}
