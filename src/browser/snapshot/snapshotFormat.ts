// Renders the aria tree of a tab (axToAria.ts: Chromium's accessibility tree in the shape of Playwright's AI
// snapshot) into tabward's compact snapshot: refs only on elements an agent can act on, wrappers without meaning
// flattened, a headline that is one link a line of its own (not its title twice), tables as rows of cells, URLs
// relative to the document that shows them (a frame of another site says its origin on its line), and a token
// budget with an explicit truncation marker.

export interface AriaNode {
  readonly role: string;
  readonly name?: string;
  readonly text?: string;
  readonly ref?: string;
  readonly url?: string;
  /** An iframe's: the address of the document it shows. */
  readonly frameUrl?: string;
  readonly cursor?: string;
  readonly level?: number;
  readonly children?: readonly (AriaNode | string)[];
  readonly [state: string]: unknown;
}

export interface RenderOptions {
  readonly pageUrl: string;
  /** Render only the subtree of this ref. */
  readonly ref?: string;
  /** Keep only lines containing this text (case-insensitive), with the headings above them. */
  readonly query?: string;
  readonly maxTokens?: number;
  /** Refs on every element with text, not only the ones an agent usually acts on (drag handles, custom widgets). */
  readonly allRefs?: boolean;
  /**
   * Hides what the agent must not see (password values, secrets) in each line before the query is matched: a
   * query on the hidden text would tell the agent, match by match, what was hidden.
   */
  readonly hide?: (line: string) => string;
}

interface RenderContext {
  /**
   * What a URL is shown relative to: the page's address, or inside a frame of another origin the frame's (whose
   * origin its line shows), so that each path reads against the nearest address above it.
   */
  readonly baseUrl: string;
  /** Frames' URLs shown whole, with no origin line to read them against (a query drops that line). */
  readonly wholeFrameUrls: boolean;
  readonly allRefs: boolean;
  /** The snapshot's own lines, marked as they are written: which are page text alone, and each control's name. */
  readonly marks: LineMarks;
  /** RenderOptions.hide: whether a name is quoted is decided on what the agent will see of it. */
  readonly hide?: (line: string) => string;
}

/** For dropping a label beside its field: decided on what each line is, never by reading the lines back. */
interface LineMarks {
  readonly lines: readonly string[];
  /** Lines of page text with nothing else on them (no role, no ref). */
  readonly texts: Set<number>;
  /** Lines of a control with a ref: its name. */
  readonly controls: Map<number, string>;
}

/** Roles an agent acts on: their elements carry a ref (domSnapshotTree.ts also marks them disabled under a disabling ancestor). */
export const actionableRoles: ReadonlySet<string> = new Set([
  'link',
  'button',
  'textbox',
  'searchbox',
  'combobox',
  'checkbox',
  'radio',
  'switch',
  'slider',
  'spinbutton',
  'tab',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'option',
  'treeitem',
  'listbox',
  'gridcell',
]);
/** Roles whose name adds nothing once their children are shown. */
const transparentRoles = new Set([
  'generic',
  'group',
  'none',
  'presentation',
  'rowgroup',
  'paragraph',
  'section',
  // Landmarks without a name: the headings and links inside say where the agent is.
  'main',
  'article',
  'banner',
  'contentinfo',
  'complementary',
  'region',
  'search',
  // A figure without a name: its image and caption say what it is.
  'figure',
]);
const indentingRoles = new Set([
  'list',
  'navigation',
  'dialog',
  'alertdialog',
  'iframe',
  'form',
  'menu',
  'tree',
]);
const shownStates = ['checked', 'disabled', 'expanded', 'pressed', 'selected', 'invalid', 'placeholder'];

export function renderSnapshot(tree: readonly (AriaNode | string)[], options: RenderOptions): string {
  const found = options.ref ? findRef(tree, options.ref) : tree;
  if (!found) return `(no element with ref ${options.ref}; take a new snapshot)`;
  const roots = found.map(withoutForgedRefs);
  const lines: string[] = [];
  const marks = { lines, texts: new Set<number>(), controls: new Map<number, string>() };
  const context = {
    baseUrl: options.pageUrl,
    wholeFrameUrls: options.query !== undefined,
    allRefs: options.allRefs ?? false,
    marks,
    ...(options.hide ? { hide: options.hide } : {}),
  };
  for (const node of roots) renderNode(node, 0, lines, context);
  const deduped = mergeBullets(dropLabelEchoes(marks));
  const visible = options.hide ? deduped.map(options.hide) : deduped;
  const kept = options.query ? filterByQuery(visible, options.query) : visible;
  return applyBudget(kept, options.maxTokens);
}

/** `withinItem`: inside a list item, where a list of its own is indented under the item. */
function renderNode(
  node: AriaNode | string,
  depth: number,
  lines: string[],
  context: RenderContext,
  withinItem = false,
): void {
  if (typeof node === 'string') {
    pushText(lines, depth, node, '', context.marks);
    return;
  }
  if (node.role === 'table' || node.role === 'grid') {
    renderTable(node, depth, lines, context);
    return;
  }
  if (node.role === 'list' && !node.name) {
    // Its items' "- " bullets already say it is a list: no line of its own.
    const itemDepth = withinItem ? depth + 1 : depth;
    for (const child of node.children ?? []) renderNode(child, itemDepth, lines, context, withinItem);
    return;
  }
  const headline = node.role === 'heading' ? soleControlOf(node) : undefined;
  if (headline) {
    // A heading that is one link or button of the same name (a headline, a search result, an issue title): one
    // line, `### link "Title" /story/1 @e16`, not the title twice.
    const inner: string[] = [];
    renderNode(headline, depth, inner, context, withinItem);
    const [first = '', ...rest] = inner;
    lines.push(`${' '.repeat(depth)}${headingMark(node)} ${first.trimStart()}`, ...rest);
    return;
  }
  const options = inlineOptions(node, context.hide);
  // A query keeps matching lines only, without the frame lines above them: inside frames, URLs stay whole.
  const frameBase =
    node.role === 'iframe' && !context.wholeFrameUrls ? frameBaseOf(node, context.baseUrl) : undefined;
  const described = describe(node, context, options);
  const label = frameBase && described ? `${described} ${disarmed(frameBase.origin)}` : described;
  const inner = frameBase && label ? { ...context, baseUrl: frameBase.url } : context;
  const children = options ? [] : (node.children ?? []);
  if (label) {
    const separator = node.role === 'listitem' ? ' ' : ': ';
    lines.push(
      `${' '.repeat(depth)}${label}${node.text && !isActionable(node) ? `${separator}${node.text}` : ''}`,
    );
    if (lines === context.marks.lines && node.name && node.ref && isActionable(node))
      context.marks.controls.set(lines.length - 1, node.name.trim());
  } else if (node.text)
    pushText(lines, depth, node.text, context.allRefs && node.ref ? ` @${node.ref}` : '', context.marks);
  const childDepth = label && (indentingRoles.has(node.role) || isActionable(node)) ? depth + 1 : depth;
  for (const child of children)
    renderNode(child, childDepth, lines, inner, withinItem || node.role === 'listitem');
}

/** One line for an element, or '' when it is a wrapper whose children say everything. */
function describe(node: AriaNode, context: RenderContext, options?: InlineOptions): string {
  const actionable = isActionable(node);
  if (!actionable && transparentRoles.has(node.role) && !node.name) return '';
  if (node.role === 'heading') return `${headingMark(node)} ${node.name ?? node.text ?? ''}`;
  if (node.role === 'listitem') return '-';
  const parts: string[] = [node.role === 'generic' ? 'clickable' : node.role];
  if (node.name) parts.push(shownName(node.name, context.hide));
  const value = node.text ?? options?.selected;
  if (actionable && value && value !== node.name) parts.push(`=${JSON.stringify(value)}`);
  for (const state of shownStates) {
    const stateValue = node[state];
    if (stateValue === true) parts.push(`[${state}]`);
    else if (typeof stateValue === 'string' || typeof stateValue === 'number')
      parts.push(`[${state}=${stateValue}]`);
  }
  if (node.url) parts.push(disarmed(relativeUrl(node.url, context.baseUrl)));
  if ((actionable || context.allRefs) && node.ref) parts.push(`@${node.ref}`);
  if (options) parts.push(`options: ${options.list}`);
  return parts.join(' ');
}

/**
 * A name as its line shows it: bare when it is made only of what cannot be read as what follows a name on the line
 * (a value `="…"`, a state `[checked]`, a URL, a ref, a cell's bar, an option list) nor hide anything, quoted
 * otherwise. An allow-list, since look-alikes of those signs (a full-width bracket or equals sign, a small at sign,
 * a division slash) would pass any list of signs refused. The quotes were 4-12% of a large page's snapshot
 * (bench/results.md, the eighth pass).
 */
function shownName(name: string, hide?: (line: string) => string): string {
  // Decided on the name as it will be shown: a hidden value (a password typed into a field its name echoes) is
  // always quoted, so that whether it is tells nothing of the value's characters.
  const shown = hide ? hide(name) : name;
  return plainName.test(shown) && !schemeLike.test(shown) && !refLike.test(shown)
    ? name
    : JSON.stringify(name);
}

// Starts with a letter or digit, ends with no space, holds single plain spaces only, and otherwise letters, marks,
// digits and everyday punctuation; none of them invisible (Unicode's default-ignorable code points: the Hangul
// fillers are letters, the variation selectors marks).
const plainName =
  /^(?=[\p{L}\p{N}])(?:(?! {2})(?!\p{Default_Ignorable_Code_Point})[\p{L}\p{M}\p{N} .,;:!?'’()&%+*_\-–—$€£…])*(?<! )$/u;
// A colon with no space after it: a scheme (`mailto:x`, `https:x`) that reads as the line's URL.
const schemeLike = /:\S/;
// A word that is a ref (`e7`, `(e7)`, `f1e7`), even with its at sign left out.
const refLike = /(?:^|[^\p{L}\p{N}])(?:f\d+)?e\d+(?![\p{L}\p{N}])/u;

function headingMark(node: AriaNode): string {
  return '#'.repeat(Math.min(node.level ?? 2, 6));
}

/** The heading's one child, when it is a control named as the heading is (nothing else in it but space). */
function soleControlOf(heading: AriaNode): AriaNode | undefined {
  const children = (heading.children ?? []).filter((child) => typeof child !== 'string' || child.trim());
  const [only] = children;
  if (children.length !== 1 || typeof only !== 'object' || !isActionable(only)) return undefined;
  const title = (heading.name ?? heading.text ?? '').trim();
  return title !== '' && (only.name ?? '').trim() === title ? only : undefined;
}

/** What an option's name must not hold to go unquoted: the separator, a quote, a line break or other control. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const unquotable = /[|"\u0000-\u001f\u007f]/;

interface InlineOptions {
  readonly selected?: string;
  readonly list: string;
}

/**
 * A drop-down's options on its own line, its choice as its value: `combobox "Size" ="40" @e9 options: 40 | 41 | 42`.
 * A line per option costs twice the tokens on a long list (a country picker). Only for a plain single choice:
 * options with no ref and no state but `selected`, no groups; a name holding "|", a quote, a control character,
 * space at an end (or none at all) quotes them all.
 */
function inlineOptions(node: AriaNode, hide?: (line: string) => string): InlineOptions | undefined {
  if (node.role !== 'combobox' || !node.children?.length) return undefined;
  const names: string[] = [];
  let selected: string | undefined;
  for (const child of node.children) {
    if (typeof child === 'string') {
      if (child.trim()) return undefined;
      continue;
    }
    if (child.role !== 'option' || child.ref || child.children?.length) return undefined;
    const states = shownStates.filter((state) => state !== 'selected' && child[state] !== undefined);
    if (states.length > 0) return undefined;
    const name = child.name ?? child.text ?? '';
    if (child.selected === true) {
      if (selected !== undefined) return undefined;
      selected = name;
    }
    names.push(name);
  }
  if (names.length === 0) return undefined;
  // Decided on what the agent will see, as a name's quotes are (shownName).
  const plain = names.every((name) => {
    const shown = hide ? hide(name) : name;
    return shown.trim() === shown && shown !== '' && !unquotable.test(shown);
  });
  const list = plain ? names.join(' | ') : names.map((name) => JSON.stringify(name)).join(', ');
  return selected === undefined ? { list } : { selected, list };
}

export function isActionable(node: AriaNode): boolean {
  return actionableRoles.has(node.role) || node.cursor === 'pointer';
}

/** Text that only separates what is around it (a breadcrumb's "›", a menu's "|"): nothing to read. */
const separatorOnly = /^[›»«‹|·•∙⋅/\\>—–~\s]+$/;

/** `ref`: tabward's own ref after the text (with allRefs), left as it is. */
function pushText(lines: string[], depth: number, text: string, ref = '', marks?: LineMarks): void {
  const plain = text.trim();
  if (!plain || separatorOnly.test(plain)) return;
  const trimmed = `${plain}${ref}`;
  const last = lines.length - 1;
  const lastLine = lines[last];
  // A "-" list bullet takes the text that follows it on the same line.
  if (lastLine?.trimEnd().endsWith('-') && lastLine.trim() === '-') {
    lines[last] = `${lastLine} ${trimmed}`;
    return;
  }
  lines.push(`${' '.repeat(depth)}${trimmed}`);
  if (marks?.lines === lines && !ref) marks.texts.add(lines.length - 1);
}

/**
 * A list bullet on a line of its own takes the line that follows it: "- link ...". One that a heading follows (a
 * news page's or a search page's items) gives way to it: the heading already starts the item, and the bullet was
 * 1.6% of such a page's snapshot (bench/results.md, the eighth pass).
 */
function mergeBullets(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    const next = lines[index + 1];
    if (line.trim() === '-' && next !== undefined) {
      const item = next.trim();
      out.push(item.startsWith('#') ? `${line.slice(0, line.indexOf('-'))}${item}` : `${line} ${item}`);
      index++;
    } else {
      out.push(line);
    }
  }
  return out;
}

/**
 * A label's text printed just before the field it names (or just after its checkbox or radio button) says nothing
 * the field's own line does not. Only a line of page text alone goes, and only beside a control of exactly that
 * name: never a frame's, a dialog's or an image's line, nor a label longer or shorter than the name.
 */
function dropLabelEchoes(marks: LineMarks): string[] {
  const { lines, texts, controls } = marks;
  return lines.filter((line, index) => {
    if (!texts.has(index)) return true;
    const text = line.trim();
    return controls.get(index + 1) !== text && controls.get(index - 1) !== text;
  });
}

function renderTable(node: AriaNode, depth: number, lines: string[], context: RenderContext): void {
  const pad = ' '.repeat(depth);
  lines.push(`${pad}table${node.name ? ` ${shownName(node.name, context.hide)}` : ''}:`);
  for (const row of collectRows(node)) {
    const cells = (row.children ?? []).map((cell) => cellText(cell, context));
    lines.push(`${pad} | ${cells.join(' | ')} |`);
  }
}

function collectRows(node: AriaNode): AriaNode[] {
  const rows: AriaNode[] = [];
  for (const child of node.children ?? []) {
    if (typeof child === 'string') continue;
    if (child.role === 'row') rows.push(child);
    else rows.push(...collectRows(child));
  }
  return rows;
}

function cellText(cell: AriaNode | string, context: RenderContext): string {
  if (typeof cell === 'string') return cell.trim();
  const inner: string[] = [];
  for (const child of cell.children ?? []) renderNode(child, 0, inner, context);
  const own = inner.length > 0 ? inner.map((line) => line.trim()).join(' ') : (cell.name ?? cell.text ?? '');
  return (isActionable(cell) || context.allRefs) && cell.ref ? `${own} @${cell.ref}` : own;
}

/**
 * The frame's address and origin when its document is of another origin than the URLs around it are shown
 * against (an http or https document: an about:blank or srcdoc frame's links resolve against its parent's, and a
 * data: document's links are whole anyway): its line then shows the origin, and the URLs inside read against it.
 * Shown as whole URLs, the links of a store-locator frame were a third of what a page of frames showed above its
 * text (bench/results.md, the eighth pass).
 */
function frameBaseOf(node: AriaNode, baseUrl: string): { url: string; origin: string } | undefined {
  if (!node.frameUrl) return undefined;
  try {
    const frame = new URL(node.frameUrl);
    if (frame.protocol !== 'http:' && frame.protocol !== 'https:') return undefined;
    if (frame.origin === new URL(baseUrl).origin) return undefined;
    return { url: frame.href, origin: frame.origin };
  } catch {
    return undefined;
  }
}

export function relativeUrl(url: string, pageUrl: string): string {
  try {
    const target = new URL(url, pageUrl);
    const page = new URL(pageUrl);
    if (target.origin !== page.origin) return target.href;
    // A place in the page itself (a table of contents) is its fragment alone.
    if (target.hash && target.pathname === page.pathname && target.search === page.search) return target.hash;
    return `${target.pathname}${target.search}${target.hash}`;
  } catch {
    return url;
  }
}

/**
 * The page's strings (text, names, values, URLs) with what reads like one of tabward's refs ("@e12") given a
 * full-width at sign: so no text, heading, option or name of the page can pass itself off as a line of the snapshot
 * (`button "Keep my data" @e2` written in a paragraph, beside the real @e2 that deletes). Every "@e…" left in a
 * snapshot is tabward's own.
 */
function withoutForgedRefs(node: AriaNode | string): AriaNode | string {
  if (typeof node === 'string') return disarmed(node);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'children' && Array.isArray(value)) out[key] = value.map(withoutForgedRefs);
    // A URL is disarmed once shown (relative to the page): parsed, the sign would come out percent-encoded.
    else if (
      typeof value === 'string' &&
      key !== 'ref' &&
      key !== 'role' &&
      key !== 'url' &&
      key !== 'frameUrl'
    )
      out[key] = disarmed(value);
    else out[key] = value;
  }
  return out as AriaNode;
}

function disarmed(text: string): string {
  return text.replace(/@(?=(?:f\d+)?e\d+\b)/g, '＠');
}

/** The refs a rendered snapshot shows (tabward's own: the page's look-alikes were disarmed). */
export function refsIn(text: string): string[] {
  return [...text.matchAll(/@(e\d+)\b/g)].map((match) => match[1] ?? '');
}

function findRef(nodes: readonly (AriaNode | string)[], ref: string): AriaNode[] | undefined {
  for (const node of nodes) {
    if (typeof node === 'string') continue;
    if (node.ref === ref) return [node];
    const inner = findRef(node.children ?? [], ref);
    if (inner) return inner;
  }
  return undefined;
}

function filterByQuery(lines: readonly string[], query: string): string[] {
  const needle = query.toLowerCase();
  const kept: string[] = [];
  let lastHeading: string | undefined;
  for (const line of lines) {
    if (line.trimStart().startsWith('#')) lastHeading = line;
    if (!line.toLowerCase().includes(needle)) continue;
    if (lastHeading && lastHeading !== line && !kept.includes(lastHeading)) kept.push(lastHeading);
    kept.push(line);
  }
  return kept.length > 0 ? kept : [`(nothing matches "${query}")`];
}

/** About four characters a token: close enough to keep a budget without shipping a tokenizer. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function applyBudget(lines: readonly string[], maxTokens: number | undefined): string {
  const full = lines.join('\n');
  if (!maxTokens || estimateTokens(full) <= maxTokens) return full;
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    used += estimateTokens(`${line}\n`);
    if (used > maxTokens) break;
    kept.push(line);
  }
  const rest = lines.length - kept.length;
  return `${kept.join('\n')}\n[truncated: ${rest} more lines over maxTokens=${maxTokens}; narrow with query or ref]`;
}
