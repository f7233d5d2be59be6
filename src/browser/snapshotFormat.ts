// Renders Playwright's AI aria tree into tabward's compact snapshot: refs only on elements an agent can act
// on, wrappers without meaning flattened, tables as rows of cells, URLs relative to the page, and a token
// budget with an explicit truncation marker.

export interface AriaNode {
  readonly role: string;
  readonly name?: string;
  readonly text?: string;
  readonly ref?: string;
  readonly url?: string;
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
  readonly pageUrl: string;
  readonly allRefs: boolean;
}

const actionableRoles = new Set([
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
  const roots = options.ref ? findRef(tree, options.ref) : tree;
  if (!roots) return `(no element with ref ${options.ref}; take a new snapshot)`;
  const lines: string[] = [];
  const context = { pageUrl: options.pageUrl, allRefs: options.allRefs ?? false };
  for (const node of roots) renderNode(node, 0, lines, context);
  const deduped = mergeBullets(dropLabelEchoes(lines));
  const visible = options.hide ? deduped.map(options.hide) : deduped;
  const kept = options.query ? filterByQuery(visible, options.query) : visible;
  return applyBudget(kept, options.maxTokens);
}

function renderNode(node: AriaNode | string, depth: number, lines: string[], context: RenderContext): void {
  if (typeof node === 'string') {
    pushText(lines, depth, node);
    return;
  }
  if (node.role === 'table' || node.role === 'grid') {
    renderTable(node, depth, lines, context);
    return;
  }
  const label = describe(node, context);
  const children = node.children ?? [];
  if (label) {
    const separator = node.role === 'listitem' ? ' ' : ': ';
    lines.push(
      `${' '.repeat(depth)}${label}${node.text && !isActionable(node) ? `${separator}${node.text}` : ''}`,
    );
  } else if (node.text)
    pushText(lines, depth, context.allRefs && node.ref ? `${node.text} @${node.ref}` : node.text);
  const childDepth = label && (indentingRoles.has(node.role) || isActionable(node)) ? depth + 1 : depth;
  for (const child of children) renderNode(child, childDepth, lines, context);
}

/** One line for an element, or '' when it is a wrapper whose children say everything. */
function describe(node: AriaNode, context: RenderContext): string {
  const actionable = isActionable(node);
  if (!actionable && transparentRoles.has(node.role) && !node.name) return '';
  if (node.role === 'heading')
    return `${'#'.repeat(Math.min(node.level ?? 2, 6))} ${node.name ?? node.text ?? ''}`;
  if (node.role === 'listitem') return '-';
  const parts: string[] = [node.role === 'generic' ? 'clickable' : node.role];
  if (node.name) parts.push(JSON.stringify(node.name));
  if (actionable && node.text && node.text !== node.name) parts.push(`=${JSON.stringify(node.text)}`);
  for (const state of shownStates) {
    const value = node[state];
    if (value === true) parts.push(`[${state}]`);
    else if (typeof value === 'string' || typeof value === 'number') parts.push(`[${state}=${value}]`);
  }
  if (node.url) parts.push(relativeUrl(node.url, context.pageUrl));
  if ((actionable || context.allRefs) && node.ref) parts.push(`@${node.ref}`);
  return parts.join(' ');
}

export function isActionable(node: AriaNode): boolean {
  return actionableRoles.has(node.role) || node.cursor === 'pointer';
}

function pushText(lines: string[], depth: number, text: string): void {
  const trimmed = text.trim();
  if (!trimmed) return;
  const last = lines.length - 1;
  const lastLine = lines[last];
  // A "-" list bullet takes the text that follows it on the same line.
  if (lastLine?.trimEnd().endsWith('-') && lastLine.trim() === '-') {
    lines[last] = `${lastLine} ${trimmed}`;
    return;
  }
  lines.push(`${' '.repeat(depth)}${trimmed}`);
}

/** A label's text printed just before the field it names says nothing the field's own line does not. */
/** A list bullet on a line of its own takes the line that follows it: "- link ...". */
function mergeBullets(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    const next = lines[index + 1];
    if (line.trim() === '-' && next !== undefined) {
      out.push(`${line} ${next.trim()}`);
      index++;
    } else {
      out.push(line);
    }
  }
  return out;
}

function dropLabelEchoes(lines: readonly string[]): string[] {
  const names = (line: string | undefined) => (line?.includes('@') ? line : '');
  return lines.filter((line, index) => {
    const text = line.trim();
    if (!text || text.includes('"')) return true;
    // A label before its field, or after its checkbox or radio button.
    const echo = `${JSON.stringify(text)} `;
    return !(names(lines[index + 1]).includes(echo) || names(lines[index - 1]).includes(echo));
  });
}

function renderTable(node: AriaNode, depth: number, lines: string[], context: RenderContext): void {
  const pad = ' '.repeat(depth);
  lines.push(`${pad}table${node.name ? ` ${JSON.stringify(node.name)}` : ''}:`);
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

function relativeUrl(url: string, pageUrl: string): string {
  try {
    const target = new URL(url, pageUrl);
    const page = new URL(pageUrl);
    if (target.origin !== page.origin) return target.href;
    return `${target.pathname}${target.search}${target.hash}`;
  } catch {
    return url;
  }
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
