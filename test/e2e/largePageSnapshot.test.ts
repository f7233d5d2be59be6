// A large page through tabward as an agent uses it: its snapshot is built from the DOM snapshot (every document it
// can stand for, docs/architecture.md "A snapshot's tree"), and is what Chromium's accessibility tree would show,
// its password field masked, its refs acting on exactly the elements their lines name (a click, a fill), and a
// snapshot after the page changed showing the change.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';

const rows = 240;
const secret = 'hunter-secret-77';
const orders = Array.from(
  { length: rows },
  (_, i) =>
    `<tr><td><input type="checkbox" aria-label="Select order ${i + 1}"></td><td>Order ${i + 1}</td>
    <td><button onclick="this.textContent = 'Archived ${i + 1}'">Archive ${i + 1}</button></td></tr>`,
).join('');
const page = `<title>Orders</title><h1>Orders</h1>
  <form><label>User <input name="user" value="ada"></label><label>Password <input type="password" value="${secret}"></label>
  <label>Note <input name="note"></label></form><table>${orders}</table>`;

let site: Fixture;
let tw: InProcessBrowser;
let mcp: InProcessMcp;

before(async () => {
  site = await startFixture({ '/orders': (_req, _body, res) => html(res, page) });
  tw = await startInProcess();
  mcp = await tw.connect();
});

after(async () => {
  await mcp?.close();
  await tw?.close();
  await site?.close();
});

/** The ref of the control shown as `role "name"` (a table row's line holds several). */
function refIn(snapshot: string, role: string, name: string): string {
  const ref = new RegExp(`${role} "?${name}"?[^@|]* @(e\\d+)`).exec(snapshot)?.[1];
  assert.ok(ref, `no ${role} "${name}" in the snapshot`);
  return ref;
}

/** The snapshot with every document's tree read from `source`. */
async function snapshotFrom(source: 'ax' | 'dom' | undefined): Promise<string> {
  const previous = process.env.TABWARD_SNAPSHOT_TREE;
  if (source) process.env.TABWARD_SNAPSHOT_TREE = source;
  else delete process.env.TABWARD_SNAPSHOT_TREE;
  try {
    const snapshot = await mcp.call('take_snapshot', { maxTokens: 1e9 });
    assert.equal(snapshot.isError, false, snapshot.text);
    return snapshot.text;
  } finally {
    if (previous === undefined) delete process.env.TABWARD_SNAPSHOT_TREE;
    else process.env.TABWARD_SNAPSHOT_TREE = previous;
  }
}

test('a large page reads as Chromium would show it, its password masked, and its refs act on what they name', async () => {
  const opened = await mcp.call('new_page', { url: site.url('shop.test', '/orders') });
  assert.equal(opened.isError, false, opened.text);

  const read = await snapshotFrom(undefined);
  assert.ok(!read.includes(secret), `the password shown:\n${read.slice(0, 600)}`);
  assert.match(read, /textbox Password ="••••" @e\d+/);
  assert.match(read, /checkbox Select order 240 @e\d+/);
  // The same text as Chromium's own tree gives (refs are tabward's, kept per element: the same numbers too).
  assert.equal(read, await snapshotFrom('ax'));

  const clicked = await mcp.call('click', { ref: refIn(read, 'button', 'Archive 137') });
  assert.equal(clicked.isError, false, clicked.text);
  const ticked = await mcp.call('click', { ref: refIn(read, 'checkbox', 'Select order 212') });
  assert.equal(ticked.isError, false, ticked.text);
  const filled = await mcp.call('fill', { ref: refOf(read, 'Note'), value: 'call back' });
  assert.equal(filled.isError, false, filled.text);

  const after = await snapshotFrom(undefined);
  assert.match(after, /button Archived 137 @e\d+/);
  assert.match(after, /button Archive 136 @e\d+/);
  assert.match(after, /button Archive 212 @e\d+/);
  assert.match(after, /checkbox Select order 212 \[checked\] @e\d+/);
  assert.doesNotMatch(after, /checkbox Select order 211 \[checked\]/);
  assert.match(after, /textbox Note ="call back" @e\d+/);
  assert.ok(!after.includes(secret), 'the password shown after the actions');
});
