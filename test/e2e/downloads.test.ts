// Downloads of the agent's actions, as an obedient agent meets them on a vendor portal: "Export CSV" by a link (GET)
// and by a form (POST) lands in the session's folder, 0600, with its name, size, sniffed type and first lines in the
// result; list_downloads lists them; a name the site chose to climb out of the folder, a second file of the same name,
// a file over the cap and a download the page starts by itself are handled as docs/mcp.md "Downloads" says; an
// export posted into a sensitive page is asked, and refused it neither posts nor downloads.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { type InProcessBrowser, type InProcessMcp, startInProcess } from '../helpers/inProcessMcp.ts';
import { refOf } from '../helpers/mcpClient.ts';
import { waitFor } from '../helpers/waitFor.ts';

const csv = 'order,customer,total\n1001,Alice,42.50\n1002,Bob,17.00\n';

describe('downloads of the agent’s actions', () => {
  let site: Fixture;
  let browser: InProcessBrowser;
  let mcp: InProcessMcp;
  const folder = mkdtempSync(join(tmpdir(), 'tabward-downloads-'));
  const attachment = (
    res: import('node:http').ServerResponse,
    name: string,
    body: string | Buffer,
    type = 'text/plain',
  ) => {
    res.writeHead(200, { 'content-type': type, 'content-disposition': `attachment; filename="${name}"` });
    res.end(body);
  };

  before(async () => {
    site = await startFixture(
      {
        '/portal': (_req, _body, res) =>
          html(
            res,
            `<title>Orders</title><a href="/export.csv">Export CSV</a>
            <form method="post" action="/export"><button>Export by POST</button></form>
            <a href="/sneaky">Export sneaky</a> <a href="/big">Export everything</a>`,
          ),
        // The site's header says HTML: the type is read from the bytes, not from what the site claims.
        '/export.csv': (_req, _body, res) => attachment(res, 'orders.csv', csv, 'text/html'),
        'POST /export': (_req, _body, res) => attachment(res, 'orders.csv', csv),
        '/sneaky': (_req, _body, res) => attachment(res, '../../.bashrc', 'echo owned\n'),
        '/big': (_req, _body, res) =>
          attachment(res, 'big.bin', Buffer.alloc(2 * 1024 * 1024, 1), 'application/octet-stream'),
        '/self': (_req, _body, res) =>
          html(
            res,
            `<title>Self</title><p>nothing to click</p><script>setTimeout(() => { location.href = '/export.csv?self' }, 6000)</script>`,
          ),
        '/settings/export': (_req, _body, res) =>
          html(
            res,
            `<title>Export account</title><form method="post" action="/settings/export/run"><button>Export account data</button></form>`,
          ),
        'POST /settings/export/run': (_req, _body, res) =>
          attachment(res, 'account.json', '{"token":"ghp_x"}'),
      },
      { tls: true },
    );
    browser = await startInProcess({ downloads: { dir: folder, maxMb: 1 } });
    mcp = await browser.connect();
    mcp.human.policy = () => ({ decision: 'reject' });
  });
  after(async () => {
    await mcp?.close();
    await browser?.close();
    await site?.close();
  });

  test('an export by link lands in the session folder, 0600, with its sniffed type and first lines', async () => {
    await mcp.call('new_page', { url: site.url('portal.example', '/portal') });
    const clicked = await mcp.call('click', {
      ref: refOf((await mcp.call('take_snapshot')).text, 'Export CSV'),
    });
    assert.match(clicked.text, /Downloaded orders\.csv \(\d+ B, text\/csv\) to \S+orders\.csv/);
    assert.match(clicked.text, /1001,Alice,42\.50/);
    const path = join(folder, 'orders.csv');
    assert.equal(readFileSync(path, 'utf8'), csv);
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });

  test('an export by form POST lands beside it, never over it', async () => {
    const clicked = await mcp.call('click', {
      ref: refOf((await mcp.call('take_snapshot')).text, 'Export by POST'),
    });
    assert.match(clicked.text, /Downloaded orders \(2\)\.csv/);
    assert.equal(readFileSync(join(folder, 'orders (2).csv'), 'utf8'), csv);
  });

  test('a name that climbs out of the folder stays in it; a file over the cap is refused', async () => {
    await mcp.call('navigate_page', { url: site.url('portal.example', '/portal') });
    const sneaky = await mcp.call('click', {
      ref: refOf((await mcp.call('take_snapshot')).text, 'Export sneaky'),
    });
    const saved = /Downloaded (\S+) \(/.exec(sneaky.text)?.[1] ?? '';
    assert.match(saved, /^[^/]*bashrc$/, sneaky.text);
    assert.ok(!saved.startsWith('.'), 'not a hidden file');
    assert.ok(existsSync(join(folder, saved)), `kept in the folder: ${readdirSync(folder).join(', ')}`);
    await mcp.call('navigate_page', { url: site.url('portal.example', '/portal') });
    const big = await mcp.call('click', {
      ref: refOf((await mcp.call('take_snapshot')).text, 'Export everything'),
    });
    assert.match(big.text, /Download of big\.bin refused: 2\.0 MB is over the size cap of 1\.0 MB/);
    assert.ok(!existsSync(join(folder, 'big.bin')));
  });

  test('a download the page starts by itself is refused and listed as such', async () => {
    await mcp.call('navigate_page', { url: site.url('portal.example', '/self') });
    await waitFor(
      'the page’s own download',
      async () => /refused: the page started it by itself/.test((await mcp.call('list_downloads')).text),
      { timeoutMs: 20_000 },
    );
    assert.equal(readdirSync(folder).length, 3, readdirSync(folder).join(', '));
  });

  test('an export posted from a sensitive page asks, and refused, neither posts nor downloads', async () => {
    mcp.human.policy = (message) => ({ decision: /click/.test(message) ? 'reject' : 'approve' });
    await mcp.call('navigate_page', { url: site.url('github.com', '/settings/export') });
    const clicked = await mcp.call('click', {
      ref: refOf((await mcp.call('take_snapshot')).text, 'Export account data'),
    });
    assert.match(clicked.text, /rejected/);
    assert.deepEqual(
      site.writes().filter((request) => request.path.startsWith('/settings/export/run')),
      [],
    );
    assert.ok(!existsSync(join(folder, 'account.json')));
  });
});
