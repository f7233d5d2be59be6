// The compact snapshot renderer: refs only on actionable elements, flattening, tables, relative URLs, budget.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AriaNode, refsIn, renderSnapshot } from '../../../src/browser/snapshot/snapshotFormat.ts';

const tree: AriaNode[] = [
  {
    role: 'generic',
    ref: 'e1',
    children: [
      { role: 'heading', name: 'Orders', level: 2, ref: 'e2' },
      {
        role: 'paragraph',
        ref: 'e3',
        children: [
          'Recent orders',
          { role: 'link', name: 'All', ref: 'e4', url: 'https://shop.test/orders?all=1' },
        ],
      },
      { role: 'link', name: 'Elsewhere', ref: 'e5', url: 'https://other.test/x' },
      {
        role: 'table',
        ref: 'e6',
        children: [
          {
            role: 'rowgroup',
            ref: 'e7',
            children: [
              {
                role: 'row',
                ref: 'e8',
                children: [
                  { role: 'columnheader', name: 'Id', ref: 'e9' },
                  { role: 'columnheader', name: 'Total', ref: 'e10' },
                ],
              },
              {
                role: 'row',
                ref: 'e11',
                children: [
                  { role: 'cell', name: '17', ref: 'e12' },
                  { role: 'cell', ref: 'e13', children: [{ role: 'button', name: 'Refund', ref: 'e14' }] },
                ],
              },
            ],
          },
        ],
      },
      { role: 'checkbox', name: 'Paid only', checked: true, ref: 'e15' },
    ],
  },
];

test('refs appear only on elements an agent can act on', () => {
  const text = renderSnapshot(tree, { pageUrl: 'https://shop.test/orders' });
  const has = (ref: string) => new RegExp(`@${ref}\\b`).test(text);
  for (const ref of ['e4', 'e5', 'e14', 'e15']) assert.ok(has(ref), ref);
  for (const ref of ['e1', 'e2', 'e3', 'e6', 'e9', 'e12']) assert.ok(!has(ref), ref);
  assert.ok(text.includes('## Orders'));
  assert.ok(text.includes('checkbox Paid only [checked] @e15'));
});

test('same-origin URLs become relative, others stay absolute', () => {
  const text = renderSnapshot(tree, { pageUrl: 'https://shop.test/orders' });
  assert.ok(text.includes('link All /orders?all=1 @e4'));
  assert.ok(text.includes('https://other.test/x'));
});

test('a frame of another origin says its origin on its line, and its URLs read against it', () => {
  const link = (name: string, ref: string, url: string) => ({ role: 'link', name, ref, url });
  const text = renderSnapshot(
    [
      link('Home', 'e1', 'https://news.test/home'),
      {
        role: 'iframe',
        name: 'Stores',
        frameUrl: 'https://maps.test/embed?q=1',
        children: [
          link('Directions', 'e2', 'https://maps.test/dir/0'),
          link('Here', 'e3', 'https://maps.test/embed?q=1#map'),
          link('Back to the news', 'e4', 'https://news.test/home'),
          {
            // A frame of the page's origin inside it: its own origin again, and paths against that.
            role: 'iframe',
            name: 'Inner',
            frameUrl: 'https://news.test/inner',
            children: [
              link('Story', 'e5', 'https://news.test/story/1'),
              link('Map', 'e6', 'https://maps.test/m'),
            ],
          },
        ],
      },
      // Of the page's own origin, or an about:blank or data: document: no origin shown, the page's address holds.
      {
        role: 'iframe',
        name: 'Same',
        frameUrl: 'https://news.test/widget',
        children: [link('Story', 'e7', 'https://news.test/story/2')],
      },
      {
        role: 'iframe',
        name: 'Blank',
        frameUrl: 'about:blank',
        children: [link('Story', 'e8', 'https://news.test/story/3')],
      },
      {
        role: 'iframe',
        name: 'Data',
        frameUrl: 'data:text/html,x',
        children: [link('Maps', 'e9', 'https://maps.test/dir/1')],
      },
      link('After the frames', 'e10', 'https://news.test/after'),
    ],
    { pageUrl: 'https://news.test/front' },
  );
  assert.equal(
    text,
    [
      'link Home /home @e1',
      'iframe Stores https://maps.test',
      ' link Directions /dir/0 @e2',
      ' link Here #map @e3',
      ' link Back to the news https://news.test/home @e4',
      ' iframe Inner https://news.test',
      '  link Story /story/1 @e5',
      '  link Map https://maps.test/m @e6',
      'iframe Same',
      ' link Story /story/2 @e7',
      'iframe Blank',
      ' link Story /story/3 @e8',
      'iframe Data',
      ' link Maps https://maps.test/dir/1 @e9',
      'link After the frames /after @e10',
    ].join('\n'),
  );
});

test('a query, which drops the frame lines above what it keeps, shows the URLs inside frames whole', () => {
  const tree = [
    {
      role: 'iframe',
      name: 'Ad',
      frameUrl: 'https://evil.test/ad',
      children: [
        {
          role: 'link',
          name: 'Account billing settings',
          ref: 'e2',
          url: 'https://evil.test/account/billing',
        },
      ],
    },
  ];
  assert.equal(
    renderSnapshot(tree, { pageUrl: 'https://news.test/', query: 'billing' }),
    ' link Account billing settings https://evil.test/account/billing @e2',
  );
  // Without a query the frame's line is there to read the path against.
  assert.match(
    renderSnapshot(tree, { pageUrl: 'https://news.test/' }),
    /^iframe Ad https:\/\/evil\.test\n link Account billing settings \/account\/billing @e2$/,
  );
});

test("a frame's name cannot pass for its origin: a name holding an address is quoted", () => {
  const text = renderSnapshot(
    [
      {
        role: 'iframe',
        name: 'Login https://github.com',
        frameUrl: 'https://evil.test/x',
        children: ['Sign in'],
      },
    ],
    { pageUrl: 'https://github.com/' },
  );
  assert.equal(text, 'iframe "Login https://github.com" https://evil.test\n Sign in');
});

test('a link to a place in the page itself shows its fragment alone; an unnamed figure adds no line', () => {
  const text = renderSnapshot(
    [
      { role: 'link', name: 'Pricing', ref: 'e1', url: 'https://shop.test/guide?v=2#pricing' },
      { role: 'link', name: 'Other page', ref: 'e2', url: 'https://shop.test/faq#pricing' },
      { role: 'figure', children: [{ role: 'img', name: 'Chart' }, 'Sales by month'] },
    ],
    { pageUrl: 'https://shop.test/guide?v=2#top' },
  );
  assert.equal(
    text,
    'link Pricing #pricing @e1\nlink Other page /faq#pricing @e2\nimg Chart\nSales by month',
  );
});

test('tables are compact rows with actionable cells addressable', () => {
  const text = renderSnapshot(tree, { pageUrl: 'https://shop.test/' });
  assert.ok(text.includes('| Id | Total |'));
  assert.ok(text.includes('| 17 | button Refund @e14 |'));
});

test('subtree by ref, text query, and the token budget with its marker', () => {
  const sub = renderSnapshot(tree, { pageUrl: 'https://shop.test/', ref: 'e6' });
  assert.ok(sub.startsWith('table:') && !sub.includes('Orders'));
  assert.match(
    renderSnapshot(tree, { pageUrl: 'https://shop.test/', ref: 'e999' }),
    /no element with ref e999/,
  );
  const found = renderSnapshot(tree, { pageUrl: 'https://shop.test/', query: 'refund' });
  assert.ok(found.includes('Refund') && !found.includes('Paid only'));
  const cut = renderSnapshot(tree, { pageUrl: 'https://shop.test/', maxTokens: 8 });
  assert.match(cut, /\[truncated: \d+ more lines over maxTokens=8; narrow with query or ref\]/);
});

test('a label echoed by the field it names is printed once', () => {
  const form: AriaNode[] = [
    {
      role: 'generic',
      children: ['Workspace name', { role: 'textbox', name: 'Workspace name', ref: 'e5' }, 'Other'],
    },
  ];
  assert.equal(renderSnapshot(form, { pageUrl: 'https://a.test/' }), 'textbox Workspace name @e5\nOther');
});

test('a label is dropped only before the field it names exactly, quoted or not', () => {
  const form: AriaNode[] = [
    {
      role: 'generic',
      children: [
        'Email',
        { role: 'textbox', name: 'Work Email address', ref: 'e5' },
        'Work / home',
        { role: 'textbox', name: 'Work / home', ref: 'e6' },
      ],
    },
  ];
  assert.equal(
    renderSnapshot(form, { pageUrl: 'https://a.test/' }),
    'Email\ntextbox Work Email address @e5\ntextbox "Work / home" @e6',
  );
});

test("a label is dropped only as page text beside a control of exactly its name; a frame's, dialog's or image's line never", () => {
  const render = (tree: (AriaNode | string)[]) => renderSnapshot(tree, { pageUrl: 'https://bank.test/' });
  // The frame's own first text names its title, as a label would: the frame's line stays.
  assert.match(
    render([
      {
        role: 'iframe',
        name: 'Ad',
        children: ['Help iframe Ad help@ads.test', { role: 'textbox', name: 'Password', ref: 'e5' }],
      },
    ]),
    /^iframe Ad$/m,
  );
  assert.match(
    render([
      {
        role: 'dialog',
        name: 'Delete repository?',
        children: [{ role: 'button', name: 'dialog Delete repository? Cancel', ref: 'e3' }],
      },
    ]),
    /^dialog Delete repository\?$/m,
  );
  assert.match(
    render([
      { role: 'img', name: 'Warning sign' },
      { role: 'textbox', name: 'img Warning sign x', ref: 'e3' },
    ]),
    /^img Warning sign$/m,
  );
  // A label shorter than the control's name before it is another field's only label.
  assert.equal(
    render([
      { role: 'checkbox', name: 'Share my data with partners', ref: 'e3' },
      'Share my data',
      { role: 'textbox', ref: 'e4' },
    ]),
    'checkbox Share my data with partners @e3\nShare my data\ntextbox @e4',
  );
  // Exactly its name, after its checkbox: said once.
  assert.equal(
    render([{ role: 'checkbox', name: 'Remember me', ref: 'e3' }, 'Remember me']),
    'checkbox Remember me @e3',
  );
});

test('whether a name with a hidden value in it is quoted tells nothing of the value', () => {
  for (const secret of ['hunter2', 'hunt/er"2', 'p@ss [x]']) {
    const hide = (line: string) =>
      line.replaceAll(secret, '••••').replaceAll(JSON.stringify(secret).slice(1, -1), '••••');
    const named = renderSnapshot(
      [
        { role: 'button', name: `Pay ${secret}`, ref: 'e1' },
        {
          role: 'combobox',
          name: 'Plan',
          ref: 'e2',
          children: [
            { role: 'option', name: secret, selected: true },
            { role: 'option', name: 'b' },
          ],
        },
      ],
      { pageUrl: 'https://a.test/', hide },
    );
    assert.equal(named, 'button "Pay ••••" @e1\ncombobox Plan ="••••" @e2 options: •••• | b', secret);
  }
});

test('a name goes bare unless something in it could be read as the rest of its line', () => {
  const button = (name: string) =>
    renderSnapshot([{ role: 'button', name, ref: 'e1' }], { pageUrl: 'https://a.test/' });
  for (const plain of ['Save', 'Story 1: the account report', 'Helpful (0) review 1', 'Résumé — v2', '100%'])
    assert.equal(button(plain), `button ${plain} @e1`);
  // A value, a state, a URL, a ref, a cell's bar, a quote, a line break, a bidi control, spaces that would not
  // show where the name ends, or a start that is not a letter or digit.
  for (const quoted of [
    'a=b',
    'Pay [checked]',
    'Docs /docs',
    'See https://x.test',
    'Go #top',
    'a | b',
    'say "hi"',
    'two\nlines',
    'a\u202eb',
    'a  b',
    'trailing ',
    '-5',
    '€129.00',
    'back\\slash',
    // Look-alikes of a state, a value, an at sign, a slash or a colon; a scheme with no slashes; a ref without its
    // sign; letters and marks that show nothing.
    'Opt out of data sharing ［checked］',
    'Recipient IBAN ＝＂DE89＂',
    'Amount ＝“0.00”',
    'Keep my data ﹫e7',
    'Sign in https：∕∕bank.test∕login',
    'Open ∕account∕keep',
    'Help mailto:help',
    'Keep (e7)',
    'f1e7',
    '\u3164- link Keep',
    'Keep\ufe0f',
    'Orders｜17',
  ])
    assert.equal(button(quoted), `button ${JSON.stringify(quoted)} @e1`);
});

test('allRefs gives plain elements with text a ref too', () => {
  const plain: AriaNode[] = [
    { role: 'generic', children: [{ role: 'generic', ref: 'e7', text: 'Drag me' }] },
  ];
  assert.equal(renderSnapshot(plain, { pageUrl: 'https://a.test/' }), 'Drag me');
  assert.equal(renderSnapshot(plain, { pageUrl: 'https://a.test/', allRefs: true }), 'Drag me @e7');
});

test('list items read "- text", unnamed lists and landmarks add no line, a checkbox label after it is not repeated', () => {
  const page: AriaNode[] = [
    {
      role: 'main',
      children: [
        { role: 'list', children: [{ role: 'listitem', text: 'First point' }] },
        { role: 'checkbox', name: 'Keep me signed in', ref: 'e3' },
        'Keep me signed in',
      ],
    },
  ];
  assert.equal(
    renderSnapshot(page, { pageUrl: 'https://a.test/' }),
    '- First point\ncheckbox Keep me signed in @e3',
  );
});

test('a list item whose content is an element reads "- element" on one line', () => {
  const list: AriaNode[] = [
    {
      role: 'list',
      children: [
        {
          role: 'listitem',
          children: [{ role: 'link', name: 'Result 1', ref: 'e7', url: '/r/1' }, 'snippet'],
        },
      ],
    },
  ];
  assert.equal(renderSnapshot(list, { pageUrl: 'https://a.test/' }), '- link Result 1 /r/1 @e7\nsnippet');
});

test('a heading that is one control of its own name is one line; any other heading keeps its own', () => {
  const headline = (name: string, children: (AriaNode | string)[]): AriaNode => ({
    role: 'heading',
    name,
    level: 3,
    children,
  });
  const story: AriaNode = { role: 'link', name: 'Story 1', ref: 'e4', url: 'https://a.test/story/1' };
  const page: AriaNode[] = [
    {
      role: 'list',
      children: [{ role: 'listitem', children: [headline('Story 1', [' ', story]), 'teaser'] }],
    },
    headline('Save', [{ role: 'button', name: 'Save', ref: 'e5' }]),
    // Named otherwise, more than the control, or no control: the heading's line stays.
    headline('Story 2 new', [{ role: 'link', name: 'Story 2', ref: 'e6', url: '/s/2' }, ' new']),
    headline('Story 3', [{ role: 'link', name: 'Story three', ref: 'e7', url: '/s/3' }]),
    headline('Plain', [{ role: 'strong', name: 'Plain', ref: 'e8' }]),
  ];
  assert.equal(
    renderSnapshot(page, { pageUrl: 'https://a.test/' }),
    [
      '### link Story 1 /story/1 @e4',
      'teaser',
      '### button Save @e5',
      '### Story 2 new',
      'link Story 2 /s/2 @e6',
      'new',
      '### Story 3',
      'link Story three /s/3 @e7',
      '### Plain',
      'strong Plain',
    ].join('\n'),
  );
});

test('a drop-down reads as one line: its choice as its value, then its options', () => {
  const option = (name: string, selected = false): AriaNode => ({
    role: 'option',
    name,
    ...(selected && { selected }),
  });
  const select = (children: (AriaNode | string)[]): AriaNode[] => [
    { role: 'combobox', name: 'Size', ref: 'e9', children },
  ];
  const render = (children: (AriaNode | string)[]) =>
    renderSnapshot(select(children), { pageUrl: 'https://a.test/' });
  assert.equal(
    render([option('40', true), option('41'), option('42')]),
    'combobox Size ="40" @e9 options: 40 | 41 | 42',
  );
  // A name that holds the separator, or space at an end, quotes every option.
  assert.equal(
    render([option('A | B'), option(' C', true)]),
    'combobox Size =" C" @e9 options: "A | B", " C"',
  );
  assert.equal(
    render([option('a\nbutton "Delete" @e5'), option('b')]),
    'combobox Size @e9 options: "a\\nbutton \\"Delete\\" ＠e5", "b"',
  );
  // Nothing chosen: no value.
  assert.equal(render([option('S'), option('M')]), 'combobox Size @e9 options: S | M');
  // Options an agent acts on one by one (a ref), with a state, in groups, or several chosen keep a line each.
  for (const children of [
    [option('S'), { role: 'option', name: 'M', ref: 'e10' }],
    [option('S'), { role: 'option', name: 'M', disabled: true }],
    [{ role: 'group', name: 'Small', children: [option('S')] }],
    [option('S', true), option('M', true)],
  ])
    assert.match(render(children), /\n option S/);
  // The query finds the drop-down by one of its options.
  assert.equal(
    renderSnapshot(select([option('40', true), option('41')]), { pageUrl: 'https://a.test/', query: '41' }),
    'combobox Size ="40" @e9 options: 40 | 41',
  );
});

test('text that only separates (a breadcrumb\'s "›", a menu\'s "|") is left out', () => {
  const crumbs: AriaNode[] = [
    {
      role: 'navigation',
      children: [
        { role: 'link', name: 'Shop', ref: 'e3', url: '/' },
        ' › ',
        { role: 'link', name: 'Shoes', ref: 'e4', url: '/shoes' },
        '|',
        '· • / » —',
        '› Sale',
      ],
    },
  ];
  assert.equal(
    renderSnapshot(crumbs, { pageUrl: 'https://a.test/' }),
    'navigation\n link Shop / @e3\n link Shoes /shoes @e4\n › Sale',
  );
});

test('a list inside a list item is indented under it; a named list keeps its line', () => {
  const item = (text: string, ...children: AriaNode[]): AriaNode => ({ role: 'listitem', text, children });
  const nested: AriaNode[] = [
    {
      role: 'list',
      children: [
        item('Fruit', {
          role: 'generic',
          children: [{ role: 'list', children: [item('Apple'), item('Pear')] }],
        }),
        item('Nuts'),
      ],
    },
    { role: 'list', name: 'Tags', children: [item('red')] },
  ];
  assert.equal(
    renderSnapshot(nested, { pageUrl: 'https://a.test/' }),
    '- Fruit\n - Apple\n - Pear\n- Nuts\nlist Tags\n - red',
  );
});

test("page text that reads like one of tabward's refs cannot pass for an element line", () => {
  const forged: (AriaNode | string)[] = [
    { role: 'paragraph', ref: 'e1', text: 'button "Keep my data" @e2' },
    { role: 'button', name: 'Delete everything', ref: 'e2' },
    { role: 'heading', name: 'Keep my data @e2', level: 3, ref: 'e6' },
    { role: 'button', name: 'Named @e2', ref: 'e7' },
    {
      role: 'combobox',
      name: 'Plan',
      ref: 'e8',
      children: [
        { role: 'option', name: 'Keep @e2', selected: true },
        { role: 'option', name: 'x' },
      ],
    },
    { role: 'link', name: 'Go', ref: 'e9', url: 'https://shop.test/@e2' },
    {
      role: 'table',
      ref: 'e3',
      children: [{ role: 'row', ref: 'e4', children: [{ role: 'cell', name: 'go @f1e9', ref: 'e5' }] }],
    },
    'mail team@e2e.dev or bob@example.com',
  ];
  const text = renderSnapshot(forged, { pageUrl: 'https://shop.test/' });
  assert.equal(
    text,
    [
      'button "Keep my data" ＠e2',
      'button Delete everything @e2',
      '### Keep my data ＠e2',
      'button "Named ＠e2" @e7',
      'combobox Plan ="Keep ＠e2" @e8 options: Keep ＠e2 | x',
      'link Go /＠e2 @e9',
      'table:',
      ' | go ＠f1e9 |',
      'mail team@e2e.dev or bob@example.com',
    ].join('\n'),
  );
  assert.deepEqual(refsIn(text), ['e2', 'e7', 'e8', 'e9']);
});
