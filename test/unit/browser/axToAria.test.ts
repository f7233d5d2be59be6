// Chromium's accessibility tree turned into the aria tree tabward renders: roles, text runs, values, password
// bullets, drop-downs, labels and what is hidden. The nodes are written as Accessibility.getFullAXTree gives them
// (shapes measured on Chromium 156); the e2e snapshot tests read real pages.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AxNode, axToAria } from '../../../src/browser/snapshot/axToAria.ts';
import type { AriaNode } from '../../../src/browser/snapshot/snapshotFormat.ts';

interface Spec {
  readonly role: string;
  readonly internal?: boolean;
  readonly name?: string;
  readonly value?: unknown;
  readonly ignored?: boolean;
  readonly id?: number;
  readonly props?: Record<string, unknown>;
  readonly children?: readonly Spec[];
}

/** Flattens a nested spec into the node list CDP sends (ids, parent and child ids, backend node ids). */
function axNodes(root: Spec): AxNode[] {
  const nodes: AxNode[] = [];
  let next = 1;
  const add = (spec: Spec, parentId?: string): string => {
    const nodeId = String(next++);
    const node: { -readonly [key in keyof AxNode]: AxNode[key] } = {
      nodeId,
      ignored: spec.ignored ?? false,
      role: { type: spec.internal ? 'internalRole' : 'role', value: spec.role },
      ...(spec.name !== undefined ? { name: { type: 'computedString', value: spec.name } } : {}),
      ...(spec.value !== undefined ? { value: { type: 'string', value: spec.value } } : {}),
      ...(parentId ? { parentId } : {}),
      ...(spec.id !== undefined ? { backendDOMNodeId: spec.id } : {}),
      properties: Object.entries(spec.props ?? {}).map(([name, value]) => ({ name, value: { value } })),
    };
    nodes.push(node);
    node.childIds = (spec.children ?? []).map((child) => add(child, nodeId));
    return nodeId;
  };
  add(root);
  return nodes;
}

const text = (value: string): Spec => ({ role: 'StaticText', internal: true, name: value });
const page = (...children: Spec[]): Spec => ({ role: 'RootWebArea', internal: true, id: 1, children });

function convert(root: Spec, pointer: number[] = []): (AriaNode | string)[] {
  return axToAria(axNodes(root), {
    frameKey: 'F',
    frameContent: (id) =>
      id === 99 ? { children: ['inside the frame'], url: 'https://frame.example/x' } : undefined,
    pointer: new Set(pointer),
  });
}

test('text runs of one line join; boxes of their own stay apart', () => {
  const tree = convert(
    page({
      role: 'paragraph',
      id: 2,
      children: [text('Hello '), text('big'), text(' '), text(' world\u00ad ')],
    }),
  );
  assert.deepEqual(tree, [{ role: 'paragraph', ref: 'F/2', text: 'Hello big world' }]);
  const apart = convert(
    page(
      { role: 'none', ignored: true, children: [text('first')] },
      { role: 'none', ignored: true, children: [text('second')] },
      text('third '),
      { role: 'LineBreak', internal: true, name: '\n' },
      text('fourth'),
    ),
  );
  assert.deepEqual(apart, ['first', 'second', 'third fourth']);
});

test("Chromium's internal roles become ARIA roles or plain boxes; unnamed forms and regions are boxes", () => {
  const tree = convert(
    page(
      { role: 'image', name: 'Logo', id: 3, props: { url: 'https://x.test/logo.png' } },
      { role: 'DisclosureTriangle', internal: true, name: 'More', id: 4, props: { expanded: true } },
      { role: 'DescriptionList', internal: true, id: 5, children: [{ role: 'term', name: 'Term', id: 6 }] },
      { role: 'form', id: 7, children: [text('unnamed')] },
      { role: 'form', name: 'Search', id: 8 },
      { role: 'Date', internal: true, name: 'Due', value: '2026-12-01', id: 9 },
    ),
  );
  assert.deepEqual(tree, [
    // An image's source is not a place to go: no url.
    { role: 'img', name: 'Logo', ref: 'F/3' },
    { role: 'button', name: 'More', ref: 'F/4', expanded: true },
    { role: 'generic', ref: 'F/5', children: [{ role: 'term', name: 'Term', ref: 'F/6' }] },
    { role: 'generic', ref: 'F/7', text: 'unnamed' },
    { role: 'form', name: 'Search', ref: 'F/8' },
    { role: 'textbox', name: 'Due', ref: 'F/9', text: '2026-12-01' },
  ]);
});

test("a field's value is its text; a password's bullets never tell its length", () => {
  const tree = convert(
    page(
      {
        role: 'textbox',
        name: 'Name',
        value: 'Alice',
        id: 2,
        children: [{ role: 'generic', id: 3, children: [text('Alice')] }],
      },
      { role: 'textbox', name: 'Password', value: '•••••••••••', id: 4 },
      // A name taken from a password field (aria-labelledby) has Chromium's bullets in it.
      { role: 'button', name: 'Named by ••••••••••••••', id: 5, children: [text('b')] },
      { role: 'slider', name: 'Volume', value: 5, id: 6, props: { valuetext: 'five' } },
    ),
  );
  assert.deepEqual(tree, [
    { role: 'textbox', name: 'Name', ref: 'F/2', text: 'Alice' },
    { role: 'textbox', name: 'Password', ref: 'F/4', text: '••••' },
    { role: 'button', name: 'Named by ••••', ref: 'F/5', text: 'b' },
    { role: 'slider', name: 'Volume', ref: 'F/6', text: 'five' },
  ]);
});

test('a drop-down lists its options without refs, its choice marked; a name is not repeated as its text', () => {
  const tree = convert(
    page({
      role: 'combobox',
      name: 'Size',
      value: '41',
      id: 2,
      props: { expanded: false },
      children: [
        {
          role: 'MenuListPopup',
          internal: true,
          children: [
            { role: 'option', name: '40', id: 3, props: { selected: false } },
            { role: 'option', name: '41', id: 4, props: { selected: true } },
          ],
        },
      ],
    }),
  );
  assert.deepEqual(tree, [
    {
      role: 'combobox',
      name: 'Size',
      ref: 'F/2',
      children: [
        { role: 'option', name: '40' },
        { role: 'option', name: '41', selected: true },
      ],
    },
  ]);
  const button = convert(page({ role: 'button', name: 'Save', id: 2, children: [text('Save')] }));
  assert.deepEqual(button, [{ role: 'button', name: 'Save', ref: 'F/2' }]);
});

test('states as the renderer shows them; a heading keeps its level, a list item does not', () => {
  const tree = convert(
    page(
      { role: 'checkbox', name: 'A', id: 2, props: { checked: 'true', invalid: 'false' } },
      { role: 'checkbox', name: 'B', id: 3, props: { checked: 'false' } },
      { role: 'checkbox', name: 'C', id: 4, props: { checked: 'mixed' } },
      { role: 'button', name: 'D', id: 5, props: { pressed: 'true', disabled: true } },
      { role: 'heading', name: 'E', id: 6, props: { level: 3 } },
      {
        role: 'listitem',
        id: 7,
        props: { level: 1 },
        children: [{ role: 'ListMarker', internal: true, name: '• ' }, text('item')],
      },
      { role: 'link', name: 'F', id: 8, props: { url: 'https://x.test/f' } },
    ),
  );
  assert.deepEqual(tree, [
    { role: 'checkbox', name: 'A', ref: 'F/2', checked: true },
    { role: 'checkbox', name: 'B', ref: 'F/3' },
    { role: 'checkbox', name: 'C', ref: 'F/4', checked: 'mixed' },
    { role: 'button', name: 'D', ref: 'F/5', pressed: true, disabled: true },
    { role: 'heading', name: 'E', ref: 'F/6', level: 3 },
    { role: 'listitem', ref: 'F/7', text: 'item' },
    { role: 'link', name: 'F', ref: 'F/8', url: 'https://x.test/f' },
  ]);
});

test('what Chromium ignores (hidden, aria-hidden) shows nothing, however deep', () => {
  const tree = convert(
    page(text('shown'), {
      role: 'generic',
      ignored: true,
      children: [
        { role: 'StaticText', internal: true, name: 'hidden text', ignored: true },
        { role: 'button', name: 'hidden button', ignored: true, id: 3 },
        {
          role: 'none',
          ignored: true,
          children: [{ role: 'StaticText', internal: true, name: 'deeper', ignored: true }],
        },
      ],
    }),
  );
  assert.deepEqual(tree, ['shown']);
});

test("a legend that only repeats its group's name is left out; another one is kept", () => {
  const tree = convert(
    page(
      {
        role: 'group',
        name: 'Profile',
        id: 2,
        children: [{ role: 'Legend', internal: true, id: 3, children: [text('Profile')] }, text('inside')],
      },
      {
        role: 'group',
        name: 'Named otherwise',
        id: 4,
        children: [{ role: 'Legend', internal: true, id: 5, children: [text('Legend text')] }],
      },
    ),
  );
  assert.deepEqual(tree, [
    { role: 'group', name: 'Profile', ref: 'F/2', text: 'inside' },
    { role: 'group', name: 'Named otherwise', ref: 'F/4', text: 'Legend text' },
  ]);
});

test("an iframe holds its document's tree; a widget with a pointer cursor is marked", () => {
  const tree = convert(
    page(
      { role: 'Iframe', internal: true, name: 'Payment', id: 99 },
      { role: 'Iframe', internal: true, id: 98 },
      { role: 'generic', id: 7, children: [text('Open menu')] },
    ),
    [7],
  );
  assert.deepEqual(tree, [
    {
      role: 'iframe',
      name: 'Payment',
      ref: 'F/99',
      frameUrl: 'https://frame.example/x',
      text: 'inside the frame',
    },
    { role: 'iframe', ref: 'F/98' },
    { role: 'generic', ref: 'F/7', cursor: 'pointer', text: 'Open menu' },
  ]);
});

test('a tree deeper than any page is cut, not allowed to exhaust the stack', () => {
  const depth = 20_000;
  const nodes: AxNode[] = Array.from({ length: depth }, (_, index) => ({
    nodeId: String(index),
    ignored: false,
    role: { type: index === 0 ? 'internalRole' : 'role', value: index === 0 ? 'RootWebArea' : 'generic' },
    ...(index > 0 ? { parentId: String(index - 1) } : {}),
    backendDOMNodeId: index + 1,
    childIds: [String(index + 1)],
  }));
  nodes.push({
    nodeId: String(depth),
    ignored: false,
    role: { value: 'StaticText' },
    name: { value: 'bottom' },
  });
  const tree = axToAria(nodes, { frameKey: 'F', frameContent: () => undefined, pointer: new Set() });
  assert.equal(tree.length, 1);
  const shown = JSON.stringify(tree);
  assert.ok(!shown.includes('bottom'));
  assert.match(shown, /nested deeper than 400 levels: not shown/);
});

test('bold, italic and highlighted words stay in their line of text', () => {
  const tree = convert(
    page({
      role: 'paragraph',
      id: 2,
      children: [
        text('Pay '),
        { role: 'strong', id: 3, children: [text('before Friday')] },
        text(', or '),
        { role: 'emphasis', id: 4, children: [text('call us')] },
        text('.'),
      ],
    }),
  );
  assert.deepEqual(tree, [{ role: 'paragraph', ref: 'F/2', text: 'Pay before Friday, or call us.' }]);
});
