// Saving a session's browsing as a recipe file: read the audit log, convert one session (recipeFromAudit.ts),
// write the JSON private to its owner. Files saved for the agent (save_recipe) go into tabward's own recipes
// folder under a name checked to stay in it, and never replace a file already there: a recipe the human trusts
// cannot be swapped for another one by an agent.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAuditLog } from '../audit/auditLog.ts';
import { TabwardError } from '../core/errors.ts';
import { type RecipeFromAudit, recipeFromAudit } from './recipeFromAudit.ts';
import { writeSteps } from './writeGate.ts';

export function recipeFromLog(
  auditPath: string,
  options: Parameters<typeof recipeFromAudit>[1] = {},
): RecipeFromAudit {
  return recipeFromAudit(readAuditLog(auditPath).entries, options);
}

export function recipeText(saved: RecipeFromAudit): string {
  return `${JSON.stringify(saved.recipe, null, 2)}\n`;
}

const namePattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export interface SavedFile {
  readonly path: string;
  readonly steps: number;
  readonly writes: number;
  readonly notes: readonly string[];
}

/** Saves `session`'s recipe as DIR/NAME.json (NAME-2.json... when taken), 0600 in a 0700 folder. */
export function saveSessionRecipe(
  auditPath: string,
  dir: string,
  session: string,
  name: string | undefined,
): SavedFile {
  const base = name ?? `session-${session}`;
  if (!namePattern.test(base))
    throw new TabwardError(
      'bad_input',
      `"${base}" is not a recipe name tabward saves under.`,
      'Use letters, digits, - and _ (at most 64), starting with a letter or digit.',
    );
  const saved = recipeFromLog(auditPath, { session, name: base, ownOnly: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = writeNew(dir, base, recipeText(saved));
  return {
    path,
    steps: saved.recipe.steps.length,
    writes: writeSteps(saved.recipe).length,
    notes: saved.notes,
  };
}

function writeNew(dir: string, base: string, text: string): string {
  for (let n = 1; n <= 100; n++) {
    const path = join(dir, `${n === 1 ? base : `${base}-${n}`}.json`);
    try {
      // wx: fails on a file already there (or a link put in its place) instead of replacing it.
      writeFileSync(path, text, { flag: 'wx', mode: 0o600 });
      return path;
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
    }
  }
  throw new TabwardError(
    'bad_input',
    `${dir} already has 100 recipes named ${base}.`,
    'Choose another name, or remove old ones.',
  );
}
