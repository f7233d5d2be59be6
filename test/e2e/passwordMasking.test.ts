// A snapshot never shows what is typed into a password field, however it got there (the page's markup, its
// script, the agent's fill) and wherever the field is: the main document (read over tabward's own CDP session),
// a frame, an open shadow root. The tree itself is Playwright's; tabward masks the values it reads beside it.

import assert from 'node:assert/strict';
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
  site = await startFixture({
    '/lying': (_req, _body, res) => html(res, lying),
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
