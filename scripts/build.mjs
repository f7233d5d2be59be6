#!/usr/bin/env node
// Bundles the CLI into dist/tabward.js and its chunks (dependencies stay in node_modules), so that `bin/tabward` starts
// without compiling TypeScript on the way: an MCP client waits for tabward on every start. Then the Chrome
// extension into dist/extension.

import { build } from 'esbuild';
import { buildExtension } from './buildExtension.mjs';

await build({
  entryPoints: [new URL('../src/cli/main.ts', import.meta.url).pathname],
  outdir: new URL('../dist', import.meta.url).pathname,
  entryNames: 'tabward',
  chunkNames: 'chunks/[name]-[hash]',
  // Each command's code (and the libraries only it uses) is a chunk loaded when that command runs.
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
  // esbuild's keepNames wraps functions in a __name() helper that pages do not have; in-page functions are
  // sent to the browser as source text, so names are not kept.
  keepNames: false,
  banner: { js: '// Built by scripts/build.mjs from src/; do not edit.' },
});

// The Chrome extension, for `tabward relay extension` and Load unpacked.
await buildExtension();
