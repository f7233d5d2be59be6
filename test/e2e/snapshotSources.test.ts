// The two sources of a snapshot's tree agree: Chromium's accessibility tree and the one tabward builds from the DOM
// snapshot for documents past a size (src/browser/snapshot/domSnapshotTree.ts). Each page below holds constructs
// whose role, name, state, value or visibility the DOM snapshot's tree must compute as Chromium does; each is read
// both ways in real Chromium and rendered as take_snapshot renders it (refs aside: their numbers differ by design).
// A page the DOM snapshot cannot stand for (ids inside a shadow root, a modal, ...) is read from Chromium's tree: the
// same text either way.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { findChrome } from '../../src/browser/findChrome.ts';
import { readTab } from '../../src/browser/snapshot/axRead.ts';
import type { AriaNode } from '../../src/browser/snapshot/snapshotFormat.ts';
import { renderSnapshot } from '../../src/browser/snapshot/snapshotFormat.ts';
import { type Fixture, startFixture } from '../helpers/fixtureServer.ts';

const pages: Record<string, string> = {
  names: `<h1>Names</h1>
    <label for="a">First name</label><input id="a" value="Ada">
    <label>Wrapped <input name="w" value="x"></label>
    <span id="l1">Labelled</span><span id="l2">twice</span><input aria-labelledby="l1 l2">
    <input aria-label="Search the site" type="search">
    <input placeholder="Only a placeholder">
    <input title="Only a title">
    <textarea aria-label="Notes">Some notes</textarea>
    <button>Plain</button><button aria-label="Labelled button">X</button><button title="Titled"></button>
    <input type="submit"><input type="reset"><input type="button" value="Valued">
    <a href="/one">One <img alt="with image" src="data:,"></a>
    <a href="https://other.example/x">Away</a><a>No href</a>
    <a href="#part">In page</a>
    <img alt="A chart" src="data:,"><img alt="" src="data:,"><img src="data:," title="Titled image">
    <span role="img" aria-label="5 stars">*****</span>
    <svg aria-hidden="true"><path d="M0 0h1v1z"/></svg>
    <abbr title="HyperText">HTML</abbr> text`,
  states: `<h2>States</h2>
    <input type="checkbox" id="c1" checked><label for="c1">Checked box</label>
    <input type="checkbox" id="c2"><label for="c2">Unchecked box</label>
    <label><input type="radio" name="r" checked> Radio on</label><label><input type="radio" name="r"> Radio off</label>
    <div role="checkbox" aria-checked="mixed" tabindex="0">Mixed</div>
    <div role="switch" aria-checked="true" tabindex="0">Wifi</div>
    <button aria-pressed="true">Bold</button><button aria-expanded="true">Menu</button><button disabled>Off</button>
    <button aria-disabled="true">Aria off</button>
    <div role="tablist"><div role="tab" aria-selected="true">First tab</div><div role="tab">Second tab</div></div>
    <div role="tabpanel">Panel text</div>
    <select aria-label="Size"><option>S</option><option selected>M</option><option>L</option></select>
    <select aria-label="Plain"><option>Only</option><option>Two</option></select>
    <select multiple aria-label="Many"><option selected>A</option><option>B</option></select>
    <input type="number" aria-label="Qty" value="3"><input type="range" aria-label="Volume" value="40">
    <input type="password" aria-label="Secret" value="hunter22"><input type="email" aria-label="Mail" value="a@b.c">
    <fieldset><legend>Shipping</legend><label><input type="radio" name="s"> Fast</label></fieldset>
    <details open><summary>Opened</summary><p>Shown detail</p></details>
    <details><summary>Closed</summary><p>Hidden detail</p></details>`,
  hidden: `<h2>Hidden</h2>
    <p>Shown</p><p style="display:none">display none</p><p hidden>hidden attr</p>
    <p style="visibility:hidden">visibility hidden <span style="visibility:visible">but this is visible</span></p>
    <div aria-hidden="true">aria hidden <button>Hidden button</button></div>
    <div inert>inert text</div>
    <div hidden="until-found">until found</div>
    <div style="content-visibility:hidden">content hidden</div>
    <div style="display:contents"><button>In contents</button></div>
    <div style="opacity:0">transparent text</div>
    <div style="position:absolute;left:-9999px">off screen</div>
    <script>document.write('')</script><noscript>no script</noscript><template><p>template</p></template>`,
  structure: `<header><a href="/">Home</a></header>
    <nav aria-label="Main"><ul><li><a href="/a">A</a></li><li><a href="/b">B</a></li></ul></nav>
    <main><article><header>Article header</header><h2>Title</h2>
    <p>Text with <b>bold</b>, <em>emphasis</em>, <code>code</code>, <mark>mark</mark> and <time>today</time> inline.</p>
    <p>Line one<br>line two</p>
    <ol><li>First <ul><li>Nested</li></ul></li><li>Second</li></ol>
    <dl><dt>Term</dt><dd>Definition</dd></dl>
    <blockquote>Quoted</blockquote><pre>pre  formatted</pre><hr>
    <figure><img alt="Fig" src="data:,"><figcaption>Caption words</figcaption></figure>
    <table><caption>Orders</caption><thead><tr><th>Id</th><th>Total</th></tr></thead>
    <tbody><tr><th scope="row">1</th><td>€5</td></tr><tr><td>2</td><td><a href="/o/2">€7</a></td></tr></tbody></table>
    <section aria-label="Named section"><p>In a region</p></section><section><p>Unnamed section</p></section>
    <form aria-label="Signup"><input aria-label="Email"></form><form><input aria-label="Other"></form>
    </article><aside>Aside</aside></main><footer>Footer text</footer>
    <p style="text-transform:uppercase">shouted words</p>
    <p class="before">after the generated text</p><style>.before::before{content:"Note: "}</style>
    <div role="presentation"><p>In presentation</p></div>
    <div role="dialog" aria-label="Dialog"><p>Dialog text</p></div>
    <progress value="3" max="10" aria-label="Progress"></progress><meter value="0.5" aria-label="Meter"></meter>
    <div onclick="void 0" style="cursor:pointer">Clickable div</div>
    <p>Soft&shy;hyphen and zero&#8203;width</p>`,
  widgets: `<div role="button" tabindex="0">Div button</div><span role="link" tabindex="0">Span link</span>
    <div role="heading" aria-level="3">Aria heading</div>
    <div role="combobox" aria-expanded="true" aria-label="Pick" tabindex="0"></div>
    <ul role="listbox" aria-label="Fruit"><li role="option" aria-selected="true">Apple</li><li role="option">Pear</li></ul>
    <ul role="menu"><li role="menuitem">Open</li><li role="menuitemcheckbox" aria-checked="true">Wrap</li></ul>
    <ul role="tree"><li role="treeitem" aria-expanded="false">Folder</li></ul>
    <div role="grid"><div role="row"><div role="gridcell">G1</div><div role="gridcell">G2</div></div></div>
    <div role="list"><div role="listitem">Div item</div></div>
    <span role="none" tabindex="0">Focusable none</span>
    <div contenteditable="true">Editable text</div>
    <input list="dl" aria-label="With list"><datalist id="dl"><option value="One"></option></datalist>
    <input type="date" aria-label="When" value="2026-12-03"><input type="file" aria-label="Upload">
    <input type="color" aria-label="Colour" value="#ff0000"><input type="checkbox" aria-label="Agree">
    <label>Alone label</label><output>Out 42</output>
    <svg role="img" aria-label="Logo"><title>Logo title</title></svg>
    <svg width="10" height="10"><circle r="4"/></svg>
    <canvas aria-label="Drawing"></canvas>
    <a href="/card"><div><h4>Card title</h4><p>Card text</p></div></a>
    <button><svg aria-hidden="true"></svg><span>Icon</span> <span>label</span></button>
    <button><img alt="Trash"></button>
    <div aria-label="Named div">Named div text</div>
    <p aria-hidden="false">Not hidden</p>
    <nav><a href="/x" aria-current="page">Current</a></nav>
    <div role="alert">Alert text</div><div role="status">Status text</div>
    <div role="toolbar" aria-label="Tools"><button>Cut</button></div>
    <div role="radiogroup" aria-label="Choice"><div role="radio" aria-checked="true" tabindex="0">Yes</div></div>
    <div role="slider" aria-label="Level" aria-valuenow="5" aria-valuetext="five" tabindex="0"></div>
    <div role="spinbutton" aria-label="Count" aria-valuenow="2" tabindex="0">2</div>
    <div role="textbox" aria-label="Aria box" tabindex="0">typed</div>
    <a href="/t" title="Link title"></a>
    <p>Mixed <a href="/in">inline link</a> text <button>inline button</button> end.</p>`,
  // Frames of the page's own process share one DOM capture (documentReads.ts SessionCaptures): two pages above as
  // such frames, read from it as from Chromium's trees.
  frames: `<p>Main text</p><iframe title="Same" srcdoc="<p>Inside a frame</p><button>Framed</button>"></iframe>
    <iframe title="Other site" src="http://frame.test:PORT/inner"></iframe>
    <iframe title="Names" src="/names"></iframe><iframe title="States" src="/states"></iframe>`,
  // Attacks of a hostile page on the DOM snapshot's reading. An attribute set with a namespace of the page's own
  // (setAttributeNS) carries the same name in the snapshot as the real one: whichever comes first was read, and a
  // link showed another address than it goes to, a password field its value in clear, hidden text, another name.
  spoofedAttributes: `<a id="l">Pay</a><div id="d">hidden from the tree</div><button id="b">Real</button>
    <script>
    l.setAttributeNS('urn:x', 'href', 'https://good.example/'); l.setAttributeNS(null, 'href', 'https://evil.example/');
    d.setAttributeNS('urn:x', 'aria-hidden', 'false'); d.setAttributeNS(null, 'aria-hidden', 'true');
    b.setAttributeNS('urn:x', 'aria-label', 'Cancel');
    const i = document.createElement('input');
    i.setAttributeNS('urn:x', 'type', 'text'); i.setAttributeNS(null, 'type', 'password');
    i.value = 'spoofed-pass'; i.setAttribute('aria-label', 'Password'); document.body.append(i);
    </script>`,
  // A label names the control its for names (the first element of that id) or, without a for, the first control
  // inside it: not every field inside it, nor a field of a duplicated id.
  labelTargets: `<label for="other">Email <input id="inner" value="v1"></label><input id="other">
    <input id="dup" value="first"><input id="dup" value="second"><label for="dup">Dup label</label>
    <label>Username <input value="typed-user"> <input aria-label=""></label>`,
  // ARIA's true is any case, and a role attribute's first role Chromium knows is the role.
  // Found by an attack review (the thirteenth pass of bench/results.md), once small pages were read this way too.
  ariaSpaces: `<h2>Spaces</h2><p>Shown</p><div aria-hidden=" true ">Spaced hidden <button>Spaced btn</button></div><button aria-disabled=" true ">Spaced disabled</button>`,
  bodyHidden: `<body aria-hidden="true"><h1>Welcome</h1><p>Your basket</p><button>Pay now</button></body>`,
  canvasFallback: `<h2>Canvas</h2><canvas width="10" height="10"><button>Canvas fallback</button></canvas><p>after the canvas</p>`,
  detailsWithoutSummary: `<h2>Details</h2><details><p>Folded</p></details><p>after the details</p>`,
  emptySubmit: `<h2>Buttons</h2><input type="submit" value=""><input type="reset" value="  "><input type="submit">`,
  ariaTokens: `<div aria-hidden="TRUE">upper aria hidden</div><button aria-disabled="True">upper disabled</button>
    <a href="/x" role="bogus button">Multi role</a><div role="checkbox" aria-checked="TRUE" tabindex="0">Upper checked</div>`,
  // An option shows its label attribute when it has one.
  optionLabels: `<h2>Options</h2><p>Pick one</p><select aria-label="S"><option label="Shown label">Text content</option><option>B</option></select>`,
  // Text a labelledby target hides is not in the name when the target itself is shown.
  hiddenInNames: `<h2>Hidden in names</h2><span id="lb">Pay <span hidden>to attacker</span><span style="display:none">now</span><span aria-hidden="true">!</span></span>
    <button aria-labelledby="lb">b</button><span id="gone" hidden>Hidden <b>whole</b></span><button aria-labelledby="gone">c</button>`,
  // An XHTML document: CDATA sections are text, processing instructions and comments are not.
  xhtml: `<?xml version="1.0"?><?pi stuff?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>xhtml</title></head>
    <body><p><![CDATA[cdata text]]> and text</p><!-- comment --><input type="password" value="xh-pass" aria-label="P"/>
    <a href="/x">link</a></body></html>`,
  // What Chromium's tree shows here depends on what the DOM snapshot does not carry: read from Chromium's tree.
  // An element of another namespace, or an HTML one named in capitals, is not the control its name says.
  namespacedDecoys: `<h2>Decoys</h2><p>Below, nothing is a control</p><div id="box"></div>
    <script>
    for (const [ns, name, text] of [['urn:x', 'button', 'Fake button'], ['urn:x', 'a', 'Fake link'], ['http://www.w3.org/1999/xhtml', 'BUTTON', 'Capital button']]) {
      const el = document.createElementNS(ns, name); el.textContent = text; el.setAttribute('href', '/fake'); box.append(el);
    }
    </script>`,
  // A modal dialog leaves the rest of the page out of Chromium's tree.
  modal: `<h2>Behind the dialog</h2><button>Behind</button><dialog id="m"><p>In the dialog</p><button>Close</button></dialog>
    <script>m.showModal()</script>`,
  // aria-owns shows a node under another parent (and in its name).
  ariaOwns: `<h2>Owns</h2><p>Some text</p><button aria-owns="o">Cancel</button><span id="o"> and pay</span>`,
  // Generated text of a labelledby target is in the name; an optgroup is a group of its options.
  generatedAndGroups: `<h2>Generated</h2><style>#t::before{content:"Confirm "}</style><span id="t">Cancel</span>
    <button aria-labelledby="t">x</button>
    <select aria-label="Grouped"><optgroup label="First"><option>One</option></optgroup><option>Two</option></select>`,
  // A review's cases: disabled inherited (a disabled fieldset, aria-disabled above, a disabled optgroup or option).
  disabledInherited: `<h2>Disabled</h2><fieldset disabled><legend>Legend <button>In the legend</button></legend>
    <button>In disabled fieldset</button><input aria-label="Field in disabled"></fieldset>
    <div aria-disabled="true"><button>Child of aria disabled</button></div>
    <select multiple aria-label="G"><optgroup label="Grp" disabled><option>Opt in disabled group</option></optgroup><option disabled>Disabled opt</option></select>`,
  // role="none" on what can take the focus is ignored; a focusable span is a box of its own; native checkboxes
  // ignore aria-checked, and an indeterminate one is mixed.
  focusAndChecks: `<h2>Focus</h2><button role="presentation">Presentational button</button><a href="/p" role="none">None link</a>
    <input role="none" aria-label="None input"><p>Text <span tabindex="0">Focusable span</span> more</p>
    <input type="checkbox" aria-checked="true" aria-label="Native unchecked"><input type="checkbox" aria-label="Indeterminate" id="ind">
    <script>ind.indeterminate = true</script>`,
  // A header in role=main is that section's; a heading's aria-level that is not a level; a control's value inside
  // a name taken from content; MathML holding HTML names is no control.
  levelsAndNames: `<h2>Levels</h2><div role="main"><header>In role main</header></div>
    <div role="region" aria-label="R"><footer>In region</footer></div>
    <h1 aria-level="x">Bad level h1</h1><h4 aria-level="0">Zero level h4</h4>
    <button>Pay <select><option>EUR</option></select></button><a href="/q">Qty <input value="3"> items</a>
    <math><button href="/fake">Math fake button</button><a href="/fake">Math fake link</a></math>`,
  // Shadow roots, read in the flat tree: an open one with no slot (its host's light children not shown), a closed
  // one with a slot between its own nodes, nested hosts.
  shadowFlat: `<h2>Shadow</h2><p>before</p><rel-time id="a">light fallback</rel-time><p>middle</p>
    <div id="b"><span>slotted light</span><button>Slotted button</button></div><p>after</p><div id="c"></div>
    <script>
    a.attachShadow({ mode: 'open' }).innerHTML = '<b>3 days ago</b>';
    b.attachShadow({ mode: 'closed' }).innerHTML = '<i>pre</i><slot></slot><button>Own button</button><i>post</i>';
    const outer = c.attachShadow({ mode: 'open' }); outer.innerHTML = '<p>outer</p><x-in></x-in><input aria-label="Shadow field" value="v">';
    outer.querySelector('x-in').attachShadow({ mode: 'open' }).innerHTML = '<a href="/deep">Deep link</a>';
    </script>`,
  // Inside a shadow root, ids are the root's own: such a page is read from Chromium's tree.
  shadowIds: `<h2>Scoped ids</h2><span id="n">Light name</span><div id="h2"></div>
    <script>h2.attachShadow({ mode: 'open' }).innerHTML = '<span id="n">Shadow name</span><button aria-labelledby="n">x</button>';</script>`,
  shadow: `<p>Light</p><div id="h"></div>
    <script>h.attachShadow({ mode: 'closed' }).innerHTML = '<p>In a closed root</p><button>Shadow button</button>';</script>`,
};

let fixture: Fixture;
let browser: Browser;
let page: Page;

before(async () => {
  fixture = await startFixture({
    '/inner': (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<h3>Other</h3><a href="/x">Out</a>');
    },
    ...Object.fromEntries(
      Object.entries(pages).map(([name, html]) => [
        `/${name}`,
        (_req, _body, res) => {
          if (html.startsWith('<?xml'))
            res.writeHead(200, { 'content-type': 'application/xhtml+xml' }).end(html);
          else
            res
              .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
              .end(
                `<!doctype html><title>${name}</title><body>${html.replace('PORT', String(fixture.port))}`,
              );
        },
      ]),
    ),
  });
  browser = await chromium.launch({
    executablePath: findChrome(),
    args: ['--no-sandbox', '--host-resolver-rules=MAP * 127.0.0.1', '--site-per-process'],
  });
  page = await browser.newPage();
});

after(async () => {
  await browser?.close();
  await fixture?.close();
});

/** The page's snapshot text with its tree read from `source`; refs shown as `@ref` (their numbers differ). */
async function rendered(source: 'ax' | 'dom'): Promise<string> {
  const previous = process.env.TABWARD_SNAPSHOT_TREE;
  process.env.TABWARD_SNAPSHOT_TREE = source;
  try {
    const session = await page.context().newCDPSession(page);
    const read = await readTab(page, session, 15_000);
    await session.detach();
    const refless = (node: AriaNode | string): AriaNode | string =>
      typeof node === 'string'
        ? node
        : {
            ...node,
            ...(node.ref ? { ref: 'ref' } : {}),
            ...(node.children ? { children: node.children.map(refless) } : {}),
          };
    return renderSnapshot(read.tree.map(refless), { pageUrl: page.url() });
  } finally {
    if (previous === undefined) delete process.env.TABWARD_SNAPSHOT_TREE;
    else process.env.TABWARD_SNAPSHOT_TREE = previous;
  }
}

for (const name of Object.keys(pages))
  test(`the DOM snapshot's tree renders as Chromium's: ${name}`, async () => {
    await page.goto(fixture.url('site.test', `/${name}`), { waitUntil: 'load' });
    const chromium = await rendered('ax');
    const ours = await rendered('dom');
    assert.ok(chromium.split('\n').length > 2, chromium);
    assert.equal(ours, chromium);
  });

// Nesting deeper than the call stack, where a name reads a subtree whole (a hidden labelledby target, a drop-down):
// the DOM snapshot's tree is read (Chromium's cuts its own at 400 levels and its names sooner: not compared).
test("the DOM snapshot's tree reads a page nested deeper than the call stack", async () => {
  await page.setContent(`<!doctype html><body>${deepNames}`);
  const ours = await rendered('dom');
  assert.match(ours, /button Deepend ="b"/);
  assert.match(ours, /combobox Deep select ="o"/);
});

const deepNames = `<span id="L" style="display:none">Deep</span><button aria-labelledby="L">b</button>
    <select id="S" aria-label="Deep select"><option>o</option></select>
    <script>
    let s = L; for (let i = 0; i < 9000; i++) { const n = document.createElement('span'); s.append(n); s = n; } s.append('end');
    s = document.createElement('div'); S.append(s);
    for (let i = 0; i < 9000; i++) { const n = document.createElement('div'); s.append(n); s = n; }
    </script>`;
