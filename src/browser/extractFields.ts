// Extraction by CSS fields, run inside the page in one round trip: text or an attribute, the first match or
// all of them, and lists of records (a row selector with fields relative to each row).

export type SimpleField =
  | string
  | {
      readonly selector: string;
      readonly attribute?: string | undefined;
      readonly all?: boolean | undefined;
      readonly required?: boolean | undefined;
    };
export type FieldsSpec = Readonly<
  Record<
    string,
    | SimpleField
    | {
        readonly rows: string;
        readonly fields: Readonly<Record<string, SimpleField>>;
        readonly required?: boolean | undefined;
      }
  >
>;

export interface Extracted {
  readonly data: Record<string, unknown>;
  /**
   * Where a selector matched nothing, so that a null or an empty list is never silent: `name` for a field (or
   * a rows selector with no row), `name[3].inner` for a field missing in one row.
   */
  readonly missing: string[];
}

/** The DOM surface extraction reads (no DOM types in the Node tsconfig). */
interface DomNode {
  readonly innerText?: string;
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): Iterable<DomNode>;
  readonly [property: string]: unknown;
}

/**
 * Runs in the page; self-contained, because Playwright sends its source text. No named inner functions: the
 * tsx/esbuild transform wraps those in a `__name` helper that does not exist in the page.
 */
export function extractInPage(spec: FieldsSpec): Extracted {
  const doc = (globalThis as unknown as { document: DomNode }).document;
  const out: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const [key, field] of Object.entries(spec)) {
    const rows = typeof field === 'object' && 'rows' in field ? field : undefined;
    const roots: DomNode[] = rows ? [...doc.querySelectorAll(rows.rows)] : [doc];
    const specs: [string, SimpleField][] = rows ? Object.entries(rows.fields) : [['', field as SimpleField]];
    const records: Record<string, unknown>[] = [];
    if (rows && roots.length === 0) missing.push(key);
    for (const [rowIndex, root] of roots.entries()) {
      const record: Record<string, unknown> = {};
      for (const [name, inner] of specs) {
        const wanted =
          typeof inner === 'string' ? { selector: inner, attribute: undefined, all: false } : inner;
        const values: (string | null)[] = [];
        for (const el of root.querySelectorAll(wanted.selector)) {
          const attribute = wanted.attribute;
          // href and src read as absolute URLs, the way a person would copy them.
          const property = attribute ? el[attribute] : undefined;
          if (!attribute) values.push((el.innerText ?? el.textContent ?? '').trim());
          else if ((attribute === 'href' || attribute === 'src') && typeof property === 'string')
            values.push(property);
          else values.push(el.getAttribute(attribute));
          if (!wanted.all) break;
        }
        if (values.length === 0) missing.push(rows ? `${key}[${rowIndex}].${name}` : key);
        record[name] = wanted.all ? values : (values[0] ?? null);
      }
      records.push(record);
    }
    out[key] = rows ? records : records[0]?.[''];
  }
  return { data: out, missing };
}
