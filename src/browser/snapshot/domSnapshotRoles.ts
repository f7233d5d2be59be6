// The role an element of a DOM snapshot has in Chromium's accessibility tree (domSnapshotTree.ts builds the tree):
// an author's role attribute (its first role Chromium knows), else the element's implicit role as HTML-AAM gives it
// and Chromium 156 names it, else a plain box (generic) or nothing (an inline element, part of its line).

import type { CapturedNodes } from './domSnapshotNodes.ts';

const sectioning = new Set(['ARTICLE', 'ASIDE', 'MAIN', 'NAV', 'SECTION']);
const sectioningRoles = new Set(['article', 'complementary', 'main', 'navigation']);
const tagRoles: Record<string, string> = {
  ARTICLE: 'article',
  ASIDE: 'complementary',
  NAV: 'navigation',
  MAIN: 'main',
  SEARCH: 'search',
  FORM: 'form',
  BUTTON: 'button',
  SUMMARY: 'DisclosureTriangle',
  DETAILS: 'group',
  FIELDSET: 'group',
  OPTGROUP: 'group',
  LEGEND: 'Legend',
  P: 'paragraph',
  BLOCKQUOTE: 'blockquote',
  HR: 'separator',
  UL: 'list',
  OL: 'list',
  MENU: 'list',
  LI: 'listitem',
  TABLE: 'table',
  CAPTION: 'Caption',
  THEAD: 'rowgroup',
  TBODY: 'rowgroup',
  TFOOT: 'rowgroup',
  TR: 'row',
  TD: 'cell',
  FIGURE: 'figure',
  DL: 'list',
  DT: 'term',
  DD: 'definition',
  TEXTAREA: 'textbox',
  OPTION: 'option',
  PROGRESS: 'progressbar',
  METER: 'meter',
  OUTPUT: 'status',
  DIALOG: 'dialog',
  IFRAME: 'Iframe',
  FRAME: 'Iframe',
  BR: 'LineBreak',
  STRONG: 'strong',
  B: 'strong',
  EM: 'emphasis',
  I: 'emphasis',
  MARK: 'mark',
  TIME: 'time',
  CODE: 'code',
  SUB: 'subscript',
  SUP: 'superscript',
};
const inputRoles: Record<string, string> = {
  button: 'button',
  submit: 'button',
  reset: 'button',
  image: 'button',
  file: 'button',
  color: 'button',
  checkbox: 'checkbox',
  radio: 'radio',
  range: 'slider',
  number: 'spinbutton',
  search: 'searchbox',
};
export const authorRoles = new Set(
  (
    'alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox ' +
    'complementary contentinfo definition deletion dialog directory document emphasis feed figure form generic grid ' +
    'gridcell group heading img insertion link list listbox listitem log main mark marquee math menu menubar menuitem ' +
    'menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation progressbar radio ' +
    'radiogroup region row rowgroup rowheader scrollbar search searchbox sectionfooter sectionheader separator slider spinbutton status strong ' +
    'subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem'
  ).split(' '),
);

/** The element's role as Chromium's tree names it; undefined for a box that is not in the tree (inline, unnamed). */
export function roleOf(dom: CapturedNodes, index: number): string | undefined {
  const tag = dom.tag(index);
  // The first of its roles that Chromium knows (role="bogus button" is a button). None and presentation do not
  // apply to what can take the focus (a control stays one).
  for (const token of (dom.attribute(index, 'role') ?? '').toLowerCase().split(/\s+/)) {
    if (token === 'none' || token === 'presentation') {
      if (focusable(dom, index, tag)) continue;
      return undefined;
    }
    if (token === 'img') return 'image';
    if (authorRoles.has(token)) return token;
  }
  const implicit = implicitRole(dom, index, tag);
  if (implicit) return implicit;
  // Any other element: a box of its own keeps the text on either side apart; an inline one is part of its line,
  // unless it has a title (a tooltip: Chromium gives it a node and a name) or names another (aria-labelledby).
  if (
    dom.display(index) !== 'inline' ||
    dom.hasAttribute(index, 'title') ||
    dom.hasAttribute(index, 'tabindex') ||
    dom.attribute(index, 'aria-label')?.trim() ||
    dom.isReferenced(index)
  )
    return 'generic';
  return undefined;
}

const focusableTags = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'SUMMARY', 'IFRAME']);

/** Can take the focus: a control, a link, an element with a tabindex or one the user can edit. */
function focusable(dom: CapturedNodes, index: number, tag: string): boolean {
  return (
    focusableTags.has(tag) ||
    ((tag === 'A' || tag === 'AREA') && dom.hasAttribute(index, 'href')) ||
    dom.hasAttribute(index, 'tabindex') ||
    (dom.attribute(index, 'contenteditable') ?? 'false').toLowerCase() !== 'false'
  );
}

function implicitRole(dom: CapturedNodes, index: number, tag: string): string | undefined {
  if (/^H[1-6]$/.test(tag)) return 'heading';
  if (tag === 'A' || tag === 'AREA') return dom.hasAttribute(index, 'href') ? 'link' : undefined;
  if (tag === 'INPUT') {
    const type = (dom.attribute(index, 'type') ?? 'text').toLowerCase();
    if (type === 'hidden') return undefined;
    if (dom.hasAttribute(index, 'list') && !inputRoles[type]) return 'combobox';
    return inputRoles[type] ?? 'textbox';
  }
  if (tag === 'SELECT') {
    const size = Number(dom.attribute(index, 'size') ?? '0');
    return dom.hasAttribute(index, 'multiple') || size > 1 ? 'listbox' : 'combobox';
  }
  if (tag === 'IMG') {
    const alt = dom.attribute(index, 'alt');
    return alt === '' && !dom.hasAttribute(index, 'title') ? undefined : 'image';
  }
  // A drawing is an image (named by aria-label or its own <title>).
  if (tag === 'SVG') return 'image';
  if (tag === 'TH') return dom.attribute(index, 'scope') === 'row' ? 'rowheader' : 'columnheader';
  if (tag === 'SECTION')
    return dom.hasAttribute(index, 'aria-label') || dom.hasAttribute(index, 'aria-labelledby')
      ? 'region'
      : 'generic';
  if (tag === 'HEADER' || tag === 'FOOTER') {
    // Inside an article, aside, main, nav or section (or an element given one of the first four's roles): that
    // section's header or footer (ARIA 1.3, as Chromium 156 measured: role=region does not count).
    for (let up = dom.parent(index); up > 0; up = dom.parent(up))
      if (
        sectioning.has(dom.tag(up)) ||
        sectioningRoles.has((dom.attribute(up, 'role') ?? '').trim().toLowerCase())
      )
        return tag === 'HEADER' ? 'sectionheader' : 'sectionfooter';
    return tag === 'HEADER' ? 'banner' : 'contentinfo';
  }
  return tagRoles[tag];
}

/** The (lowercase) names of the HTML elements this file gives a role. */
export function htmlNamesWithRoles(): string[] {
  const implicit = [
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'a',
    'area',
    'input',
    'select',
    'img',
    'th',
    'section',
    'header',
    'footer',
    'svg',
  ];
  return [...new Set([...Object.keys(tagRoles).map((tag) => tag.toLowerCase()), ...implicit])];
}
