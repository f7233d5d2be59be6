// What crosses from a page to an agent: tool descriptors survive a JSON round trip or are dropped, results
// read as text, sites are origins.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resultText, toSiteTool } from '../../../extension/src/toolDescriptor.ts';
import { readableResult } from '../../../src/relay/relayMcp.ts';
import { originOf } from '../../../src/relay/siteToolCalls.ts';

test('descriptors keep only plain fields; ones that do not serialize are dropped', () => {
  const tool = toSiteTool(
    {
      name: 'search',
      description: 'Search',
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: true },
      // A live object the page put on its tool: never sent on.
      ...{ window: { secret: 1 }, execute: () => 1 },
    } as Parameters<typeof toSiteTool>[0],
    JSON,
  );
  assert.deepEqual(tool, {
    name: 'search',
    description: 'Search',
    inputSchema: { type: 'object' },
    readOnly: true,
  });
  const cyclic: Record<string, unknown> = { type: 'object' };
  cyclic.self = cyclic;
  assert.equal(toSiteTool({ name: 'loop', inputSchema: cyclic }, JSON), undefined);
  assert.equal(
    toSiteTool({ name: 'big', inputSchema: { n: 10n } }, JSON),
    undefined,
    'BigInt does not serialize',
  );
  assert.equal(toSiteTool({ name: '', inputSchema: {} }, JSON), undefined);
  assert.equal(
    toSiteTool({ name: 'str', inputSchema: '{"type":"object"}' }, JSON)?.inputSchema.type,
    'object',
  );
  assert.equal(
    toSiteTool({ name: 'w', inputSchema: {}, annotations: { readOnlyHint: 'yes' } }, JSON)?.readOnly,
    false,
  );
});

test('results: WebMCP text content is unwrapped, anything else passes as JSON', () => {
  assert.equal(readableResult('{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}'), 'a\nb');
  const image = '{"content":[{"type":"image","data":"..."}]}';
  assert.equal(readableResult(image), image);
  assert.equal(readableResult('not json'), 'not json');
  assert.equal(resultText({ content: [] }, JSON.stringify), '{"content":[]}');
  assert.equal(resultText(undefined, JSON.stringify), 'null');
});

test('a site is named by its origin, from a URL or a bare host', () => {
  assert.equal(originOf('https://shop.example/cart?x=1'), 'https://shop.example');
  assert.equal(originOf('shop.example'), 'https://shop.example');
  assert.equal(originOf('http://127.0.0.1:8080'), 'http://127.0.0.1:8080');
  assert.throws(() => originOf('http://'), /is not a site/);
});
