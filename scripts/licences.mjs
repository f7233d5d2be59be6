// The licences of the libraries bundled into dist/, as one text file shipped beside the bundle: each package
// that esbuild took code from, with its version, its declared licence and the text of its LICENSE file.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Package folders (node_modules/NAME or node_modules/@SCOPE/NAME, nested ones too) that the bundle read. */
function bundledPackages(metafile, root) {
  const folders = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match?.[1]) folders.add(join(root, match[1]));
  }
  return [...folders].sort();
}

function licenceText(folder) {
  const file = readdirSync(folder).find((name) => /^(licen[cs]e|copying)(\.|$)/i.test(name));
  return file ? readFileSync(join(folder, file), 'utf8').trim() : undefined;
}

export function bundledLicences(metafile, root) {
  const sections = [];
  for (const folder of bundledPackages(metafile, root)) {
    const manifest = join(folder, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name, version, license } = JSON.parse(readFileSync(manifest, 'utf8'));
    const text =
      licenceText(folder) ??
      `Licensed under ${license ?? 'an undeclared licence'} (no licence file in the package).`;
    sections.push(`${name}@${version} (${license ?? 'unknown'})\n\n${text}`);
  }
  const header =
    'tabward bundles code from the packages below into dist/. Each is listed with its licence.\n' +
    'playwright-core (Apache-2.0) is installed as a dependency, not bundled.';
  return `${[header, ...sections].join(`\n\n${'-'.repeat(78)}\n\n`)}\n`;
}
