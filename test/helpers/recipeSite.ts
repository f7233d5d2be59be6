// The bundled demo site as the fixture portal for recipe tests, and the example recipes pointed at it.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DemoSite, startDemoSite } from '../../src/demo/demoSite.ts';

export async function startPortal(): Promise<{
  site: DemoSite;
  dir: string;
  recipe: (name: string, edit?: (r: Record<string, unknown>) => void) => string;
}> {
  const site = await startDemoSite();
  const dir = mkdtempSync(join(tmpdir(), 'tabward-recipes-'));
  const recipe = (name: string, edit?: (r: Record<string, unknown>) => void) => {
    const text = readFileSync(
      new URL(`../../examples/recipes/${name}.json`, import.meta.url),
      'utf8',
    ).replaceAll('http://127.0.0.1:8765', `http://127.0.0.1:${site.port}`);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    edit?.(parsed);
    const file = join(dir, `${name}-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(parsed));
    return file;
  };
  return { site, dir, recipe };
}
