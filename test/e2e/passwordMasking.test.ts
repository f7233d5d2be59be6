// A snapshot never shows what is typed into a password field, however it got there (the page's markup, its
// script, the agent's fill) and wherever the field is: the main document (read over tabward's own CDP session),
// a frame (shown or not), an open or a closed shadow root. The tree is Chromium's accessibility tree; tabward masks
// the values it reads beside it in its own isolated world, however the tree shows them.

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

const typedByPage = 'page-typed-Pw-4417';
const inMarkup = 'markup-Pw-9921';
const inFrame = 'frame-Pw-3308';
const inShadow = 'shadow-Pw-7765';
const typedByAgent = 'agent-typed-Pw-5150';
const lyingValue = 'lying-page-Pw-6061';
// Values Playwright's tree shows rewritten: whitespace collapsed and trimmed, soft hyphens dropped, and a quote
// escaped inside another field's name (a field named by the password field, aria-labelledby).
const spaced = '  spaced  Pw-2231\t ';
const hyphened = 'soft\u00adPw-2232';
const quoted = 'quote"Pw-2233\\';
const xhtmlValue = 'xhtml-Pw-2234';
const shownValue = 'shown-Pw-2235';
const autocompleteValue = 'autocomplete-Pw-2236';
const frameAutocompleteValue = 'frame-autocomplete-Pw-2238';
const reloadingValue = 'Pw-2237-';
const closedValue = 'closed-root-Pw-2239';
const hiddenFrameValue = 'hidden-frame-Pw-2240';
const ariaHiddenFrameValue = 'aria-hidden-frame-Pw-2241';
const deepValue = 'deep-frame-Pw-2242';
const acrossValue = 'across-sites-Pw-3371';
/** Closed-root password fields no tree shows with their value: [their attributes, their value]. */
const closedUnshown: readonly (readonly [string, string])[] = [
  ['type="password" style="display:none"', 'closed-none-Pw-81'],
  ['type="password" aria-hidden="true"', 'closed-aria-Pw-82'],
  ['autocomplete="current-password" role="spinbutton" aria-label="Code"', 'closed-spin-Pw-83'],
  ['type="password" role="slider" aria-label="Slide"', 'closed-slider-Pw-84'],
];
const casedValue = 'cased-pw-2243';
const decoyedValue = 'decoyed-Pw-2244';
const closedAutocompleteValue = 'closed-autocomplete-Pw-2245';
// Password fields where the snapshot's walk looks for no widget (a hidden subtree, a button, a drawing, a shadow
// root inside a hidden subtree), each value copied into the page's text.
const unseenValues = ['in-hidden-Pw-2250', 'in-button-Pw-2251', 'in-svg-Pw-2252', 'in-hidden-shadow-Pw-2253'];

/** A frame `?depth` levels above one holding a password field that posts its value to the top page. */
function nested(
  req: IncomingMessage,
  res: ServerResponse,
  value: string,
  below: (depth: number) => string,
): void {
  const depth = Number(new URL(req.url ?? '/', 'http://x').search.slice(1));
  html(
    res,
    depth === 0
      ? `<input type="password" value="${value}"><script>top.postMessage('${value}', '*')</script>`
      : `<iframe src="${below(depth - 1)}"></iframe>`,
  );
}

let site: Fixture;
let tw: InProcessBrowser;
let mcp: InProcessMcp;

before(async () => {
  const frame = `<label>Frame password <input type="password" value="${inFrame}"></label>`;
  // A page that lies to scripts in its own world about its password fields' values (and its shadow roots).
  const lying = `<title>Sign in</title>
    <label>Lying password <input type="password" value="${lyingValue}"></label>
    <script>
      Object.defineProperty(HTMLInputElement.prototype, 'value', { get() { return ''; }, configurable: true });
      Element.prototype.querySelectorAll = function () { return []; };
    </script>`;
  const setValues = (values: Record<string, string>) =>
    `<script>for (const [id, value] of Object.entries(${JSON.stringify(values)})) document.getElementById(id).value = value;</script>`;
  site = await startFixture({
    '/rewritten': (_req, _body, res) =>
      html(
        res,
        `<title>Rewritten</title>
        <label>Spaced <input type="password" id="spaced"></label>
        <label>Hyphened <input type="password" id="hyphened"></label>
        <input type="password" id="quoted" aria-label="Quoted">
        <span id="named">Named by</span> <input aria-labelledby="named quoted">
        ${setValues({ spaced, hyphened, quoted })}`,
      ),
    // An XHTML document's selectors are case-sensitive: type="Password" is still a password field.
    '/xhtml': (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/xhtml+xml' });
      res.end(
        `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>XHTML</title></head><body>
        <label>XHTML password <input type="Password" value="${xhtmlValue}"/></label></body></html>`,
      );
    },
    // A "Show password" button turns the field into a text field; a field a password manager fills by autocomplete.
    '/show-password': (_req, _body, res) =>
      html(
        res,
        `<title>Show</title>
        <label>Shown password <input type="password" id="shown" value="${shownValue}"></label>
        <button onclick="shown.type = 'text'">Show password</button>
        <label>Autocomplete password <input type="text" autocomplete="current-password" value="${autocompleteValue}"></label>
        <iframe srcdoc='<label>Frame autocomplete <input autocomplete="username new-password" value="${frameAutocompleteValue}"></label>'></iframe>`,
      ),
    // A code typed one digit a box: masking every "1" must not break the refs (@e1…) the agent acts with.
    '/code': (_req, _body, res) =>
      html(
        res,
        `<title>Code</title>
        ${[1, 2, 3, 4, 5, 6].map((digit) => `<input type="password" aria-label="Digit ${digit}" value="${digit}">`).join('')}
        ${Array.from({ length: 12 }, (_, i) => `<a href="/help${i}">Help ${i}</a>`).join(' ')}
        <button onclick="document.title = 'Verified'">Verify</button>`,
      ),
    // A frame that reloads itself with a new password value: its tree and its values must be of one document.
    '/reloading': (_req, _body, res) =>
      html(res, '<title>Reloading</title><iframe src="/reloading-frame"></iframe>'),
    '/reloading-frame': (_req, _body, res) =>
      html(
        res,
        `<label>Reloading password <input type="password" id="pw"></label>
        <script>
          pw.value = '${reloadingValue}' + Math.random().toString(36).slice(2);
          setTimeout(() => location.reload(), Math.random() * 30);
        </script>`,
      ),
    '/lying': (_req, _body, res) => html(res, lying),
    '/unseen-fields': (_req, _body, res) => {
      const [hidden, button, svg, shadow] = unseenValues;
      html(
        res,
        `<title>Unseen</title><div hidden><input type="password" value="${hidden}"><div id="host"></div></div>
        <button>Go <input type="password" value="${button}"></button>
        <svg><foreignObject width="100" height="40"><input type="password" value="${svg}"></foreignObject></svg>
        <p id="echo"></p>
        <script>
          host.attachShadow({ mode: 'open' }).innerHTML = '<input type="password" value="${shadow}">';
          echo.textContent = 'Copied: ' + [...document.querySelectorAll('input'), host.shadowRoot.querySelector('input')]
            .map((input) => input.value).join(' ');
        </script>`,
      );
    },
    // A password field in a closed shadow root (out of reach of any script but its page's), its value echoed
    // beside it in the same root.
    '/closed-root': (_req, _body, res) =>
      html(
        res,
        `<title>Closed</title><div id="host"></div>
        <script>
          const root = host.attachShadow({ mode: 'closed' });
          root.innerHTML = '<label>Closed password <input type="password" value="${closedValue}"></label><p></p>';
          root.querySelector('p').textContent = 'You typed ' + root.querySelector('input').value;
        </script>`,
      ),
    // The same, beside a filled password field the tree does not show (a decoy for any count of fields), and a
    // text field a password manager fills (autocomplete) in a closed root.
    '/closed-decoy': (_req, _body, res) =>
      html(
        res,
        `<title>Decoy</title><input type="password" value="decoy" style="display:none"><div id="host"></div>
        <script>
          const root = host.attachShadow({ mode: 'closed' });
          root.innerHTML = '<label>Decoyed password <input type="password"></label><p></p>' +
            '<label>Closed autocomplete <input autocomplete="current-password" value="${closedAutocompleteValue}"></label>';
          root.querySelector('input').value = '${decoyedValue}';
          root.querySelector('p').textContent = 'Strength check for ' + root.querySelector('input').value;
        </script>`,
      ),
    // Frames the snapshot does not show (hidden, or nested past its limit) post their password to the page.
    // Password fields in a closed shadow root that no tree shows with their value, each copied into the page's text.
    '/closed-unshown': (_req, _body, res) =>
      html(
        res,
        `<title>Closed unshown</title><div id="host"></div><p id="out"></p>
        <script>
          const root = host.attachShadow({ mode: 'closed' });
          root.innerHTML = ${JSON.stringify(closedUnshown.map(([attributes, value]) => `<input ${attributes} value="${value}">`).join(''))};
          out.textContent = 'Echo ' + [...root.querySelectorAll('input')].map((input) => input.value).join(' | ');
        </script>`,
      ),
    '/unshown-frames': (_req, _body, res) =>
      html(
        res,
        `<title>Unshown</title><div id="sink"></div>
        <script>addEventListener('message', (e) => { const p = document.createElement('p'); p.textContent = 'Got ' + e.data; sink.append(p); });</script>
        <iframe style="display:none" src="/posting-frame?${hiddenFrameValue}"></iframe>
        <iframe aria-hidden="true" src="${site.url('other.test', `/posting-frame?${ariaHiddenFrameValue}`)}"></iframe>
        <iframe src="${site.url('other.test', '/nest?9')}"></iframe>
        <iframe src="${site.url('first.test', '/nest-across?9')}"></iframe>`,
      ),
    '/posting-frame': (req, _body, res) =>
      html(
        res,
        `<input type="password" value="${decodeURIComponent(new URL(req.url ?? '/', 'http://x').search.slice(1))}">
        <script>top.postMessage(document.querySelector('input').value, '*')</script>`,
      ),
    '/nest': (req, _body, res) => nested(req, res, deepValue, (depth) => `/nest?${depth}`),
    // The same, each level from the other of two sites: a frame target of its own at every level, past the limit.
    '/nest-across': (req, _body, res) =>
      nested(req, res, acrossValue, (depth) =>
        site.url(depth % 2 ? 'first.test' : 'second.test', `/nest-across?${depth}`),
      ),
    // A value the page shows again in capitals, by its style.
    '/cased': (_req, _body, res) =>
      html(
        res,
        `<title>Cased</title><label>Cased password <input type="password" id="pw" value="${casedValue}"></label>
        <p id="echo" style="text-transform: uppercase"></p><script>echo.textContent = pw.value;</script>`,
      ),
    // The same page in a frame of the site's own, and in a frame of another site (an out-of-process frame).
    '/framed-lying': (_req, _body, res) =>
      html(
        res,
        `<title>Framed</title><iframe src="/lying"></iframe><iframe src="${site.url('other.test', '/lying')}"></iframe>`,
      ),
    '/login': (_req, _body, res) =>
      html(
        res,
        `<title>Sign in</title>
        <label>Markup password <input type="password" value="${inMarkup}"></label>
        <label>Script password <input type="password" id="scripted"></label>
        <label>Agent password <input type="password"></label>
        <div id="host"></div>
        <iframe srcdoc='${frame}'></iframe>
        <script>
          document.getElementById('scripted').value = '${typedByPage}';
          const root = document.getElementById('host').attachShadow({ mode: 'open' });
          root.innerHTML = '<label>Shadow password <input type="password" value="${inShadow}"></label>';
        </script>`,
      ),
  });
  tw = await startInProcess();
  mcp = await tw.connect();
});
after(async () => {
  await mcp?.close();
  await tw?.close();
  await site?.close();
});

test('no password value reaches the agent, whoever typed it and wherever the field is', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/login') });
  const before = await mcp.call('take_snapshot');
  await mcp.call('fill', { ref: refOf(before.text, 'Agent password'), value: typedByAgent });
  const after = await mcp.call('take_snapshot');
  for (const value of [typedByPage, inMarkup, inFrame, inShadow, typedByAgent])
    assert.ok(!after.text.includes(value), `${value} shown:\n${after.text}`);
  // The fields are still there to act on, their values masked.
  for (const name of ['Markup password', 'Script password', 'Agent password', 'Shadow password'])
    assert.match(after.text, new RegExp(`${name}.*@e\\d+`));
  assert.match(after.text, /••••/);
});

test('a page that lies to its own scripts about its fields cannot unmask them', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/lying') });
  const snapshot = await mcp.call('take_snapshot');
  assert.match(snapshot.text, /Lying password.*@e\d+/);
  assert.ok(!snapshot.text.includes(lyingValue), `shown:\n${snapshot.text}`);
});

test('nor can it in a frame of its own site or of another (an out-of-process frame)', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/framed-lying') });
  const snapshot = await mcp.call('take_snapshot');
  assert.equal((snapshot.text.match(/Lying password/g) ?? []).length, 2, snapshot.text);
  assert.ok(!snapshot.text.includes(lyingValue), `shown:\n${snapshot.text}`);
});

test('a value is masked however the tree rewrites it (whitespace, soft hyphens, quoted in another name)', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/rewritten') });
  const snapshot = await mcp.call('take_snapshot');
  for (const marker of ['Pw-2231', 'Pw-2232', 'Pw-2233'])
    assert.ok(!snapshot.text.includes(marker), `${marker} shown:\n${snapshot.text}`);
  assert.match(snapshot.text, /textbox "Named by ••••" @e\d+/);
});

test('a password field of an XHTML document, its type in capitals, is masked', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/xhtml') });
  const snapshot = await mcp.call('take_snapshot');
  assert.match(snapshot.text, /XHTML password.*@e\d+/);
  assert.ok(!snapshot.text.includes(xhtmlValue), `shown:\n${snapshot.text}`);
});

test('a password stays masked once shown as text, and an autocomplete password field is masked', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/show-password') });
  const before = await mcp.call('take_snapshot');
  await mcp.call('click', { ref: refOf(before.text, 'Show password') });
  const after = await mcp.call('take_snapshot');
  assert.match(after.text, /Shown password.*@e\d+/);
  assert.equal((after.text.match(/Frame autocomplete.*••••/g) ?? []).length, 1, after.text);
  for (const value of [shownValue, autocompleteValue, frameAutocompleteValue])
    assert.ok(!after.text.includes(value), `${value} shown:\n${after.text}`);
});

test('masking one-character values leaves the refs intact', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/code') });
  const snapshot = await mcp.call('take_snapshot');
  assert.match(snapshot.text, /^link "Help ••••" \/help\*\*\*\* @e11$/m);
  assert.match(snapshot.text, /^button Verify @e\d+$/m);
  const clicked = await mcp.call('click', { ref: refOf(snapshot.text, 'Verify') });
  assert.equal(clicked.isError, false, clicked.text);
});

test("a frame's tree and its password values are read from the same document", async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/reloading') });
  for (let attempt = 0; attempt < 12; attempt++) {
    const snapshot = await mcp.call('take_snapshot');
    assert.ok(!snapshot.text.includes(reloadingValue), `shown:\n${snapshot.text}`);
    if (snapshot.isError) assert.match(snapshot.text, /kept navigating/);
  }
});

test('a password field in a closed shadow root is masked, and so is its value echoed beside it', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/closed-root') });
  const snapshot = await mcp.call('take_snapshot');
  assert.match(snapshot.text, /Closed password.*@e\d+/);
  assert.match(snapshot.text, /You typed ••••/);
  assert.ok(!snapshot.text.includes(closedValue), `shown:\n${snapshot.text}`);
});

test('password fields where no widget is looked for (hidden, in a button, in a drawing, in a hidden shadow root) are masked where copied', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/unseen-fields') });
  const snapshot = await mcp.call('take_snapshot');
  assert.match(snapshot.text, /Copied: ••••/);
  for (const value of unseenValues)
    assert.ok(!snapshot.text.includes(value), `${value} shown:\n${snapshot.text}`);
});

test('a closed shadow root password field no tree shows with its value (hidden, aria-hidden, a spinbutton, a slider) is masked where it is copied, from either tree', async () => {
  for (const source of ['dom', 'ax']) {
    process.env.TABWARD_SNAPSHOT_TREE = source;
    try {
      await mcp.call('new_page', { url: site.url('site.test', `/closed-unshown?${source}`) });
      const snapshot = await mcp.call('take_snapshot');
      assert.match(snapshot.text, /Echo •••• \| •••• \| •••• \| ••••/, snapshot.text);
      for (const [, value] of closedUnshown)
        assert.ok(!snapshot.text.includes(value), `${value} shown:\n${snapshot.text}`);
    } finally {
      delete process.env.TABWARD_SNAPSHOT_TREE;
    }
  }
});

test('a password of a frame the snapshot does not show (hidden, aria-hidden, too deep, too deep across sites) is masked where it is copied', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/unshown-frames') });
  const deadline = Date.now() + 15_000;
  let snapshot = await mcp.call('take_snapshot');
  // Every frame has posted its value by the time four "Got" lines are shown.
  while ((snapshot.text.match(/Got /g) ?? []).length < 4 && Date.now() < deadline)
    snapshot = await mcp.call('take_snapshot');
  assert.equal((snapshot.text.match(/Got ••••/g) ?? []).length, 4, snapshot.text);
  for (const value of [hiddenFrameValue, ariaHiddenFrameValue, deepValue, acrossValue])
    assert.ok(!snapshot.text.includes(value), `${value} shown:\n${snapshot.text}`);
});

test('a value the page shows in other letter case (text-transform) is masked', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/cased') });
  const snapshot = await mcp.call('take_snapshot');
  assert.ok(!snapshot.text.toLowerCase().includes(casedValue), `shown:\n${snapshot.text}`);
});

test('a closed root password field beside a decoy field, and a closed root autocomplete field, are masked', async () => {
  await mcp.call('new_page', { url: site.url('site.test', '/closed-decoy') });
  const snapshot = await mcp.call('take_snapshot');
  assert.match(snapshot.text, /Strength check for ••••/);
  assert.match(snapshot.text, /Closed autocomplete.*••••/);
  for (const value of [decoyedValue, closedAutocompleteValue])
    assert.ok(!snapshot.text.includes(value), `${value} shown:\n${snapshot.text}`);
});
