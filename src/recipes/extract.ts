// The extract part of a recipe: CSS fields (optionally across pages of a paginated list) or a prompt. A selector
// that matched nothing is never a silent null: the result carries a warning, or the run fails when the field
// says `required`.

import type { RecipePage } from '../browser/recipePage.ts';
import { TabwardError } from '../core/errors.ts';
import type { ModelConfig } from '../llm/modelClient.ts';
import { extractByPrompt } from './promptExtract.ts';
import type { FieldsExtract, Recipe } from './recipeSchema.ts';

type Extract = NonNullable<Recipe['extract']>;

export interface Extraction {
  readonly data: unknown;
  readonly warnings: string[];
}

export async function extractData(
  page: RecipePage,
  extract: Extract | undefined,
  model: ModelConfig | undefined,
): Promise<Extraction> {
  if (!extract) return { data: null, warnings: [] };
  if ('prompt' in extract)
    return {
      data: await extractByPrompt(await page.text(extract.maxChars ?? 24_000), extract, model),
      warnings: [],
    };
  return extractFields(page, extract);
}

/** Lists (rows and `all` fields) from every page are concatenated; single values come from the first page. */
async function extractFields(page: RecipePage, extract: FieldsExtract): Promise<Extraction> {
  const merged: Record<string, unknown> = {};
  const misses = new Misses(extract.fields);
  const maxPages = extract.paginate ? (extract.paginate.maxPages ?? 10) : 1;
  for (let pageNumber = 1; pageNumber <= maxPages; pageNumber++) {
    const { data, missing } = await page.extract(extract.fields);
    misses.add(missing, pageNumber, merged);
    for (const [key, value] of Object.entries(data)) {
      const before = merged[key];
      if (Array.isArray(before) && Array.isArray(value)) merged[key] = [...before, ...value];
      else if (!(key in merged)) merged[key] = value;
    }
    const next = extract.paginate?.next;
    if (!next || pageNumber === maxPages || !(await page.has(next))) break;
    await page.click(next);
  }
  return { data: merged, warnings: misses.settle(merged) };
}

/**
 * What matched nothing, over every page read: a single field on the first page (its value comes from there), a
 * list field or a rows selector on all of them, a field inside a row in that row.
 */
class Misses {
  /** Per field: on how many pages it matched nothing, and whether the first was one of them. */
  private readonly fieldPages = new Map<string, number>();
  private readonly firstPage = new Set<string>();
  /** Per field inside rows ("key\u0000name"): the rows, counted over all pages, where it matched nothing. */
  private readonly inRows = new Map<string, number[]>();
  private pages = 0;

  constructor(private readonly fields: FieldsExtract['fields']) {}

  add(missing: readonly string[], pageNumber: number, before: Record<string, unknown>): void {
    this.pages = pageNumber;
    for (const path of missing) {
      const inner = /^(.*)\[(\d+)\]\.(.*)$/.exec(path);
      if (!inner) {
        this.fieldPages.set(path, (this.fieldPages.get(path) ?? 0) + 1);
        if (pageNumber === 1) this.firstPage.add(path);
        continue;
      }
      const [, key = '', row = '0', name = ''] = inner;
      const earlier = Array.isArray(before[key]) ? (before[key] as unknown[]).length : 0;
      const id = `${key}\u0000${name}`;
      this.inRows.set(id, [...(this.inRows.get(id) ?? []), earlier + Number(row)]);
    }
  }

  /** Warnings for the result; a `required` field that matched nothing fails the run instead. */
  settle(merged: Record<string, unknown>): string[] {
    const warnings: string[] = [];
    for (const [key, count] of this.fieldPages) {
      const spec = this.fields[key];
      if (!spec) continue;
      const list = typeof spec === 'object' && ('rows' in spec || spec.all === true);
      // A single value is read from the first page only; a list is empty only if every page had nothing.
      if (list ? count < this.pages : !this.firstPage.has(key)) continue;
      const selector = typeof spec === 'string' ? spec : 'rows' in spec ? spec.rows : spec.selector;
      const what = list ? 'an empty list' : 'null';
      if (typeof spec === 'object' && spec.required === true)
        throw missingRequired(`field "${key}" (${selector}) matched nothing on the page`);
      warnings.push(
        `extract: field "${key}" (${selector}) matched nothing on the page; its value is ${what}.`,
      );
    }
    for (const [id, rows] of this.inRows) {
      const [key = '', name = ''] = id.split('\u0000');
      const spec = this.fields[key];
      const inner = spec && typeof spec === 'object' && 'rows' in spec ? spec.fields[name] : undefined;
      if (inner === undefined) continue;
      const selector = typeof inner === 'string' ? inner : inner.selector;
      const total = Array.isArray(merged[key]) ? (merged[key] as unknown[]).length : rows.length;
      const listed = rows.slice(0, 10).join(', ') + (rows.length > 10 ? ', …' : '');
      const place = `field "${key}[].${name}" (${selector}) matched nothing in ${rows.length} of ${total} rows (${listed})`;
      if (typeof inner === 'object' && inner.required === true) throw missingRequired(place);
      warnings.push(`extract: ${place}; its value there is null.`);
    }
    return warnings;
  }
}

function missingRequired(place: string): TabwardError {
  return new TabwardError(
    'not_found',
    `extract: required ${place}.`,
    'Check the selector against the page (the screenshot shows it), or drop "required" to get the value with a warning.',
  );
}

export function describeExtract(extract: Extract | undefined): string {
  if (!extract) return 'no extraction';
  if ('prompt' in extract) return `ask the model: ${extract.prompt.slice(0, 80)}`;
  const pages = extract.paginate
    ? ` across up to ${extract.paginate.maxPages ?? 10} pages (next: ${extract.paginate.next})`
    : '';
  return `extract fields ${Object.keys(extract.fields).join(', ')}${pages}`;
}
