// A recipe's `download` step's file as part of the run's result (docs/recipes.md, "Downloads"): its name, size and
// type (sniffed from its bytes, never the site's headers); CSV, TSV, JSON and XLSX read into rows (csv-parse,
// read-excel-file), mapped to the step's `fields` and checked like extraction's `required`; the file itself, base64,
// when the step keeps it. The file never lands anywhere but the run's result.

import { readFileSync, statSync } from 'node:fs';
import { parse as parseCsv } from 'csv-parse/sync';
import readXlsxFile from 'read-excel-file/node';
import { safeName, sniffType } from '../browser/downloads.ts';
import { TabwardError } from '../core/errors.ts';
import type { RecipeStep } from './recipeSchema.ts';

export interface DownloadedFile {
  readonly name: string;
  readonly bytes: number;
  readonly type: string;
  /** Each row a record of column → value (or of the step's field names). */
  readonly rows?: Record<string, unknown>[];
  /** The file itself, base64, when the step said keepFile. */
  readonly file?: string;
}

type DownloadStep = Extract<RecipeStep, { action: 'download' }>;

/** The most a recipe's download may weigh. */
export const maxDownloadBytes = 50 * 1024 * 1024;
const xlsxType = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export async function readDownload(
  step: DownloadStep,
  suggested: string,
  path: string,
  where: string,
): Promise<DownloadedFile> {
  const bytes = statSync(path).size;
  if (bytes > maxDownloadBytes)
    throw new TabwardError(
      'bad_input',
      `${where}: the file is ${bytes} bytes, over the ${maxDownloadBytes}-byte cap of a recipe's download.`,
    );
  const content = readFileSync(path);
  const type = sniffType(content.subarray(0, 64 * 1024), suggested);
  const rows = await rowsOf(content, type, where);
  const mapped =
    rows && step.fields
      ? rows.map((row, at) => mapRow(row, step.fields ?? {}, `${where}: row ${at + 1}`))
      : rows;
  if (step.required && (!mapped || mapped.length === 0))
    throw new TabwardError(
      'not_found',
      `${where}: the file (${type}) has no rows${mapped ? '' : ' that tabward can read'}, and the step is required.`,
    );
  return {
    name: safeName(suggested),
    bytes,
    type,
    ...(mapped ? { rows: mapped } : {}),
    ...(step.keepFile ? { file: content.toString('base64') } : {}),
  };
}

/** Rows of the formats an export comes in; undefined for any other file. */
async function rowsOf(
  content: Buffer,
  type: string,
  where: string,
): Promise<Record<string, unknown>[] | undefined> {
  try {
    if (type === 'text/csv' || type === 'text/tab-separated-values')
      return parseCsv(content, {
        columns: true,
        bom: true,
        skip_empty_lines: true,
        relax_column_count: true,
        ...(type === 'text/tab-separated-values' ? { delimiter: '\t' } : { delimiter: [',', ';'] }),
      }) as Record<string, unknown>[];
    if (type === 'application/json') return jsonRows(JSON.parse(content.toString('utf8')));
    if (type === xlsxType) {
      const [first] = await readXlsxFile(content);
      const [header, ...data] = first?.data ?? [];
      if (!header) return [];
      const names = header.map((cell) => String(cell ?? ''));
      return data.map((row) => Object.fromEntries(names.map((name, at) => [name, row[at] ?? null])));
    }
  } catch (error) {
    throw new TabwardError(
      'bad_input',
      `${where}: the file looks like ${type} but cannot be read as such (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  return undefined;
}

/** A JSON array of records, or an object holding one (`{"rows": [...]}`, `{"data": [...]}`), or one record. */
function jsonRows(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.filter((row) => typeof row === 'object' && row !== null);
  if (typeof value === 'object' && value !== null) {
    const list = Object.values(value).find(Array.isArray);
    return list ? jsonRows(list) : [value as Record<string, unknown>];
  }
  return [];
}

function mapRow(
  row: Record<string, unknown>,
  fields: NonNullable<DownloadStep['fields']>,
  where: string,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, spec]) => {
      const column = typeof spec === 'string' ? spec : spec.column;
      const value = row[column];
      const missing = value === undefined || value === null || value === '';
      if (missing && typeof spec === 'object' && spec.required)
        throw new TabwardError(
          'not_found',
          `${where}: no value in column "${column}" (field ${name} is required). Columns: ${Object.keys(row).join(', ')}.`,
        );
      return [name, missing ? null : value];
    }),
  );
}
