// A recipe's `download` step, as a user pulling data out of a portal runs it: "Export CSV" clicked (a form POST),
// an XLSX fetched by URL and kept, a JSON export; the files come back as rows in the result (mapped to the step's
// fields, a required column checked), from `tabward run` and from `tabward serve`'s POST /run alike.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import writeXlsxFile from 'write-excel-file/node';
import { type Fixture, html, startFixture } from '../helpers/fixtureServer.ts';
import { runCli } from '../helpers/runCli.ts';
import { startServe } from '../helpers/tabwardProcess.ts';

const csv = 'order,customer,total\n1001,Alice,42.50\n1002,Bob,\n';

describe('recipes: download steps', () => {
  let site: Fixture;
  let xlsx: Buffer;
  const home = mkdtempSync(join(tmpdir(), 'tabward-recipe-downloads-'));
  const attachment = (res: import('node:http').ServerResponse, name: string, body: string | Buffer) => {
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${name}"`,
    });
    res.end(body);
  };
  const recipe = (steps: unknown[]) => ({ url: site.url('127.0.0.1', '/exports'), steps });
  const file = (content: unknown) => {
    const path = join(home, `recipe-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };

  before(async () => {
    xlsx = await (
      await writeXlsxFile([
        [{ value: 'sku' }, { value: 'stock' }],
        [{ value: 'A-1' }, { value: 12 }],
        [{ value: 'B-2' }, { value: 0 }],
      ])
    ).toBuffer();
    site = await startFixture({
      '/exports': (_req, _body, res) =>
        html(
          res,
          '<title>Exports</title><form method="post" action="/export"><button id="csv">Export CSV</button></form>',
        ),
      'POST /export': (_req, _body, res) => attachment(res, 'orders.csv', csv),
      '/stock.xlsx': (_req, _body, res) => attachment(res, 'stock.xlsx', xlsx),
      '/data.json': (_req, _body, res) =>
        attachment(res, 'data.json', JSON.stringify({ rows: [{ id: 7, ok: true }] })),
    });
  });
  after(async () => site?.close());

  test('tabward run: a CSV export clicked, an XLSX kept, a JSON export, as rows in the result', async () => {
    const result = await runCli(
      [
        'run',
        file(
          recipe([
            {
              action: 'download',
              selector: '#csv',
              as: 'orders',
              fields: { id: 'order', total: 'total' },
              required: true,
            },
            { action: 'download', url: '/stock.xlsx', as: 'stock', keepFile: true },
            { action: 'download', url: '/data.json' },
          ]),
        ),
      ],
      { TABWARD_HOME: home },
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const files = result.json?.files as Record<
      string,
      { rows: unknown[]; type: string; file?: string; name: string }
    >;
    assert.deepEqual(files.orders?.rows, [
      { id: '1001', total: '42.50' },
      { id: '1002', total: null },
    ]);
    assert.equal(files.orders?.type, 'text/csv');
    assert.deepEqual(files.stock?.rows, [
      { sku: 'A-1', stock: 12 },
      { sku: 'B-2', stock: 0 },
    ]);
    assert.equal(Buffer.from(files.stock?.file ?? '', 'base64').equals(xlsx), true, 'the XLSX itself, kept');
    assert.deepEqual(files.file3?.rows, [{ id: 7, ok: true }]);
  });

  test('a required column with no value fails the run, naming the row and column', async () => {
    const result = await runCli(
      [
        'run',
        file(
          recipe([
            { action: 'download', selector: '#csv', fields: { total: { column: 'total', required: true } } },
          ]),
        ),
      ],
      { TABWARD_HOME: home },
    );
    assert.equal(result.code, 1, result.stdout);
    assert.match(String(result.json?.error?.message), /row 2: no value in column "total"/);
  });

  test('serve: POST /run answers with the export’s rows (a Webhands-style client reads data as before)', async () => {
    const token = 'downloads-token-0123456789';
    const server = await startServe(token, ['--allow-private'], { home });
    try {
      const { base } = server;
      const response = await fetch(`${base}/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipe: recipe([{ action: 'download', selector: '#csv', as: 'orders' }]) }),
      });
      const body = (await response.json()) as { ok: boolean; files: Record<string, { rows: unknown[] }> };
      assert.equal(response.status, 200, JSON.stringify(body));
      assert.equal(body.files.orders?.rows.length, 2);
    } finally {
      server.child.kill('SIGTERM');
    }
  });
});
