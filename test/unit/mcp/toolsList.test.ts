// tools/list is answered from src/mcp/toolsList.ts, written from the tools' schemas by `npm run tools-list`: a
// schema changed without it would publish arguments the tool no longer takes (or hide new ones).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeTool } from '../../../src/mcp/mcpServer.ts';
import { listedTools } from '../../../src/mcp/toolsList.ts';
import { toolsFor } from '../../../src/tools/catalogue.ts';

const stale = 'src/mcp/toolsList.ts is out of date: run `npm run tools-list`';

test('every tool is listed as its schema describes it, and nothing else is', () => {
  const tools = toolsFor(['core', 'devtools']);
  for (const tool of tools)
    assert.deepEqual(listedTools[tool.name], describeTool(tool), `${tool.name}: ${stale}`);
  assert.deepEqual(Object.keys(listedTools).sort(), tools.map((tool) => tool.name).sort(), stale);
});
