// Writes src/mcp/toolsList.ts (npm run tools-list): the tools/list entry of every tool, made from the tools'
// schemas. `tabward mcp` answers tools/list from it, so that no tool schema is built before its first reply; a
// unit test checks the committed file is up to date.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeTool } from '../src/mcp/mcpServer.ts';
import { toolsFor } from '../src/tools/catalogue.ts';

const file = fileURLToPath(new URL('../src/mcp/toolsList.ts', import.meta.url));
const entries = Object.fromEntries(
  toolsFor(['core', 'devtools']).map((tool) => [tool.name, describeTool(tool)]),
);
writeFileSync(
  file,
  [
    "// Written by scripts/write-tools-list.ts from the tools' schemas (npm run tools-list); do not edit. tools/list",
    '// is answered from it, so that `tabward mcp` builds no tool schema before its first reply.',
    '',
    "import type { ListedTool } from './listedTool.ts';",
    '',
    `export const listedTools: Readonly<Record<string, ListedTool>> = ${JSON.stringify(entries, null, 2)};`,
    '',
  ].join('\n'),
);
execFileSync(
  fileURLToPath(new URL('../node_modules/.bin/biome', import.meta.url)),
  ['format', '--write', file],
  {
    stdio: 'inherit',
  },
);
