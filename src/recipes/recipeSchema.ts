// The recipe format, version 1: the one definition from which validation, the published JSON Schema
// (schema/recipe.v1.json, GET /schema) and the TypeScript types all come. Compatible with the source article's
// shape: {url, steps: [{action: goto | type | click | waitFor, ...}], extract}.

import { z } from 'zod';

const selector = z.string().min(1).describe('CSS selector');
const timeoutMs = z.number().int().min(1).max(120_000).optional().describe('milliseconds, default 15000');
const write = z
  .boolean()
  .optional()
  .describe('this step may change something (or reach a sensitive page); the run needs confirm: true');

const goto = z.strictObject({
  action: z.literal('goto'),
  url: z.string().min(1).describe('absolute, or relative to the recipe url'),
  write,
});
const type = z
  .strictObject({
    action: z.literal('type'),
    selector,
    text: z.string().optional().describe('literal text'),
    secret: z
      .string()
      .min(1)
      .optional()
      .describe('name of a declared secret (--secrets file or --secret-env)'),
    write,
  })
  .refine((step) => (step.text === undefined) !== (step.secret === undefined), {
    message: 'give exactly one of text or secret',
  });
const click = z.strictObject({
  action: z.literal('click'),
  selector,
  write,
});
const waitFor = z.strictObject({
  action: z.literal('waitFor'),
  selector,
  state: z.enum(['visible', 'attached', 'hidden']).optional(),
  timeoutMs,
});
const select = z.strictObject({ action: z.literal('select'), selector, value: z.string(), write });
const press = z.strictObject({
  action: z.literal('press'),
  key: z.string().min(1).describe('e.g. Enter, Tab, Control+A'),
  selector: selector.optional(),
  write,
});
const scroll = z.strictObject({
  action: z.literal('scroll'),
  selector: selector.optional(),
  to: z.enum(['top', 'bottom']).optional(),
});
const waitForUrl = z.strictObject({
  action: z.literal('waitForUrl'),
  url: z.string().min(1).describe('glob, e.g. **/orders*'),
  timeoutMs,
});
const waitForNetworkIdle = z.strictObject({ action: z.literal('waitForNetworkIdle'), timeoutMs });

export const stepSchema = z.discriminatedUnion('action', [
  goto,
  type,
  click,
  waitFor,
  select,
  press,
  scroll,
  waitForUrl,
  waitForNetworkIdle,
]);
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
];

const field = z.union([
  selector,
  z.strictObject({
    selector,
    attribute: z.string().min(1).optional().describe('read this attribute instead of the text'),
    all: z.boolean().optional().describe('every match, as a list'),
  }),
]);
const rowsField = z.strictObject({
  rows: selector.describe('one element per record'),
  fields: z.record(z.string(), field).describe('selectors relative to each row'),
});

const fieldsExtract = z.strictObject({
  fields: z.record(z.string(), z.union([field, rowsField])),
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

export const recipeSchema = z.strictObject({
  $schema: z.string().optional(),
  version: z.literal(1).optional(),
  name: z.string().optional(),
  url: z.string().min(1).describe('where the run starts'),
  steps: z.array(stepSchema).max(200).default([]),
  extract: z.union([fieldsExtract, promptExtract]).optional(),
});

export type Recipe = z.infer<typeof recipeSchema>;
export type RecipeStep = z.infer<typeof stepSchema>;
export type FieldSpec = z.infer<typeof field>;
export type RowsSpec = z.infer<typeof rowsField>;
export type FieldsExtract = z.infer<typeof fieldsExtract>;
export type PromptExtract = z.infer<typeof promptExtract>;

export function recipeJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(recipeSchema, { io: 'input' }),
    $id: 'https://tabward.dev/schema/recipe.v1.json',
    title: 'tabward recipe, version 1',
  };
}
