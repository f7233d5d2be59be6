// The extract part of a recipe: CSS fields (optionally across pages of a paginated list) or a prompt.

import type { RecipePage } from '../browser/recipePage.ts';
import type { ModelConfig } from '../llm/modelClient.ts';
import { extractByPrompt } from './promptExtract.ts';
import type { FieldsExtract, Recipe } from './recipeSchema.ts';

type Extract = NonNullable<Recipe['extract']>;

export async function extractData(
  page: RecipePage,
  extract: Extract | undefined,
  model: ModelConfig | undefined,
): Promise<unknown> {
  if (!extract) return null;
  if ('prompt' in extract)
    return extractByPrompt(await page.text(extract.maxChars ?? 24_000), extract, model);
  return extractFields(page, extract);
}

/** Lists (rows and `all` fields) from every page are concatenated; single values come from the first page. */
async function extractFields(page: RecipePage, extract: FieldsExtract): Promise<Record<string, unknown>> {
  const merged: Record<string, unknown> = {};
  const maxPages = extract.paginate ? (extract.paginate.maxPages ?? 10) : 1;
  for (let pageNumber = 1; pageNumber <= maxPages; pageNumber++) {
    const data = await page.extract(extract.fields);
    for (const [key, value] of Object.entries(data)) {
      const before = merged[key];
      if (Array.isArray(before) && Array.isArray(value)) merged[key] = [...before, ...value];
      else if (!(key in merged)) merged[key] = value;
    }
    const next = extract.paginate?.next;
    if (!next || pageNumber === maxPages || !(await page.has(next))) break;
    await page.click(next);
  }
  return merged;
}

export function describeExtract(extract: Extract | undefined): string {
  if (!extract) return 'no extraction';
  if ('prompt' in extract) return `ask the model: ${extract.prompt.slice(0, 80)}`;
  const pages = extract.paginate
    ? ` across up to ${extract.paginate.maxPages ?? 10} pages (next: ${extract.paginate.next})`
    : '';
  return `extract fields ${Object.keys(extract.fields).join(', ')}${pages}`;
}
