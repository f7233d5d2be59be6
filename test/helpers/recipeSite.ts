// The bundled demo site as the fixture portal for recipe tests, and the example recipes pointed at it.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { type DemoSite, startDemoSite } from '../../src/demo/demoSite.ts';
import { runCli } from './runCli.ts';

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

export const demoSecretsFile = new URL('../../examples/recipes/demo.env', import.meta.url).pathname;

/**
 * A portal for one test file: started before its tests, closed after them. `run` is `tabward run` with this
 * portal's TABWARD_HOME.
 */
export function usePortal() {
  let started: Awaited<ReturnType<typeof startPortal>> | undefined;
  const need = () => {
    if (!started) throw new Error('the portal starts in before()');
    return started;
  };
  before(async () => {
    started = await startPortal();
  });
  after(async () => {
    await started?.site.close();
  });
  return {
    get site() {
      return need().site;
    },
    get dir() {
      return need().dir;
    },
    recipe: (name: string, edit?: (r: Record<string, unknown>) => void) => need().recipe(name, edit),
    run: (args: string[], env: Record<string, string> = {}) =>
      runCli(['run', ...args], { TABWARD_HOME: need().dir, ...env }),
  };
}
