// The recipe format, version 1: the one definition from which validation, the published JSON Schema
// (schema/recipe.v1.json, GET /schema) and the TypeScript types all come. Compatible with the source article's
// shape: {url, steps: [{action: goto | type | click | waitFor, ...}], extract}, and Webhands' forms: a literal
// `secret: true` text and extraction as a list of named fields.

import { z } from 'zod';
import { pasteKey, pasteRefused } from '../core/activatingKeys.ts';

/** The shortest literal secret tabward can mask (core/redact.ts leaves shorter values alone). */
export const minSecretLength = 3;

export const stepActions = [
  'goto',
  'type',
  'click',
  'waitFor',
  'select',
  'press',
  'scroll',
  'waitForUrl',
  'waitForNetworkIdle',
  'download',
];

/**
 * The schemas, built on first use: zod takes about 20 ms to build them, which every tabward command paid at start
 * (`tabward mcp` before its first reply) though most never read a recipe.
 */
function buildRecipeSchemas() {
  const selector = z.string().min(1).describe('CSS selector');
  /** Steps find elements through Playwright, which also takes its role selector (what saved recipes use). */
  const stepSelector = z
    .string()
    .min(1)
    .describe('CSS selector, or a Playwright role selector such as role=button[name="Save"]');
  const timeoutMs = z.number().int().min(1).max(120_000).optional().describe('milliseconds, default 15000');
  const write = z
    .boolean()
    .optional()
    .describe('this step may change something (or reach a sensitive page); the run needs confirm: true');

  const allowHttpError = z
    .boolean()
    .optional()
    .describe('the page may answer with an HTTP status of 400 or more (else the step fails)');

  const goto = z.strictObject({
    action: z.literal('goto'),
    url: z.string().min(1).describe('absolute, or relative to the recipe url'),
    allowHttpError,
    write,
  });
  const type = z
    .strictObject({
      action: z.literal('type'),
      selector: stepSelector,
      text: z.string().optional().describe('literal text'),
      secret: z
        .union([z.string().min(1), z.boolean()])
        .optional()
        .describe(
          'name of a declared secret (--secrets file or --secret-env); or true: the text is sensitive (masked ' +
            "everywhere, typed only on the recipe's own origin)",
        ),
      write,
    })
    .superRefine((step, context) => {
      const named = typeof step.secret === 'string';
      if (named === (step.text !== undefined))
        context.addIssue({
          code: 'custom',
          message: 'give exactly one of text or secret (a name), or text with secret: true',
        });
      // The redactor cannot hide one or two characters in page text without mangling it: fail closed.
      if (step.secret === true && step.text !== undefined && step.text.length < minSecretLength)
        context.addIssue({
          code: 'custom',
          path: ['text'],
          message: `a secret text needs at least ${minSecretLength} characters to be masked`,
        });
    });
  const click = z.strictObject({
    action: z.literal('click'),
    selector: stepSelector,
    write,
  });
  const waitFor = z.strictObject({
    action: z.literal('waitFor'),
    selector: stepSelector,
    state: z.enum(['visible', 'attached', 'hidden']).optional(),
    timeoutMs,
  });
  const select = z.strictObject({
    action: z.literal('select'),
    selector: stepSelector,
    value: z.string(),
    write,
  });
  const press = z.strictObject({
    action: z.literal('press'),
    key: z
      .string()
      .min(1)
      .refine((key) => !pasteKey(key), pasteRefused)
      .describe('e.g. Enter, Tab, Control+A'),
    selector: stepSelector.optional(),
    write,
  });
  const scroll = z.strictObject({
    action: z.literal('scroll'),
    selector: stepSelector.optional(),
    to: z.enum(['top', 'bottom']).optional(),
  });
  const waitForUrl = z.strictObject({
    action: z.literal('waitForUrl'),
    url: z.string().min(1).describe('glob, e.g. **/orders*'),
    timeoutMs,
  });
  const waitForNetworkIdle = z.strictObject({ action: z.literal('waitForNetworkIdle'), timeoutMs });
  const column = z.union([
    z.string().min(1).describe('the column header'),
    z.strictObject({
      column: z.string().min(1).describe('the column header'),
      required: z.boolean().optional().describe('fail the run when a row has no value there'),
    }),
  ]);
  const download = z
    .strictObject({
      action: z.literal('download'),
      selector: stepSelector.optional().describe('click this and wait for the file it downloads'),
      url: z.string().min(1).optional().describe('or fetch this (absolute, or relative to where the run is)'),
      as: z
        .string()
        .regex(/^[A-Za-z_][\w-]*$/)
        .optional()
        .describe('its name under "files" in the result (default: file1, file2, …)'),
      fields: z
        .record(z.string(), column)
        .optional()
        .describe('CSV, TSV, JSON or XLSX rows mapped to these names (else every column, as it is)'),
      required: z.boolean().optional().describe('fail the run when the file has no rows'),
      keepFile: z.boolean().optional().describe('put the file itself in the result, base64'),
      timeoutMs,
      write,
    })
    .superRefine((step, context) => {
      if ((step.selector === undefined) === (step.url === undefined))
        context.addIssue({ code: 'custom', message: 'give exactly one of selector or url' });
    });

  const stepSchema = z.discriminatedUnion('action', [
    goto,
    type,
    click,
    waitFor,
    select,
    press,
    scroll,
    waitForUrl,
    waitForNetworkIdle,
    download,
  ]);

  const required = z
    .boolean()
    .optional()
    .describe('fail the run when the selector matches nothing (else the result carries a warning)');
  const attribute = z.string().min(1).optional().describe('read this attribute instead of the text');
  const all = z.boolean().optional().describe('every match, as a list');
  const field = z.union([selector, z.strictObject({ selector, attribute, all, required })]);
  const rowsField = z.strictObject({
    rows: selector.describe('one element per record'),
    fields: z.record(z.string(), field).describe('selectors relative to each row'),
    required: required.describe('fail the run when no row matches (else the result carries a warning)'),
  });
  const fieldMap = z.record(z.string(), z.union([field, rowsField]));

  /** Webhands' form, a list of named fields ({name, selector, attr?}), read as the map form. */
  const fieldList = z
    .array(
      z.strictObject({
        name: z.string().min(1),
        selector,
        attr: attribute.describe("Webhands' name for attribute"),
        attribute,
        all,
        required,
      }),
    )
    .min(1)
    .superRefine((list, context) => {
      const seen = new Set<string>();
      for (const [index, entry] of list.entries()) {
        if (seen.has(entry.name))
          context.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: `"${entry.name}" is named twice`,
          });
        if (entry.attr !== undefined && entry.attribute !== undefined)
          context.addIssue({ code: 'custom', path: [index], message: 'give attr or attribute, not both' });
        seen.add(entry.name);
      }
    })
    .transform(
      (list): z.infer<typeof fieldMap> =>
        Object.fromEntries(
          list.map(({ name, selector, attr, attribute, all, required }) => {
            const read = attribute ?? attr;
            return [
              name,
              {
                selector,
                ...(read !== undefined ? { attribute: read } : {}),
                ...(all !== undefined ? { all } : {}),
                ...(required !== undefined ? { required } : {}),
              },
            ];
          }),
        ),
    );

  const fieldsExtract = z.strictObject({
    fields: z.union([fieldMap, fieldList]),
    paginate: z
      .strictObject({
        next: selector.describe('the "next page" link or button; extraction repeats on each page'),
        maxPages: z.number().int().min(1).max(100).optional().describe('default 10'),
      })
      .optional(),
  });
  const promptExtract = z.strictObject({
    prompt: z.string().min(1),
    schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema the answer must match'),
    maxChars: z
      .number()
      .int()
      .min(500)
      .max(200_000)
      .optional()
      .describe('page text sent to the model, default 24000'),
  });

  const recipeSchema = z.strictObject({
    $schema: z.string().optional(),
    version: z.literal(1).optional(),
    name: z.string().optional(),
    description: z
      .string()
      .optional()
      .describe('for people: what the recipe does, where it came from (tabward does not act on it)'),
    url: z.string().min(1).describe('where the run starts'),
    allowHttpError: allowHttpError.describe(
      'the start page may answer with an HTTP status of 400 or more (else the run fails)',
    ),
    steps: z.array(stepSchema).max(200).default([]),
    extract: z.union([fieldsExtract, promptExtract]).optional(),
  });
  return { recipeSchema, stepSchema, field, rowsField, fieldsExtract, promptExtract };
}

type RecipeSchemas = ReturnType<typeof buildRecipeSchemas>;
let built: RecipeSchemas | undefined;

export function recipeSchemas(): RecipeSchemas {
  built ??= buildRecipeSchemas();
  return built;
}

export type Recipe = z.infer<RecipeSchemas['recipeSchema']>;
export type RecipeStep = z.infer<RecipeSchemas['stepSchema']>;
export type FieldSpec = z.infer<RecipeSchemas['field']>;
export type RowsSpec = z.infer<RecipeSchemas['rowsField']>;
export type FieldsExtract = z.infer<RecipeSchemas['fieldsExtract']>;
export type PromptExtract = z.infer<RecipeSchemas['promptExtract']>;

export function recipeJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(recipeSchemas().recipeSchema, { io: 'input' }),
    $id: 'https://tabward.dev/schema/recipe.v1.json',
    title: 'tabward recipe, version 1',
  };
}
