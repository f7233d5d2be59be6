// One behaviour suite run against every browser mode (isolated, your Chrome, a remote browser service): the
// tools work the same way whichever browser is underneath. The human approves everything here; the guard's
// decisions have suites of their own.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startUserChrome, type UserChrome } from '../../src/demo/yourChrome.ts';
import { type Fixture, html, startFixture, testChromeArgs } from '../helpers/fixtureServer.ts';
import { refOf, startMcp } from '../helpers/mcpClient.ts';
import { differingRows } from '../helpers/pngRows.ts';

const formPage = `<title>Form</title><h1>Order form</h1>
<label>Name <input name="name"></label><label>Secret <input type="password" name="pw"></label>
<label>Size <select name="size"><option>S</option><option>M</option><option>L</option></select></label>
<label>File <input type="file" name="f"></label>
<button onmouseover="document.querySelector('#hovered').textContent='hovered!'">Hover me</button><p id="hovered"></p>
<div draggable="true" id="src" ondragstart="event.dataTransfer.setData('text','x')">Drag source</div>
<div id="dst" ondragover="event.preventDefault()" ondrop="document.querySelector('#dropped').textContent='dropped!'" style="width:100px;height:40px;border:1px solid">Drop here</div>
<p id="dropped"></p><button onclick="setTimeout(()=>document.querySelector('#late').textContent='Ready now',300)">Later</button><p id="late"></p>
<a href="/next">Next page</a>`;

describe('tools across browser modes', () => {
  let site: Fixture;
  let chrome: UserChrome;
  before(async () => {
    site = await startFixture({
      '/form': (_req, _body, res) => html(res, formPage),
      '/next': (_req, _body, res) => html(res, '<title>Next</title><h1>Next</h1>'),
    });
    chrome = await startUserChrome({ chromeArgs: testChromeArgs });
  });
  after(async () => {
    await chrome?.close();
    await site?.close();
  });

  const modes = () => [
    { name: 'isolated', args: ['--mode', 'isolated'] },
    { name: 'shared', args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint] },
    { name: 'remote', args: ['--mode', 'remote', '--ws-endpoint', chrome.wsEndpoint] },
  ];

  for (const index of [0, 1, 2]) {
    test(`every tool works in mode #${index + 1} (isolated, shared, remote)`, async () => {
      const mode = modes()[index];
      assert.ok(mode);
      const mcp = await startMcp({ args: mode.args });
      mcp.human.policy = () => ({ decision: 'approve' });
      try {
        await mcp.call('new_page', { url: site.url('shop.test', '/form') });
        assert.match((await mcp.call('browser_status')).text, new RegExp(`mode: ${mode.name}`));
        let snap = (await mcp.call('take_snapshot')).text;
        const filled = await mcp.call('fill_form', {
          fields: [
            { ref: refOf(snap, 'Name'), value: 'Alice' },
            { ref: refOf(snap, 'Size'), value: 'L' },
          ],
        });
        assert.ok(!filled.isError, filled.text);
        snap = (await mcp.call('take_snapshot')).text;
        assert.match(snap, /textbox Name ="Alice"/);
        assert.match(snap, /combobox Size ="L" @e\d+ options: S \| M \| L/);

        const shots: string[] = [];
        for (const secret of ['aaaa', 'bbbbbbbbbbbb']) {
          await mcp.call('fill', { ref: refOf(snap, 'Secret'), value: secret });
          const shot = await mcp.client.callTool({ name: 'take_screenshot', arguments: {} });
          const image = (shot.content as { type: string; data?: string }[]).find(
            (part) => part.type === 'image',
          );
          shots.push(image?.data ?? '');
        }
        // Byte-identical most of the time; under load the 2 px edge of a focus ring sometimes differs with
        // the window's focus. An unmasked value ("aaaa" vs "bbbbbbbbbbbb" as bullets) changes 5 rows or more
        // (measured on this Chromium), so more than 2 differing rows means the field was not masked.
        const [first, second] = shots.map((shot) => Buffer.from(shot, 'base64'));
        assert.ok(first?.length && second?.length, 'two screenshots');
        assert.ok(
          differingRows(first, second) <= 2,
          'the password field is masked: its value does not change the picture',
        );
        await mcp.call('fill', { ref: refOf(snap, 'Name'), value: 'Someone else entirely' });
        const control = await mcp.client.callTool({ name: 'take_screenshot', arguments: {} });
        const controlImage = (control.content as { type: string; data?: string }[]).find(
          (part) => part.type === 'image',
        );
        assert.notEqual(controlImage?.data, shots[0], 'other fields do show');
        assert.doesNotMatch((await mcp.call('take_snapshot')).text, /bbbbbbbbbbbb/, 'nor does the snapshot');

        await mcp.call('hover', { ref: refOf(snap, 'Hover me') });
        const everything = (await mcp.call('take_snapshot', { allRefs: true })).text;
        assert.doesNotMatch(snap, /Drag source @/, 'plain elements carry no ref by default');
        snap = everything;
        await mcp.call('drag', { fromRef: refOf(snap, 'Drag source'), toRef: refOf(snap, 'Drop here') });
        const upload = join(mkdtempSync(join(tmpdir(), 'upload-')), 'note.txt');
        writeFileSync(upload, 'hello');
        const uploaded = await mcp.call('upload_file', { ref: refOf(snap, 'File'), paths: [upload] });
        assert.ok(!uploaded.isError, uploaded.text);
        await mcp.call('click', { ref: refOf(snap, 'Later') });
        assert.ok(!(await mcp.call('wait_for', { text: 'Ready now', timeoutMs: 5000 })).isError);
        const state = await mcp.call('evaluate_script', {
          function:
            "() => [document.querySelector('#hovered').textContent, document.querySelector('#dropped').textContent, document.querySelector('input[type=file]').files[0].name]",
        });
        assert.match(state.text, /"hovered!"[\s\S]*"dropped!"[\s\S]*"note.txt"/);
        assert.ok(!(await mcp.call('resize_page', { width: 800, height: 600 })).isError);
        assert.match((await mcp.call('evaluate_script', { function: '() => innerWidth' })).text, /800/);

        await mcp.call('click', { ref: refOf(snap, 'Next page') });
        const stale = await mcp.call('click', { ref: refOf(snap, 'Hover me') });
        assert.ok(stale.isError && stale.text.startsWith('stale_ref:'), stale.text);
        const back = await mcp.call('navigate_page', { type: 'back' });
        assert.ok(!back.isError, back.text);
        assert.match((await mcp.call('take_snapshot')).text, /Order form/);
        for (const type of ['forward', 'reload']) {
          const moved = await mcp.call('navigate_page', { type });
          assert.ok(!moved.isError, moved.text);
        }
        assert.match((await mcp.call('take_snapshot')).text, /# Next/);
        const late = await mcp.call('wait_for', { text: 'Never appears', timeoutMs: 500 });
        assert.ok(late.isError && late.text.startsWith('timeout:'), late.text);

        const tab = /\*(p\d+)/.exec((await mcp.call('list_pages')).text)?.[1] ?? '';
        await mcp.call('new_page', { url: site.url('shop.test', '/form') });
        assert.ok(!(await mcp.call('select_page', { pageId: tab })).isError);
        assert.match((await mcp.call('list_pages')).text, new RegExp(`\\*${tab} `));
        assert.ok(!(await mcp.call('close_page', { pageId: tab })).isError);
      } finally {
        await mcp.close();
      }
    });
  }
});
