#!/usr/bin/env node
// Bundles the CLI into dist/tabward.js and its chunks, with the libraries it uses inside, so that an installed
// tabward needs neither TypeScript nor most of its dependencies: `npx tabward mcp` downloads one package and
// starts without compiling anything. Writes the licences of the bundled libraries beside it, then builds the
// Chrome extension into dist/extension. `--out DIR` builds somewhere else (the packed-install check does).

import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { build } from 'esbuild';
import { buildExtension } from './buildExtension.mjs';
import { bundledLicences } from './licences.mjs';

const root = new URL('..', import.meta.url).pathname;
const outFlag = process.argv.indexOf('--out');
const out = outFlag > 0 ? resolve(process.argv[outFlag + 1] ?? 'dist') : join(root, 'dist');

// Left outside the bundle, and why:
// - playwright-core finds its own files (injected scripts, protocol tables, the trace viewer) relative to its
//   package folder, and its authors do not support bundling it; it has no dependencies and no install script,
//   so it installs in a second or two as one package.
// - better-sqlite3 is a native addon and only `tabward relay` uses it: an optional peer dependency, loaded on
//   use (see src/cli/relayCommand.ts), so `mcp` users never build it.
// - ws's optional native helpers are loaded in try/catch; without them ws runs its JavaScript fallback.
const external = ['playwright-core', 'playwright-core/*', 'better-sqlite3', 'bufferutil', 'utf-8-validate'];

// zod's `locales` namespace holds the error messages of 45 languages (360 KB, a fifth of what `tabward mcp` loads
// to start); tabward and the MCP SDK use zod's default, English, and never look a language up by name.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(bundler) {
    bundler.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]zod[\\/]v4[\\/]/.test(args.importer)) return undefined;
      return { path: join(dirname(args.importer), '../locales'), namespace: 'zod-locales' };
    });
    bundler.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: args.path,
    }));
  },
};

mkdirSync(out, { recursive: true });
const result = await build({
  plugins: [zodEnglishOnly],
  // Paths in the metafile are relative to this (licences.mjs and the chunk clean-up below read them).
  absWorkingDir: root,
  entryPoints: [join(root, 'src/cli/main.ts')],
  outdir: out,
  entryNames: 'tabward',
  chunkNames: 'chunks/[name]-[hash]',
  // Each command's code (and the libraries only it uses) is a chunk loaded when that command runs.
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external,
  metafile: true,
  // Licences are collected into one file below; per-comment copies only add weight.
  legalComments: 'none',
  logLevel: 'warning',
  // esbuild's keepNames wraps functions in a __name() helper that pages do not have; in-page functions are
  // sent to the browser as source text, so names are not kept (and nothing is minified: such a function's source
  // must stay as written).
  keepNames: false,
  // CommonJS libraries inside an ESM bundle call require() for Node's own modules: give them one.
  banner: {
    js: [
      '// Built by scripts/build.mjs from src/; do not edit.',
      "import { createRequire as __tabwardCreateRequire } from 'node:module';",
      'const require = __tabwardCreateRequire(import.meta.url);',
    ].join('\n'),
  },
});

// Chunks of earlier builds would ship in the package: remove them once the new ones are in place (not
// before, so that a tabward started from the old bundle a moment ago still finds its chunks).
const written = new Set(Object.keys(result.metafile.outputs).map((path) => resolve(root, path)));
const chunks = join(out, 'chunks');
for (const name of existsSync(chunks) ? readdirSync(chunks) : [])
  if (!written.has(join(chunks, name))) rmSync(join(chunks, name), { force: true });

writeFileSync(join(out, 'THIRD_PARTY_LICENSES.txt'), bundledLicences(result.metafile, root));

// The Chrome extension, for `tabward relay extension` and Load unpacked.
await buildExtension(join(out, 'extension'));
