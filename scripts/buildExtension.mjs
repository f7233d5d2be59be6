// Bundles extension/ into a folder Chrome loads unpacked (dist/extension by default): the observer and the
// bridge as classic scripts, the service worker and the popup as modules, plus the manifest and the popup page.

import { copyFileSync, cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const source = new URL('../extension/', import.meta.url).pathname;

export async function buildExtension(outDir = new URL('../dist/extension', import.meta.url).pathname) {
  mkdirSync(outDir, { recursive: true });
  const common = { bundle: true, target: 'chrome120', logLevel: 'warning', legalComments: 'none' };
  await build({
    ...common,
    entryPoints: { observer: join(source, 'src/observer.ts'), bridge: join(source, 'src/bridge.ts') },
    outdir: outDir,
    format: 'iife',
  });
  await build({
    ...common,
    entryPoints: { worker: join(source, 'src/worker/worker.ts'), popup: join(source, 'src/popup.ts') },
    outdir: outDir,
    format: 'esm',
  });
  for (const file of ['manifest.json', 'popup.html', 'popup.css'])
    copyFileSync(join(source, file), join(outDir, file));
  cpSync(join(source, 'icons'), join(outDir, 'icons'), { recursive: true });
  return outDir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`extension built in ${await buildExtension(process.argv[2])}`);
}
