// The user's Chrome downloads exactly as before while tabward is attached and after it leaves (issue 32, defect 3):
// Playwright attached over CDP would set the browser's download behaviour (downloads renamed into a
// playwright-artifacts folder of its own); tabward attaches without touching it. The user's download is made in
// the user's tab over a raw CDP socket of the test's own, which changes nothing of the browser's settings.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { findChrome } from '../../src/browser/findChrome.ts';
import { type LaunchedChrome, launchChrome } from '../../src/browser/launch.ts';
import { refOf, startMcp } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const dir = mkdtempSync(join(tmpdir(), 'tabward-downloads-'));
const downloads = join(dir, 'Downloads');
let server: Server;
let origin = '';
let chrome: LaunchedChrome;
let files = 0;

before(async () => {
  mkdirSync(downloads);
  const profile = join(dir, 'profile');
  mkdirSync(join(profile, 'Default'), { recursive: true });
  // The user's own setting: downloads go to their folder, without a prompt.
  writeFileSync(
    join(profile, 'Default', 'Preferences'),
    JSON.stringify({ download: { default_directory: downloads, prompt_for_download: false } }),
  );
  server = createServer((req, res) => {
    if (req.url?.startsWith('/file')) {
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-disposition': `attachment; filename="report-${++files}.csv"`,
      });
      res.end('a,b\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<title>Reports</title><a href="/file" id="download">Download report</a>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  chrome = await launchChrome({ executablePath: findChrome(), headless: true, userDataDir: profile });
});
after(async () => {
  await chrome?.close();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The user downloads the report in their own tab (a raw CDP socket: no setting of the browser changes). */
async function userDownloads(): Promise<void> {
  const http = chrome.wsEndpoint.replace('ws://', 'http://').replace(/\/devtools\/.*$/, '');
  const targets = (await (await fetch(`${http}/json/list`)).json()) as {
    type: string;
    url: string;
    webSocketDebuggerUrl: string;
  }[];
  const tab =
    targets.find((target) => target.type === 'page' && target.url.startsWith(origin)) ??
    targets.find((target) => target.type === 'page');
  assert.ok(tab, 'the user has a tab');
  const socket = new WebSocket(tab.webSocketDebuggerUrl);
  await new Promise((resolve) => socket.once('open', resolve));
  let id = 0;
  const send = (method: string, params: object) =>
    new Promise<void>((resolve) => {
      const mine = ++id;
      socket.on('message', (data) => {
        if ((JSON.parse(String(data)) as { id?: number }).id === mine) resolve();
      });
      socket.send(JSON.stringify({ id: mine, method, params }));
    });
  if (!tab.url.startsWith(origin)) {
    await send('Page.navigate', { url: `${origin}/` });
    await new Promise((done) => setTimeout(done, 1_000));
  }
  const expected = `report-${files + 1}.csv`;
  // The user opens the report's link (a navigation that the site answers with an attachment).
  await send('Page.navigate', { url: `${origin}/file` });
  // Finished, under the site's name (not a .crdownload still being written, nor a GUID elsewhere).
  await waitFor(
    `${expected} in the user's Downloads folder`,
    () => readdirSync(downloads).includes(expected),
    {
      timeoutMs: 15_000,
    },
  );
  socket.close();
}

test("the user's downloads land in their own folder, named as the site named them, with tabward attached and after", async () => {
  await userDownloads();
  const mcp = await startMcp({ args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint] });
  try {
    const pages = await mcp.call('list_pages');
    assert.ok(!pages.isError, pages.text);
    await userDownloads();
  } finally {
    await mcp.close();
  }
  await new Promise((done) => setTimeout(done, 1_000));
  await userDownloads();
  assert.deepEqual(readdirSync(downloads).sort(), ['report-1.csv', 'report-2.csv', 'report-3.csv']);
});

test("the agent's download in the user's Chrome lands in the session's folder, never in the user's Downloads", async () => {
  const outputDir = join(dir, 'agent-files');
  const before = readdirSync(downloads).sort();
  const mcp = await startMcp({
    args: ['--mode', 'shared', '--ws-endpoint', chrome.wsEndpoint, '--output-dir', outputDir],
  });
  try {
    // A click in the user's Chrome is a write that asks: the human says yes.
    mcp.human.will({ decision: 'approve' });
    await mcp.call('new_page', { url: `${origin}/` });
    const snapshot = await mcp.call('take_snapshot');
    const clicked = await mcp.call('click', { ref: refOf(snapshot.text, 'Download report') });
    assert.match(clicked.text, /Downloaded report-\d+\.csv \(4 B, text\/csv\) to /, clicked.text);
    assert.equal(readdirSync(outputDir).length, 1);
    // The agent's tab goes first: the user's download below is made in the user's own tab.
    mcp.human.will({ decision: 'approve' });
    const closed = await mcp.call('close_page', { pageId: /Tab (p\d+)/.exec(clicked.text)?.[1] ?? '' });
    assert.equal(closed.isError, false, closed.text);
    await userDownloads().catch((error: unknown) => {
      throw new Error(
        `${String(error)}; user's folder: ${readdirSync(downloads).join(', ')}; agent's: ${readdirSync(outputDir).join(', ')}`,
      );
    });
  } finally {
    await mcp.close();
  }
  const added = readdirSync(downloads).filter((name) => !before.includes(name));
  assert.equal(added.length, 1, `only the user's own download is in their folder: ${added.join(', ')}`);
});
